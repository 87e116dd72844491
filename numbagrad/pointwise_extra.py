"""torch's pointwise functions above the ops layer: heaviside, recorded as torch's
``NotImplemented`` node (its backward raises torch's error), and igamma / igammac,
torch.special's gammainc / gammaincc under their torch names."""

import numpy as np

from .ops.elementwise.forward import torch_layout
from .ops.elementwise.math_api import _promote, need_tensor
from .ops.linalg.node import not_differentiable, record_node
from .ops.out_api import into
from .special import gammainc, gammaincc
from .tensor import _make


def _heaviside_values(x, v):
    out = np.where(x == 0, v, (x > 0).astype(x.dtype)).astype(x.dtype)
    return torch_layout(out, (x, v)) if out.ndim else out[()]


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
    value = _heaviside_values(input._data, values._data)
    if input.requires_grad or values.requires_grad:  # torch's NotImplemented node
        return record_node("NotImplemented", [value], [input, values],
                           not_differentiable("heaviside"))[0]
    return _make(value)


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
