"""quantile and nanquantile, composed as torch composes them: sort, gather at ranks, lerp, then
an in-place squeeze (SqueezeBackward4): the same values, gradients and last node."""

import numpy as np

from ...engine.registry import Sample
from ...tensor import Tensor, _make
from ..elementwise.pointwise import where
from ..index.indexing import gather
from ..shape.inplace import SQUEEZE_DIM_
from ..shape.movement import _wrap, as_view, permute, reshape, transpose, unsqueeze
from .select import sort

# torch's squeeze_(dim) of the result: the in-place view op's node (SqueezeBackward4)
SQUEEZE_INPLACE = SQUEEZE_DIM_
SQUEEZE_INPLACE.samples += [
    Sample(((3, 4),), {"q": 0.3}, "lib.quantile(x0, **kw)"),
    Sample(((3, 4),), {"q": 0.5, "dim": 1, "keepdim": True}, "lib.quantile(x0, **kw)"),
    Sample(((2, 5),), {"q": 0.25, "dim": 0, "interpolation": "midpoint"},
           "lib.nanquantile(x0, **kw)"),
    Sample(((6,),), {"q": 0.4, "interpolation": "nearest"}, "lib.quantile(x0, **kw)")]

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")



def _checked_q(x, q, name):
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not x.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qs = np.asarray(q._data).reshape(-1)
        if np.any((qs < 0) | (qs > 1)):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        return qs, q.ndim == 0
    if not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    return np.asarray([q]), True


def _quantile(x, q, dim, keepdim, interpolation, ignore_nan):
    name = "nanquantile" if ignore_nan else "quantile"
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if x.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    qs, scalar_q = _checked_q(x, q, name)
    if interpolation not in _MODES:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    nd = x.ndim
    if dim is None:
        lines = reshape(x, (1,) * nd + (x.numel(),))
        reduced = list(range(nd))
    else:
        d = _wrap(dim, nd)
        lines = transpose(unsqueeze(x, -1), d, -1) if nd else reshape(x, (1,))
        reduced = [d] if nd else []
    s = sort(lines, -1).values  # NaN sorts last
    dt = np.asarray(x._data).dtype
    data = np.asarray(s._data)
    n = data.shape[-1]
    nan = np.isnan(data[..., -1:])
    if ignore_nan:
        last = (n - np.isnan(data).sum(-1, keepdims=True) - 1).astype(dt)
        ranks = np.maximum(qs.astype(dt) * last, 0)
    else:
        ranks = np.where(nan, dt.type(n - 1), qs.astype(dt) * dt.type(n - 1))
    if interpolation in ("lower", "higher", "nearest"):
        pick = {"lower": np.floor, "higher": np.ceil, "nearest": np.round}[interpolation]
        out = gather(s, -1, _make(pick(ranks).astype(np.int64)))
    else:
        below = ranks.astype(np.int64)
        above = np.ceil(ranks).astype(np.int64)
        w = np.full(ranks.shape, 0.5, dt) if interpolation == "midpoint" else \
            (ranks - below.astype(dt)).astype(dt)
        lo, hi = gather(s, -1, _make(below)), gather(s, -1, _make(above))
        # torch's lerp: from the nearer end, by the weight from that end
        step = hi - lo
        wt = _make(w)
        out = where(_make(w < 0.5), lo + step * wt, hi - step * _make((1 - w).astype(dt)))
    kept = out.shape[:-1]
    if scalar_q:
        final = tuple(s for i, s in enumerate(kept) if keepdim or i not in reduced)
    else:
        out = permute(out, (out.ndim - 1,) + tuple(range(out.ndim - 1)))
        final = (len(qs),) + tuple(s for i, s in enumerate(kept) if keepdim or i not in reduced)
    return as_view(SQUEEZE_INPLACE, out, lambda a: a.reshape(final))


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles of all elements or along ``dim``, interpolated by ``interpolation``.

    Same as ``torch.quantile``.
    """
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles as ``quantile`` gives them, ignoring NaN.

    Same as ``torch.nanquantile``.
    """
    return _quantile(input, q, dim, keepdim, interpolation, True)

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"nanquantile": "one", "quantile": "one"}
