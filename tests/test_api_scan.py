"""Reductions, scans and sorting against torch: values, dtypes, indices (ties and NaN as
torch CPU orders them, but topk's ties, which torch leaves open), gradients and grad_fn
names, NumPy-style aliases, errors."""

import numpy as np
import pytest
from torch_oracle import outcome, rounded

import numbagrad as ng
import numbagrad.func  # noqa: F401 - binds ng.func

torch = pytest.importorskip("torch")

_TIES = [1.0, 2.0, 2.0, 2.0, 1.0, float("nan"), 0.0]
_RNG = np.random.default_rng(0)
_M = _RNG.standard_normal((3, 4))
_C = _RNG.standard_normal((2, 3, 4))
_INTS = [[3, 1, 1, 3, 2], [0, 5, 5, 0, 0]]


def _plain(v):
    """A result as comparable data: tensors as (shape, dtype, values with NaN spelled out)."""
    if isinstance(v, (tuple, list)):
        return [type(v).__name__.replace("_return", "")] + [_plain(u) for u in v]
    if hasattr(v, "detach"):
        a = np.asarray(v.detach().numpy())
        # float32: to a few ulps (a composite like quantile's lerp rounds its own way)
        decimals = 5 if a.dtype == np.float32 else 12
        vals = a.astype(np.float64).round(decimals) if a.dtype.kind in "fc" else a
        return (list(v.shape), str(v.dtype).replace("torch.", ""),
                np.where(np.isnan(vals), "nan", vals.astype(str)).tolist()
                if a.dtype.kind == "f" else vals.tolist())
    return v


def same(fn):
    ours, theirs = outcome(ng, fn, _plain), outcome(torch, fn, _plain)
    assert ours == theirs, f"numbagrad: {ours}\ntorch:     {theirs}"


VALUE_CASES = {
    "sort": lambda t: t.sort(t.tensor(_TIES)),
    "sort_desc": lambda t: t.sort(t.tensor(_TIES), descending=True),
    "sort_stable_dim0": lambda t: t.sort(t.tensor(_INTS), dim=0, stable=True),
    "sort_int_desc": lambda t: t.sort(t.tensor(_INTS), descending=True),
    "sort_0d": lambda t: t.sort(t.tensor(2.5)),
    "sort_empty": lambda t: t.sort(t.zeros(0)),
    "sort_bool": lambda t: t.tensor([True, False, True]).sort(),
    "argsort": lambda t: t.argsort(t.tensor(_TIES), descending=True),
    "argsort_dim": lambda t: t.tensor(_M).argsort(dim=0),
    "msort": lambda t: t.msort(t.tensor(_M)),
    "topk": lambda t: t.topk(t.tensor(_M), 2),
    "topk_smallest_dim0": lambda t: t.tensor(_C).topk(2, dim=0, largest=False),
    "topk_0": lambda t: t.topk(t.tensor(_M), 0),
    "topk_nan": lambda t: t.topk(t.tensor([[1.0, float("nan"), -float("inf"), 0.5],
                                           [float("inf"), 3.0, -1.0, 2.0]]), 3),
    "topk_int": lambda t: t.topk(t.tensor([4, 9, 1, 7]), 3),
    "kthvalue": lambda t: t.kthvalue(t.tensor(_M), 2),
    "kthvalue_ties_nan": lambda t: t.kthvalue(t.tensor([[1.0, 2, 2, 2, 1, 0, 1],
                                                    [3.0, float("nan"), 1, 1, 3, 3, 0]]), 4),
    "kthvalue_keepdim": lambda t: t.tensor(_C).kthvalue(1, dim=1, keepdim=True),
    "median_all": lambda t: t.median(t.tensor(_M)),
    "median_even": lambda t: t.tensor([4.0, 1.0, 3.0, 2.0]).median(),
    "median_all_nan": lambda t: t.median(t.tensor(_TIES)),
    "median_dim_ties": lambda t: t.median(t.tensor([1.0, 2, 2, 2, 1, 0]), 0),
    "median_dim_nan": lambda t: t.median(t.tensor(_TIES), 0),
    "median_keepdim": lambda t: t.tensor(_C).median(dim=-1, keepdim=True),
    "median_int": lambda t: t.median(t.tensor(_INTS), 1),
    "median_empty": lambda t: t.median(t.zeros(0)),
    "nanmedian_all": lambda t: t.nanmedian(t.tensor(_TIES)),
    "nanmedian_dim": lambda t: t.nanmedian(t.tensor([[1.0, float("nan"), 3.0, 0.5],
                                                     [float("nan"), 2.0, float("nan"), 1.0]]), 1),
    "mode_int": lambda t: t.mode(t.tensor(_INTS)),
    "mode_ties": lambda t: t.mode(t.tensor([1.0, 2, 2, 2, 1, 0])),
    "mode_dim0": lambda t: t.tensor(_INTS).mode(0),
    "cummax": lambda t: t.cummax(t.tensor(_TIES), 0),
    "cummin": lambda t: t.cummin(t.tensor(_TIES), 0),
    "cummax_int": lambda t: t.tensor(_INTS).cummax(1),
    "cumsum": lambda t: t.cumsum(t.tensor(_M), 1),
    "cumsum_int": lambda t: t.cumsum(t.tensor(_INTS, dtype=t.int32), 1),
    "cumsum_bool": lambda t: t.tensor([True, False, True]).cumsum(0),
    "cumsum_dtype": lambda t: t.cumsum(t.tensor(_INTS), 0, dtype=t.float64),
    "cumsum_0d": lambda t: t.cumsum(t.tensor(3.0), 0),
    "cumprod": lambda t: t.tensor(_C).cumprod(-1),
    "cumprod_int": lambda t: t.cumprod(t.tensor(_INTS), 1),
    "logcumsumexp": lambda t: t.logcumsumexp(t.tensor([0.5, float("-inf"), 700.0, 1.0]), 0),
    "logcumsumexp_dim": lambda t: t.tensor(_C).logcumsumexp(1),
    "trace": lambda t: t.trace(t.tensor(_M)),
    "trace_int": lambda t: t.tensor(_INTS).trace(),
    "trace_tall": lambda t: t.tensor(_M.T).trace(),
    "diff": lambda t: t.diff(t.tensor(_M)),
    "diff_n2_dim0": lambda t: t.tensor(_C).diff(n=2, dim=0),
    "diff_prepend_append": lambda t: t.diff(t.tensor(_M), dim=1, prepend=t.tensor(_M[:, :1]),
                                            append=t.tensor(_M[:, :2])),
    "diff_bool": lambda t: t.diff(t.tensor([True, True, False])),
    "diff_int_n_big": lambda t: t.diff(t.tensor([1, 4, 9]), n=5),
    "nansum": lambda t: t.nansum(t.tensor(_TIES)),
    "nansum_dim": lambda t: t.tensor([[1.0, float("nan")], [2.0, 3.0]]).nansum(1, keepdim=True),
    "nansum_int": lambda t: t.nansum(t.tensor(_INTS, dtype=t.int32)),
    "nanmean": lambda t: t.nanmean(t.tensor(_TIES)),
    "nanmean_dim": lambda t: t.tensor([[1.0, float("nan")], [2.0, 3.0]]).nanmean(0, True),
    "all": lambda t: t.all(t.tensor(_M) > -1),
    "all_dims": lambda t: t.all(t.tensor(_C) > -2, dim=(0, 2)),
    "all_keepdim": lambda t: t.tensor(_INTS).all(1, keepdim=True),
    "any": lambda t: t.any(t.tensor(_M) > 1),
    "any_dim": lambda t: t.tensor(_INTS).any(dim=0),
    "count_nonzero": lambda t: t.count_nonzero(t.tensor(_INTS)),
    "count_nonzero_dims": lambda t: t.count_nonzero(t.tensor(_C) > 0, dim=(0, 1)),
    "std_mean": lambda t: t.std_mean(t.tensor(_C), dim=1, keepdim=True),
    "std_mean_unbiased_positional": lambda t: t.std_mean(t.tensor(_M), False),
    "var_mean": lambda t: t.var_mean(t.tensor(_C), (0, 2), correction=0),
    "var_mean_all": lambda t: t.var_mean(t.tensor(_M)),
    "aminmax": lambda t: t.aminmax(t.tensor(_M)),
    "aminmax_dim": lambda t: t.tensor(_C).aminmax(dim=1, keepdim=True),
    "aminmax_keepdim": lambda t: t.aminmax(t.tensor(_M), keepdim=True),
    "aminmax_int": lambda t: t.aminmax(t.tensor(_INTS), dim=0),
    "quantile": lambda t: t.quantile(t.tensor(_C), 0.3),
    "quantile_dim_keepdim": lambda t: t.tensor(_C).quantile(0.75, dim=1, keepdim=True),
    "quantile_q_tensor": lambda t: t.quantile(t.tensor(_M), t.tensor([0.1, 0.5, 1.0],
                                                                     dtype=t.float64), dim=0),
    "quantile_nan": lambda t: t.quantile(t.tensor([[1.0, float("nan"), 2.0], [3.0, 1.0, 2.0]]),
                                         0.5, dim=1),
    "nanquantile": lambda t: t.nanquantile(t.tensor([[1.0, float("nan"), 2.0, 5.0],
                                                     [float("nan")] * 4]), 0.4, dim=1),
    "quantile_lower": lambda t: t.quantile(t.tensor(_M), 0.37, interpolation="lower"),
    "quantile_higher": lambda t: t.quantile(t.tensor(_M), 0.37, 1, interpolation="higher"),
    "quantile_nearest": lambda t: t.quantile(t.arange(4.0), t.tensor([0.5, 1 / 6]),
                                             interpolation="nearest"),
    "quantile_midpoint": lambda t: t.quantile(t.tensor(_C), 0.2, -1, interpolation="midpoint"),
    "quantile_float32": lambda t: t.quantile(t.tensor(_C, dtype=t.float32), 0.3, 0),
    "dist": lambda t: t.dist(t.tensor(_M), t.tensor(_M[0])),
    "dist_p": lambda t: t.tensor(_C).dist(t.tensor(_M), p=3),
    "dist_inf_f32": lambda t: t.dist(t.tensor(_M, dtype=t.float32), t.zeros(4), float("inf")),
    "dist_promote": lambda t: t.dist(t.tensor(_M, dtype=t.float32), t.tensor(_M[1])),
    "unique": lambda t: t.unique(t.tensor([3.0, 1, 2, 3, 1, 5])),
    "unique_inverse_counts": lambda t: t.unique(t.tensor(_INTS), return_inverse=True,
                                                return_counts=True),
    "unique_dim": lambda t: t.tensor([[1, 2], [1, 2], [0, 5]]).unique(dim=0, return_inverse=True,
                                                                      return_counts=True),
    "unique_consecutive": lambda t: t.unique_consecutive(t.tensor([1, 1, 2, 2, 3, 1, 1]),
                                                         return_inverse=True,
                                                         return_counts=True),
    "unique_consecutive_dim": lambda t: t.tensor([[1, 1, 2], [1, 1, 3]]).unique_consecutive(
        dim=1, return_counts=True),
    "bincount": lambda t: t.bincount(t.tensor([1, 1, 3])),
    "bincount_weights": lambda t: t.bincount(t.tensor([1, 1, 3]), weights=t.tensor([0.5, 0.5, 1]),
                                             minlength=6),
    "bincount_empty": lambda t: t.bincount(t.tensor([], dtype=t.int64)),
    "histc": lambda t: t.histc(t.tensor([1.0, 2, 1, 4]), bins=4, min=0, max=3),
    "histc_auto_range": lambda t: t.tensor(_C).histc(bins=7),
    "histc_one_value": lambda t: t.histc(t.tensor([2.0, 2.0]), bins=3),
    "bucketize": lambda t: t.bucketize(t.tensor([[3, 6, 9], [1, 2, 10]]), t.tensor([1, 3, 5, 7, 9])),
    "bucketize_right_int32": lambda t: t.bucketize(t.tensor([3.0, 6.0]), t.tensor([1.0, 3.0]),
                                                   right=True, out_int32=True),
    "searchsorted": lambda t: t.searchsorted(t.tensor([1, 3, 5, 7, 9]), t.tensor([[3, 6, 9]])),
    "searchsorted_side": lambda t: t.searchsorted(t.tensor([1, 3, 5, 7, 9]), t.tensor([3, 9]),
                                                  side="right"),
    "searchsorted_rows": lambda t: t.searchsorted(t.tensor([[1, 3, 5], [2, 4, 6]]),
                                                  t.tensor([[3], [3]]), right=True),
    "searchsorted_sorter": lambda t: t.searchsorted(t.tensor([5, 1, 3]), t.tensor([2, 4]),
                                                    sorter=t.tensor([1, 2, 0])),
}


@pytest.mark.parametrize("name", VALUE_CASES)
def test_values_indices_and_dtypes(name):
    same(VALUE_CASES[name])


# topk among equal values: torch leaves which of them it returns unspecified ("the indices
# of tied elements are not guaranteed to be stable"), and the order of sorted=False. Its
# values and their sorted order are documented: they equal torch's; the indices point at
# them, and they are those of NumPy's stable sort (descending for the largest, NaN above
# every number), in index order if unsorted, as numbagrad documents
_NAN = float("nan")
TOPK_TIE_CASES = {
    "nan": ([[1.0, 2, 2, 2, 1, 0, _NAN, 2], [3.0, 1, 1, 3, 3, 0, 1, 1]], dict(k=5)),
    "nans_smallest": ([_NAN, 2, _NAN, 1, 2, _NAN, 1], dict(k=6, largest=False)),
    "smallest_unsorted": ([1.0, 2, 2, 2, 1, 0, 1, 2] * 3, dict(k=6, largest=False, sorted=False)),
    "long_line": ([float(i % 3) for i in range(130)], dict(k=2)),
    "long_line_unsorted": ([float(i % 7) for i in range(3000)], dict(k=40, sorted=False)),
    "dim0_int": (_INTS, dict(k=1, dim=0, largest=False)),
    "dim0_3d": (np.round(_C * 2), dict(k=2, dim=1)),
    "all": ([2.0] * 9, dict(k=9)),
}


def _stable_order(a, dim, descending):
    """NumPy's stable argsort along dim; descending: the flipped line's, flipped back (so
    equal values keep their order and NaN, last in NumPy's ascending order, comes first)."""
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    n = a.shape[dim]
    return n - 1 - np.flip(np.argsort(np.flip(a, dim), axis=dim, kind="stable"), dim)


@pytest.mark.parametrize("name", TOPK_TIE_CASES)
def test_topk_ties_values_as_torch_indices_of_the_stable_sort(name):
    data, kw = TOPK_TIE_CASES[name]
    a = np.asarray(data)
    ours, theirs = ng.topk(ng.tensor(a), **kw), torch.topk(torch.tensor(a), **kw)
    dim, k = kw.get("dim", -1), kw["k"]
    v, i, tv = ours.values.numpy(), ours.indices.numpy(), theirs.values.numpy()
    assert _plain(ours.indices)[:2] == _plain(theirs.indices)[:2]  # shape, dtype
    if kw.get("sorted", True):
        assert _plain(ours.values) == _plain(theirs.values)
    else:  # torch's order is open: the same values, in some order
        assert _plain(ours.values)[:2] == _plain(theirs.values)[:2]
        np.testing.assert_array_equal(np.sort(v, dim), np.sort(tv, dim))
    np.testing.assert_array_equal(np.take_along_axis(a, i, dim), v)
    assert all(len(set(line)) == k for line in np.moveaxis(i, dim, -1).reshape(-1, k).tolist())
    want = np.take(_stable_order(a, dim, kw.get("largest", True)), np.arange(k), dim)
    np.testing.assert_array_equal(i, want if kw.get("sorted", True) else np.sort(want, dim))


@pytest.mark.parametrize("name", ["nan", "long_line_unsorted", "dim0_3d"])
def test_topk_ties_replay_picks_as_eager(name):
    """The compiled replay picks topk's positions again with eager's kernel: on ties its
    gradient lands where eager's indices point."""
    data, kw = TOPK_TIE_CASES[name]
    a = np.asarray(data)
    eager = ng.topk(ng.tensor(a), **kw)
    w = _RNG.uniform(0.5, 1.5, tuple(eager.values.shape))
    dim = kw.get("dim", -1)
    want = np.zeros_like(a)
    np.put_along_axis(want, eager.indices.numpy(), w, dim)
    grad = ng.func.grad(lambda x: (ng.topk(x, **kw).values * ng.tensor(w)).sum())
    np.testing.assert_array_equal(grad(a), want)
    np.testing.assert_array_equal(ng.compile(grad)(a), want)


ALIAS_CASES = {
    "sum": lambda t: t.sum(t.tensor(_C), axis=(0, 2), keepdims=True),
    "mean": lambda t: t.tensor(_C).mean(axis=1),
    "prod": lambda t: t.prod(t.tensor(_M), axis=0, keepdims=True),
    "std": lambda t: t.std(t.tensor(_C), axis=[0, 1]),
    "var": lambda t: t.tensor(_M).var(axis=0, keepdims=True),
    "max": lambda t: t.max(t.tensor(_M), axis=1, keepdims=True),
    "min": lambda t: t.tensor(_M).min(axis=0),
    "amax": lambda t: t.amax(t.tensor(_C), axis=[0]),
    "amin": lambda t: t.tensor(_C).amin(axis=(1, 2), keepdims=True),
    "argmax": lambda t: t.argmax(t.tensor(_M), axis=1, keepdims=True),
    "argmin": lambda t: t.tensor(_M).argmin(axis=0),
    "logsumexp": lambda t: t.logsumexp(t.tensor(_M), axis=1, keepdims=True),
    "softmax": lambda t: t.softmax(t.tensor(_M), axis=0),
    "all": lambda t: t.all(t.tensor(_M) > 0, axis=1, keepdims=True),
    "any": lambda t: (t.tensor(_M) > 0).any(axis=0),
    "nansum": lambda t: t.nansum(t.tensor(_M), axis=0, keepdims=True),
    "nanmean": lambda t: t.nanmean(t.tensor(_M), axis=1),
    "cumsum": lambda t: t.cumsum(t.tensor(_M), axis=0),
    "sort": lambda t: t.sort(t.tensor(_M), axis=0),
    "median": lambda t: t.median(t.tensor(_M), axis=0, keepdims=True),
    "count_nonzero": lambda t: t.count_nonzero(t.tensor(_INTS), axis=1),
    "diff": lambda t: t.diff(t.tensor(_M), axis=0),
    "both_dims": lambda t: t.sum(t.tensor(_M), 0, axis=0),
    "both_dims_kw": lambda t: t.tensor(_M).mean(dim=0, axis=0),
    "norm_takes_none": lambda t: t.norm(t.tensor(_M), axis=0),
}


@pytest.mark.parametrize("name", ALIAS_CASES)
def test_numpy_aliases(name):
    same(ALIAS_CASES[name])


ERROR_CASES = {
    "topk_k_too_big": lambda t: t.topk(t.tensor(_M), 5),
    "kthvalue_out_of_range": lambda t: t.kthvalue(t.tensor(_M), 0),
    "sort_bad_dim": lambda t: t.sort(t.tensor(_M), 2),
    "median_empty_dim": lambda t: t.median(t.zeros(2, 0), 1),
    "mode_empty_dim": lambda t: t.mode(t.zeros(2, 0), 1),
    "trace_vector": lambda t: t.trace(t.tensor([1.0, 2.0])),
    "diff_0d": lambda t: t.diff(t.tensor(1.0)),
    "nanmean_int": lambda t: t.nanmean(t.tensor(_INTS)),
    "logcumsumexp_int": lambda t: t.logcumsumexp(t.tensor(_INTS), 0),
    "cumsum_bad_dim": lambda t: t.cumsum(t.tensor(_M), 3),
    "std_mean_int": lambda t: t.std_mean(t.tensor(_INTS)),
    "aminmax_empty": lambda t: t.aminmax(t.zeros(0)),
    "aminmax_empty_dim": lambda t: t.aminmax(t.zeros(2, 0), dim=1),
    "quantile_q_range": lambda t: t.quantile(t.tensor(_M), 1.5),
    "quantile_q_dtype": lambda t: t.quantile(t.tensor(_M), t.tensor([0.5])),
    "quantile_int": lambda t: t.quantile(t.tensor(_INTS), 0.5),
    "quantile_mode": lambda t: t.quantile(t.tensor(_M), 0.5, interpolation="foo"),
    "quantile_q_2d": lambda t: t.quantile(t.tensor(_M), t.tensor([[0.5]], dtype=t.float64)),
    "quantile_empty": lambda t: t.quantile(t.zeros(0), 0.5),
    "bincount_negative": lambda t: t.bincount(t.tensor([-1])),
    "bincount_float": lambda t: t.bincount(t.tensor([1.0])),
    "histc_int": lambda t: t.histc(t.tensor([1, 2])),
    "histc_min_over_max": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=3, min=5, max=1),
    "histc_no_bins": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=0),
    "dist_int": lambda t: t.dist(t.tensor([1, 2]), t.tensor([1, 3])),
    "dist_shapes": lambda t: t.dist(t.tensor(_M), t.zeros(3)),
    "searchsorted_side_bad": lambda t: t.searchsorted(t.tensor([1, 2]), t.tensor([1]),
                                                      side="middle"),
}


@pytest.mark.parametrize("name", ERROR_CASES)
def test_errors(name):
    same(ERROR_CASES[name])


# differentiable ops: f(lib, x) -> tensor; gradient of sum(f * w) vs torch, grad_fn name
GRAD_CASES = {
    "cumsum": lambda t, x: t.cumsum(x, 1),
    "cumprod": lambda t, x: x.cumprod(0),
    "cumprod_zeros": lambda t, x: t.cumprod(x * t.tensor([1.0, 0.0, 1.0, 1.0]), 1),
    "logcumsumexp": lambda t, x: t.logcumsumexp(x, 1),
    "sort": lambda t, x: t.sort(x, 1, descending=True)[0],
    "msort": lambda t, x: t.msort(x),
    "topk": lambda t, x: x.topk(2)[0],
    "kthvalue": lambda t, x: t.kthvalue(x, 2, 0)[0],
    "median": lambda t, x: x.median(),
    "median_dim": lambda t, x: t.median(x, 1)[0],
    "nanmedian": lambda t, x: t.nanmedian(x),
    "mode": lambda t, x: t.mode(x, 0)[0],
    "cummax": lambda t, x: t.cummax(x, 1)[0],
    "cummin": lambda t, x: x.cummin(0).values,
    "trace": lambda t, x: x.trace(),
    "diff": lambda t, x: t.diff(x, n=2, dim=1),
    "nansum": lambda t, x: t.nansum(t.log(x), 1),
    "nanmean": lambda t, x: t.nanmean(t.log(x)),
    "std_mean": lambda t, x: t.std_mean(x, 1)[0] * t.std_mean(x, 1)[1],
    "var_mean": lambda t, x: t.var_mean(x)[0] + t.var_mean(x)[1] * 3,
    "aminmax": lambda t, x: t.aminmax(x, dim=0)[0] - 2 * t.aminmax(x, dim=0)[1],
    "quantile": lambda t, x: t.quantile(x, 0.3, dim=1),
    "quantile_q_tensor": lambda t, x: t.quantile(x, t.tensor([0.25, 0.6], dtype=t.float64)),
    "dist": lambda t, x: t.dist(x, t.tensor(_M[1]) * 0.5),
    "dist_p1": lambda t, x: x.dist(t.tensor(_M[2]), p=1),
    "dist_inf": lambda t, x: t.dist(x, t.tensor(_M[0]) + 0.1, float("inf")),
    "nanquantile_nearest": lambda t, x: t.nanquantile(t.log(x), 0.6, 0,
                                                      interpolation="nearest"),
}


@pytest.mark.parametrize("name", GRAD_CASES)
def test_gradients_and_grad_fn(name):
    fn = GRAD_CASES[name]
    w = None
    results = []
    for lib in (torch, ng):
        x = lib.tensor(_M, requires_grad=True)
        out = fn(lib, x)
        if w is None:
            w = _RNG.standard_normal(tuple(out.shape))
        (out * lib.tensor(w)).sum().backward()
        results.append((out.grad_fn.name(), np.nan_to_num(out.detach().numpy()),
                        x.grad.numpy()))
    (name_t, value_t, grad_t), (name_n, value_n, grad_n) = results
    assert name_n == name_t
    np.testing.assert_allclose(value_n, value_t, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad_n, grad_t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["cumsum", "cumprod_zeros", "logcumsumexp", "sort", "median",
                                  "trace", "quantile", "dist"])
def test_gradcheck_and_gradgradcheck(name):
    fn = GRAD_CASES[name]
    x = ng.tensor(np.abs(_M) + 0.5 if name == "cumprod_zeros" else _M, requires_grad=True)
    assert ng.autograd.gradcheck(lambda a: fn(ng, a), (x,), eps=1e-6, atol=1e-6, rtol=1e-4)
    assert ng.autograd.gradgradcheck(lambda a: fn(ng, a), (x,), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_return_types_print_as_torch():
    for lib in (torch, ng):
        x = lib.tensor([3.0, 1.0, 2.0])
        got = [repr(lib.sort(x)), repr(x.topk(1)), repr(lib.cummin(x, 0)), repr(x.median(0))]
        if lib is torch:
            want = got
    assert got == want
    r = ng.sort(ng.tensor([2.0, 1.0]))
    values, indices = r
    assert r.values is values and r.indices is indices and r[1] is indices


def test_cumsum_in_place():
    for lib in (torch, ng):
        a = lib.tensor(_M, requires_grad=True)
        b = a * 2
        b.cumsum_(1)
        b.sum().backward()
        if lib is torch:
            want = (b.grad_fn.name(), b.detach().numpy().copy(), a.grad.numpy().copy())
    assert b.grad_fn.name() == want[0]
    np.testing.assert_allclose(b.detach().numpy(), want[1])
    np.testing.assert_allclose(a.grad.numpy(), want[2])


_TRAPEZOID_CASES = [
    ("trapezoid", lambda lib, y, x: lib.trapezoid(y)),
    ("trapezoid dx", lambda lib, y, x: lib.trapezoid(y, dx=0.25, dim=0)),
    ("trapezoid x 1-d", lambda lib, y, x: lib.trapezoid(y, x)),
    ("trapezoid x full", lambda lib, y, x: lib.trapezoid(y, x.expand(3, 4) * 1.5, dim=1)),
    ("trapz", lambda lib, y, x: lib.trapz(y, dim=0)),
    ("cumulative", lambda lib, y, x: lib.cumulative_trapezoid(y)),
    ("cumulative dx", lambda lib, y, x: lib.cumulative_trapezoid(y, dx=2.0, dim=0)),
    ("cumulative x", lambda lib, y, x: lib.cumulative_trapezoid(y, x)),
]


@pytest.mark.parametrize("name,call", _TRAPEZOID_CASES, ids=[n for n, _ in _TRAPEZOID_CASES])
def test_trapezoid_values_and_gradients_match_torch(name, call):
    xs = np.array([0.0, 0.5, 1.5, 3.0])
    results = []
    for lib in (ng, torch):
        y = lib.tensor(_M, requires_grad=True)
        x = lib.tensor(xs, requires_grad=True)
        out = call(lib, y, x)
        out.backward(lib.ones_like(out))
        results.append((out.detach().numpy(), y.grad.numpy(),
                        None if x.grad is None else x.grad.numpy()))
    (o, gy, gx), (to, tgy, tgx) = results
    np.testing.assert_allclose(o, to, rtol=1e-12)
    np.testing.assert_allclose(gy, tgy, rtol=1e-12)
    assert (gx is None) == (tgx is None)
    if gx is not None:
        np.testing.assert_allclose(gx, tgx, rtol=1e-12)


def test_trapezoid_gradient_against_finite_differences():
    x = ng.tensor([0.0, 0.4, 1.1, 2.0], dtype=ng.float64)
    assert ng.autograd.gradcheck(lambda y: ng.trapezoid(y, x), (ng.tensor(
        _M, requires_grad=True),))


@pytest.mark.parametrize("call", [
    lambda lib: lib.trapezoid(lib.tensor(1.0)),
    lambda lib: lib.trapezoid(lib.tensor([1, 2, 4])),
    lambda lib: lib.trapezoid(lib.ones(3, 0)),
    lambda lib: lib.trapezoid(lib.ones(0, 3), dim=0),
    lambda lib: lib.cumulative_trapezoid(lib.ones(2, 1)),
    lambda lib: lib.trapezoid(lib.tensor([True, False])),
    lambda lib: lib.trapezoid(lib.ones(3), lib.ones(4)),
])
def test_trapezoid_edges_and_errors_match_torch(call):
    ours, theirs = outcome(ng, call, rounded), outcome(torch, call, rounded)
    assert ours[0] == theirs[0] and (ours == theirs or ours[0] in ("IndexError",
                                                                  "RuntimeError", "TypeError"))


def test_torch_constants():
    for name in ("pi", "e", "inf", "nan"):
        ours, theirs = getattr(ng, name), getattr(torch, name)
        assert type(ours) is type(theirs) and (ours == theirs or (ours != ours and
                                                                 theirs != theirs))
