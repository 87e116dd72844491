"""torch's pointwise functions made with autograd.Function (above the ops layer): heaviside,
whose node's backward raises as torch's ``NotImplemented`` node does, and igamma / igammac,
torch.special's gammainc / gammaincc under their torch names."""

import numpy as np

from .autograd.function import Function
from .ops.math_api import _promote, need_tensor
from .ops.out_api import into
from .ops.pointwise import torch_layout
from .special import gammainc, gammaincc
from .tensor import _make


class _Heaviside(Function):
    """heaviside's value; its backward raises torch's error (torch records a NotImplemented
    node for an input that requires grad)."""

    @staticmethod
    def forward(ctx, a, b):
        return _heaviside_values(a, b)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


def _heaviside_values(a, b):
    x, v = a._data, b._data
    out = np.where(x == 0, v, (x > 0).astype(x.dtype)).astype(x.dtype)
    return _make(torch_layout(out, (x, v)) if out.ndim else out[()])


def heaviside(input, values, *, out=None):  # noqa: A002
    """Element-wise Heaviside step: 0 below 0, 1 above, ``values`` at 0.

    Same as ``torch.heaviside``: both tensors of one dtype; no derivative.
    """
    if out is not None:
        return into("heaviside", out, heaviside, input, values)
    need_tensor(input, "heaviside")
    need_tensor(values, "heaviside", "values", 2)
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    _promote(input, values)  # torch's broadcast error
    if input.requires_grad or values.requires_grad:
        out = _Heaviside.apply(input, values)
        if out._tape is not None and out._node >= 0:  # torch's node name
            out._tape.names[out._node] = "NotImplemented"
        return out
    return _heaviside_values(input, values)


def igamma(input, other, *, out=None):  # noqa: A002
    """Regularized lower incomplete gamma P(input, other); differentiable in ``other`` only.

    Same as ``torch.igamma`` (``torch.special.gammainc``).
    """
    if out is not None:
        return into("igamma", out, igamma, input, other)
    return gammainc(input, other)


def igammac(input, other, *, out=None):  # noqa: A002
    """Regularized upper incomplete gamma Q(input, other); differentiable in ``other`` only.

    Same as ``torch.igammac`` (``torch.special.gammaincc``).
    """
    if out is not None:
        return into("igammac", out, igammac, input, other)
    return gammaincc(input, other)


__all__ = ["heaviside", "igamma", "igammac"]

# Tensor methods this module adds (bound in numbagrad/_inplace_forms.py)
TENSOR_METHODS = {name: globals()[name] for name in __all__}
