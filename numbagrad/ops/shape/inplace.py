"""The view nodes of the in-place view ops (squeeze_, unsqueeze_, t_, transpose_): torch
names them apart from the out-of-place ones (SqueezeBackward3, TBackward1, ...). Each
function returns the recorded view; numbagrad/_methods.py moves the tensor onto it."""

import numpy as np

from ...engine.registry import Sample, defop, vjp_rule
from ..vjp import _reshape_vjp, _view_vjp
from .movement import _transposed, _view_numpy, _wrap, as_view


def _samples(*calls, shape=(1, 3, 1)):
    return [Sample((shape,), {}, c) for c in calls]


SQUEEZE_ALL_ = defop("squeeze_", "SqueezeBackward3", 1, replay="reshape_fw", kernel="reshape_bw",
                     samples=_samples("(x0 * 1).squeeze_()"))
SQUEEZE_DIM_ = defop("squeeze_dim_", "SqueezeBackward4", 1, replay="reshape_fw",
                     kernel="reshape_bw", samples=_samples("(x0 * 1).squeeze_(-1)"))
SQUEEZE_DIMS_ = defop("squeeze_dims_", "SqueezeBackward5", 1, replay="reshape_fw",
                      kernel="reshape_bw", samples=_samples("(x0 * 1).squeeze_((0, 2))"))
UNSQUEEZE_ = defop("unsqueeze_", "UnsqueezeBackward1", 1, replay="reshape_fw",
                   kernel="reshape_bw", samples=_samples("(x0 * 1).unsqueeze_(1)"))
T_ = defop("t_", "TBackward1", 1, replay="view_fw", kernel="view_bw",
           samples=_samples("(x0 * 1).t_()", shape=(2, 3)))
TRANSPOSE_ = defop("transpose_", "TransposeBackward1", 1, replay="view_fw", kernel="view_bw",
                   samples=_samples("(x0 * 1).transpose_(0, 2)", shape=(2, 3, 4)))
T_.numpy_bw = TRANSPOSE_.numpy_bw = _view_numpy
vjp_rule(SQUEEZE_ALL_, SQUEEZE_DIM_, SQUEEZE_DIMS_, UNSQUEEZE_)(_reshape_vjp)
vjp_rule(T_, TRANSPOSE_)(_view_vjp)


def squeezed(x, dim=None):
    """x.squeeze_(dim)'s view of x (torch's checks) and its view function."""
    if dim is None:
        keep = [s for s in x.shape if s != 1]
        op = SQUEEZE_ALL_
    else:
        dims = []
        for d in (dim,) if isinstance(dim, int) else dim:
            d = _wrap(d, x.ndim)
            if d in dims:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            dims.append(d)
        keep = [s for i, s in enumerate(x.shape) if not (i in dims and s == 1)]
        op = SQUEEZE_DIM_ if isinstance(dim, int) else SQUEEZE_DIMS_
    return _viewed(op, x, lambda a: a.reshape(keep))


def unsqueezed(x, dim):
    d = _wrap(dim, x.ndim + 1)
    return _viewed(UNSQUEEZE_, x, lambda a: np.expand_dims(a, d))


def transposed(x, dim0, dim1):
    d0, d1 = _wrap(dim0, x.ndim), _wrap(dim1, x.ndim)
    if x.ndim == 0:
        return _viewed(TRANSPOSE_, x, lambda a: a)
    return _viewed(TRANSPOSE_, x, lambda a: np.swapaxes(a, d0, d1))


def t_view(x):
    if x.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return _viewed(T_, x, _transposed)


def _viewed(op, x, fn):
    return as_view(op, x, fn), fn
