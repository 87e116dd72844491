"""Selections: sort, topk, kthvalue, median, nanmedian, mode, cummax, cummin. Their values are
the input at positions the op picks (scan_kernels.select_positions, the one routine eager and
the replay both run), so their derivative is a scatter of the gradient to those positions."""

from collections import namedtuple

import numpy as np

from ...engine.record import record
from ...engine.registry import Sample, defop, vjp_rule
from ...tensor import Tensor, _make  # noqa: F401
from .. import vjp  # noqa: F401 - vjp attaches max()'s rule
from ..index.indexing import index_add_flat
from ..reduce import reductions  # noqa: F401 - vjp attaches max()'s rule
from ..shape.movement import _wrap
from . import kernels  # noqa: F401 - vjp attaches max()'s rule
from . import order as scan_order
from .kernels import CUMMAX, CUMMIN, KTHVALUE, MEDIAN, MODE, NANMEDIAN, SORT, TOPK


def _return_type(name, fields=("values", "indices")):
    """torch.return_types.<name>: a named tuple printed as torch prints it."""
    base = namedtuple(name, fields)

    def __repr__(self):  # noqa: N807
        parts = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{parts})"
    return type(name, (base,), {"__repr__": __repr__, "__slots__": ()})


sort_return = _return_type("sort")
topk_return = _return_type("topk")
kthvalue_return = _return_type("kthvalue")
median_return = _return_type("median")
nanmedian_return = _return_type("nanmedian")
mode_return = _return_type("mode")
cummax_return = _return_type("cummax")
cummin_return = _return_type("cummin")
aminmax_return = _return_type("aminmax", ("min", "max"))


def _samples(call, cases):
    return [Sample((s,), kw, call) for s, kw in cases]


_SEL = dict(kernel="index_bw", replay=kernels.select_fw, replay_bw=kernels.select_rbw)
SORT_OP = defop("sort", "SortBackward0", 1, **_SEL, samples=_samples(
    "lib.sort(x0, **kw)", [((), {}), ((5,), {}), ((3, 4), {"dim": 0}),
                           ((2, 3, 4), {"descending": True})]))
# sort(stable=True) is another overload in torch: another node name
SORT_STABLE = defop("sort_stable", "SortBackward1", 1, **_SEL, samples=_samples(
    "lib.sort(x0, **kw)", [((3, 4), {"stable": True}), ((5,), {"stable": True,
                                                              "descending": True})]))
TOPK_OP = defop("topk", "TopkBackward0", 1, **_SEL, samples=_samples(
    "lib.topk(x0, **kw)", [((5,), {"k": 2}), ((3, 4), {"k": 2, "dim": 0, "largest": False}),
                           ((2, 3, 4), {"k": 3})]))
KTHVALUE_OP = defop("kthvalue", "KthvalueBackward0", 1, **_SEL, samples=_samples(
    "lib.kthvalue(x0, **kw)", [((5,), {"k": 3}), ((3, 4), {"k": 2, "dim": 0, "keepdim": True})]))
MEDIAN_DIM = defop("median_dim", "MedianBackward1", 1, **_SEL, samples=_samples(
    "lib.median(x0, **kw)", [((5,), {"dim": 0}), ((3, 4), {"dim": 1}),
                             ((2, 3, 4), {"dim": 0, "keepdim": True})]))
NANMEDIAN_DIM = defop("nanmedian_dim", "NanmedianBackward1", 1, **_SEL, samples=_samples(
    "lib.nanmedian(x0, **kw)", [((4,), {"dim": 0}), ((3, 4), {"dim": 1})]))
MODE_OP = defop("mode", "ModeBackward0", 1, **_SEL, samples=_samples(
    "lib.mode(x0, **kw)", [((5,), {}), ((3, 4), {"dim": 0})]))
CUMMAX_OP = defop("cummax", "CummaxBackward0", 1, **_SEL, samples=_samples(
    "lib.cummax(x0, **kw)", [((6,), {"dim": 0}), ((3, 4), {"dim": 1})]))
CUMMIN_OP = defop("cummin", "CumminBackward0", 1, **_SEL, samples=_samples(
    "lib.cummin(x0, **kw)", [((6,), {"dim": 0}), ((3, 4), {"dim": 0})]))
# median() and nanmedian() of every element: torch shares the gradient evenly among the
# elements equal to the result (as max()), which extreme_all_bw does
MEDIAN_ALL = defop("median", "MedianBackward0", 1, kernel="extreme_all_bw",
                   replay=kernels.median_all_fw, saves=("x0", "y"), samples=_samples(
                       "lib.median(x0)", [((5,), {}), ((4,), {}), ((3, 4), {})]))
NANMEDIAN_ALL = defop("nanmedian", "NanmedianBackward0", 1, kernel="extreme_all_bw",
                      replay=kernels.median_all_fw, saves=("x0", "y"), samples=_samples(
                          "lib.nanmedian(x0)", [((5,), {}), ((2, 3), {})]))


@vjp_rule(SORT_OP, SORT_STABLE, TOPK_OP, KTHVALUE_OP, MEDIAN_DIM, NANMEDIAN_DIM, MODE_OP, CUMMAX_OP,
          CUMMIN_OP)
def _select_vjp(ctx, g):
    n = int(np.prod(ctx.shape))
    return [index_add_flat(g, ctx.iat[:n], ctx.shapes[0])]


# max()'s rule (ops/vjp.py): g / count on the elements equal to the result
vjp_rule(MEDIAN_ALL, NANMEDIAN_ALL)(reductions.MAX_ALL.vjp)


def _positions(x, kind, d, a=0, b=0):
    """(values, indices along d, flat positions) of a selection, as NumPy arrays in the
    output's shape with the dim d kept. NumPy's stable sort orders as the replay's merge
    sort (NaN last): the same positions; topk, kthvalue, mode and the cumulative extremes
    come from the replay's kernels themselves."""
    data = np.asarray(x._data)
    shape = data.shape
    lines = data.reshape(shape or (1,))
    if kind in (MODE, CUMMAX, CUMMIN, KTHVALUE, TOPK):
        flat = _as_float64(lines.reshape(-1))
        sh = np.asarray(lines.shape, np.int64)
        if kind == MODE:
            pos = kernels.mode_positions(flat, sh, d)
        elif kind == KTHVALUE:
            pos = kernels.kth_positions(flat, sh, d, a)
        elif kind == TOPK:
            pos = scan_order.topk_positions(flat, sh, d, b, (a & 1) != 0, (a & 2) != 0)
        else:
            pos = kernels.cumulative_extreme_positions(flat, sh, d, kind == CUMMAX)
        m = lines.shape[d] if kind in (CUMMAX, CUMMIN) else (b if kind == TOPK else 1)
        out_shape = lines.shape[:d] + (m,) + lines.shape[d + 1:]
        local = (pos // int(np.prod(lines.shape[d + 1:]))) % max(lines.shape[d], 1)
        local = local.reshape(out_shape)
    else:
        local = _local_order(lines, kind, d, a)
        pos = np.take_along_axis(np.arange(lines.size).reshape(lines.shape), local, d)
    values = np.take_along_axis(lines, local, d)
    if not shape:
        values, local = values.reshape(()), local.reshape(())
    return values, local.astype(np.int64), pos.reshape(-1).astype(np.int64)


def _as_float64(flat):
    """The values the position kernels compare, in float64 (one compile each, as the
    replay's arena): the same order for every dtype but integers beyond 2 ** 53."""
    if flat.dtype == np.float64:
        return flat
    if flat.dtype.kind in "iu" and flat.size and np.abs(flat).max() > 2 ** 53:
        return flat
    return flat.astype(np.float64)


def _local_order(lines, kind, d, a):
    """Indices along d of a sort's or median's picks (d kept)."""
    n = lines.shape[d]
    descending = a != 0 and kind == SORT
    if descending:  # stable, equal values in order: the reversed line's order, reversed
        order = n - 1 - np.flip(np.argsort(np.flip(lines, d), axis=d, kind="stable"), d)
    else:
        order = np.argsort(lines, axis=d, kind="stable")
    if kind == SORT:
        return order
    nan = np.isnan(lines) if lines.dtype.kind == "f" else np.zeros(lines.shape, bool)
    if kind == MEDIAN:
        at = np.take(order, [(n - 1) // 2], axis=d)
        return np.where(nan.any(axis=d, keepdims=True), np.argmax(nan, axis=d, keepdims=True),
                        at)
    count = n - nan.sum(axis=d, keepdims=True)  # NANMEDIAN
    return np.take_along_axis(order, np.maximum((count - 1) // 2, 0), d)


def _select(op, x, kind, d, a=0, b=0, keepdim=True):
    values, indices, pos = _positions(x, kind, d, a, b)
    if not keepdim and x.ndim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    values = values[()] if values.ndim == 0 else values
    iat = np.concatenate([pos.astype(np.int64), np.array([kind, d, a, b], np.int64)])
    return record(op, values, (x,), iat), _make(indices)


def sort(input, dim=-1, descending=False, stable=False):
    """The elements sorted along ``dim``, as ``(values, indices)``.

    Same as ``torch.sort``.
    """
    if isinstance(dim, bool):  # sort(x, descending) positional is not torch's; stays an int
        raise TypeError("sort(): argument 'dim' must be int, not bool")
    d = _wrap(dim, input.ndim)
    op = SORT_STABLE if stable else SORT_OP
    return sort_return(*_select(op, input, SORT, d, int(bool(descending))))


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort the elements along ``dim``.

    Same as ``torch.argsort``.
    """
    d = _wrap(dim, input.ndim)
    return _make(_positions(input, SORT, d, int(bool(descending)))[1])


def msort(input):
    """The elements sorted along the first dimension.

    Same as ``torch.msort``.
    """
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    """The ``k`` largest (or smallest) elements along ``dim``, as ``(values, indices)``.

    Same as ``torch.topk``.
    """
    d = _wrap(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    # a: largest, and sorted as its bit 1 (unsorted: the picks in index order, scan_order)
    flags = int(bool(largest)) | (int(bool(sorted)) << 1)
    return topk_return(*_select(TOPK_OP, input, TOPK, d, flags, int(k)))


def _one_per_line(x, dim, name):
    d = _wrap(dim, x.ndim)
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return d


def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element along ``dim``, as ``(values, indices)``.

    Same as ``torch.kthvalue``.
    """
    d = _wrap(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return kthvalue_return(*_select(KTHVALUE_OP, input, KTHVALUE, d, int(k), keepdim=keepdim))


def _median(x, dim, keepdim, nan_skipping):
    kind, name = (NANMEDIAN, "nanmedian") if nan_skipping else (MEDIAN, "median")
    if dim is None:
        op = NANMEDIAN_ALL if nan_skipping else MEDIAN_ALL
        data = np.ascontiguousarray(x._data).reshape(-1)
        # iat: the kept shape, as max()'s (its rule reads it); fat: the kind, for the replay
        kept, fat = (1,) * x.ndim, (float(kind),)
        if data.size == 0:
            return record(op, np.asarray(np.nan, data.dtype)[()], (x,), kept, fat)
        values, _, _ = _positions(_make(data), kind, 0)
        return record(op, values.reshape(())[()], (x,), kept, fat)
    d = _wrap(dim, x.ndim)
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    op = NANMEDIAN_DIM if nan_skipping else MEDIAN_DIM
    cls = nanmedian_return if nan_skipping else median_return
    return cls(*_select(op, x, kind, d, keepdim=keepdim))


def median(input, dim=None, keepdim=False):
    """The median (the lower middle value for an even count); along ``dim``, ``(values, indices)``.

    Same as ``torch.median``.
    """
    return _median(input, dim, keepdim, False)


def nanmedian(input, dim=None, keepdim=False):
    """The median ignoring NaN; along ``dim``, ``(values, indices)``.

    Same as ``torch.nanmedian``.
    """
    return _median(input, dim, keepdim, True)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim``, as ``(values, indices)``.

    Same as ``torch.mode``.
    """
    d = _one_per_line(input, dim, "mode")
    return mode_return(*_select(MODE_OP, input, MODE, d, keepdim=keepdim))


def _cumulative_extreme(x, dim, kind):
    d = _wrap(dim, x.ndim)
    op, cls = (CUMMAX_OP, cummax_return) if kind == CUMMAX else (CUMMIN_OP, cummin_return)
    return cls(*_select(op, x, kind, d))


def cummax(input, dim):
    """The running maximum along ``dim``, as ``(values, indices)``.

    Same as ``torch.cummax``.
    """
    return _cumulative_extreme(input, dim, CUMMAX)


def cummin(input, dim):
    """The running minimum along ``dim``, as ``(values, indices)``.

    Same as ``torch.cummin``.
    """
    return _cumulative_extreme(input, dim, CUMMIN)

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"msort": "one", "cummax": "several", "cummin": "several", "kthvalue": "several",
             "mode": "several", "sort": "several", "topk": "several"}
