"""The losses of torch.nn.functional and torch.nn against torch 2.13: every loss x reduction x
option in float32 and float64 (values, dtypes, grad_fn names, gradients of the input and of
float targets), mixed dtypes, second derivatives through the differentiable rules
(create_graph=True), big nodes, torch's errors and warnings, and the loss Modules (reprs,
buffers, the deprecated size_average/reduce arguments)."""

import re
import warnings

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.nn.functional as F  # noqa: N812 - torch's spelling

torch = pytest.importorskip("torch")

RED = ("none", "mean", "sum")
W4 = [0.5, 1.0, 2.0, 1.5]
W5 = [0.5, 1.0, 2.0, 1.5, 3.0]


# ---- inputs described once, built for either library ------------------------------------------
def _arrays(spec, rng):
    """NumPy values for an argument spec: ("x", shape) logits/values in (-2, 2), ("p", shape)
    probabilities in (0.05, 0.95), ("d", shape) distributions along dim 1 (dim 0 for 1-d),
    ("i", values) an int64 target, ("c", values) a float constant."""
    kind, arg = spec
    if kind == "x":
        a = rng.uniform(-2, 2, arg)
        return np.where(np.abs(a) < 0.05, 0.3, a)
    if kind == "p":
        return rng.uniform(0.05, 0.95, arg)
    if kind == "d":
        e = np.exp(rng.standard_normal(arg))
        return e / e.sum(axis=1 if len(arg) > 1 else 0, keepdims=True)
    return np.asarray(arg)


def _tensor(lib, kind, a, dtype):
    if kind == "i":
        return lib.tensor(a)
    dt = lib.float32 if dtype == np.float32 else lib.float64
    return lib.tensor(a.astype(dtype), dtype=dt, requires_grad=kind in "xpd")


def _call(lib, name, args, kw, dtype):
    xs = [_tensor(lib, k, a, dtype) for (k, _), a in args]
    kw = {k: (_tensor(lib, "c", np.asarray(v), dtype) if isinstance(v, list) else v)
          for k, v in kw.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = getattr(lib.nn.functional, name)(*xs, **kw)
    return out, xs


def _check(name, specs, kw, dtype, seed=0):
    rng = np.random.default_rng(seed)
    args = [(s, _arrays(s, rng)) for s in specs]
    (out, xs), (out_t, xs_t) = [_call(lib, name, args, kw, dtype) for lib in (ng, torch)]
    rng = np.random.default_rng(seed + 1)
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    assert out.dtype.name == str(out_t.dtype).removeprefix("torch.")
    assert tuple(out.shape) == tuple(out_t.shape)
    np.testing.assert_allclose(out.detach().numpy(), out_t.detach().numpy(), **tol)
    assert out.grad_fn is not None and out.grad_fn.name() == out_t.grad_fn.name()
    g = rng.standard_normal(tuple(out_t.shape)).astype(out_t.detach().numpy().dtype)
    out.backward(ng.tensor(g))
    out_t.backward(torch.tensor(g))
    for x, x_t in zip(xs, xs_t):
        if not x_t.requires_grad:
            continue
        assert (x.grad is None) == (x_t.grad is None)
        if x_t.grad is not None:
            assert x.grad.dtype.name == str(x_t.grad.dtype).removeprefix("torch.")
            np.testing.assert_allclose(x.grad.numpy(), x_t.grad.numpy(), **tol)


X34, P34 = ("x", (3, 4)), ("p", (3, 4))
X35 = ("x", (3, 5))
T3 = ("i", [1, 0, 4])
CASES = []
for red in RED:
    r = {"reduction": red}
    CASES += [
        ("mse_loss", (X34, X34), r), ("mse_loss", (("x", ()), ("x", ())), r),
        ("mse_loss", (X34, ("x", (4,))), r), ("mse_loss", (X34, X34), {**r, "weight": [W4] * 3}),
        ("l1_loss", (X34, X34), r), ("l1_loss", (("x", (3, 1)), ("x", (4,))), r),
        ("l1_loss", (X34, X34), {**r, "weight": [W4] * 3}),
        ("smooth_l1_loss", (X34, X34), r), ("smooth_l1_loss", (X34, X34), {**r, "beta": 0.5}),
        ("smooth_l1_loss", (X34, X34), {**r, "beta": 0.0}),
        ("smooth_l1_loss", (X34, ("x", (1, 4))), {**r, "beta": 2.0}),
        ("huber_loss", (X34, X34), r), ("huber_loss", (X34, X34), {**r, "delta": 0.7}),
        ("huber_loss", (X34, X34), {**r, "weight": [W4] * 3}),
        ("binary_cross_entropy", (P34, P34), r),
        ("binary_cross_entropy", (P34, P34), {**r, "weight": [[0.5], [2.0], [1.0]]}),
        ("binary_cross_entropy", (P34, P34), {**r, "weight": W4}),
        ("binary_cross_entropy", (("p", ()), ("p", ())), r),
        ("binary_cross_entropy_with_logits", (X34, P34), r),
        ("binary_cross_entropy_with_logits", (X34, P34), {**r, "weight": [[0.5], [2.0], [1.0]]}),
        ("binary_cross_entropy_with_logits", (X34, P34), {**r, "pos_weight": W4}),
        ("binary_cross_entropy_with_logits", (X34, P34),
         {**r, "weight": W4, "pos_weight": [[3.0], [0.5], [1.0]]}),
        ("binary_cross_entropy_with_logits", (("x", (5,)), ("x", (5,))), r),
        ("nll_loss", (X35, T3), r), ("nll_loss", (X35, T3), {**r, "weight": W5}),
        ("nll_loss", (X35, ("i", [1, 3, -100])), {**r, "weight": W5}),
        ("nll_loss", (X35, T3), {**r, "ignore_index": 4}),
        ("nll_loss", (("x", (5,)), ("i", 3)), {**r, "weight": W5}),
        ("nll_loss", (("x", (2, 3, 2, 2)), ("i", [[[0, 2], [1, 1]], [[2, 0], [0, 1]]])),
         {**r, "weight": [1.0, 2.0, 0.5], "ignore_index": 2}),
        ("nll_loss", (("x", (2, 3, 4)), ("i", [[0, 2, 1, 1], [2, 0, 0, 1]])), r),
        ("nll_loss", (("x", (2, 3, 1, 2, 2)), ("i", [[[[0, 2], [1, 1]]], [[[2, 0], [0, 1]]]])),
         r),
        ("cross_entropy", (X35, T3), r), ("cross_entropy", (X35, T3), {**r, "weight": W5}),
        ("cross_entropy", (X35, ("i", [1, -100, 4])), r),
        ("cross_entropy", (X35, T3), {**r, "label_smoothing": 0.2}),
        ("cross_entropy", (X35, ("i", [1, -100, 4])), {**r, "label_smoothing": 0.1, "weight": W5}),
        ("cross_entropy", (X35, ("i", [1, 2, 4])),
         {**r, "label_smoothing": 0.3, "ignore_index": 2}),
        ("cross_entropy", (X35, ("d", (3, 5))), r),
        ("cross_entropy", (X35, ("d", (3, 5))), {**r, "label_smoothing": 0.25}),
        ("cross_entropy", (X35, ("d", (3, 5))), {**r, "weight": W5}),
        ("cross_entropy", (("x", (2, 3, 4)), ("i", [[0, 2, 1, 1], [2, 0, 0, 1]])), r),
        ("cross_entropy", (("x", (2, 3, 4)), ("i", [[0, 2, 1, 1], [2, 0, 0, 1]])),
         {**r, "label_smoothing": 0.1, "weight": [1.0, 2.0, 0.5]}),
        ("cross_entropy", (("x", (2, 3, 2)), ("d", (2, 3, 2))), {**r, "weight": [1.0, 2.0, 0.5]}),
        ("cross_entropy", (("x", (5,)), ("i", 2)), r),
        ("cross_entropy", (("x", (5,)), ("i", 2)), {**r, "label_smoothing": 0.4}),
        ("cross_entropy", (("x", (5,)), ("d", (5,))), r),
        ("kl_div", (X34, P34), r), ("kl_div", (X34, X34), {**r, "log_target": True}),
    ]
CASES += [("kl_div", (X34, P34), {"reduction": "batchmean"}),
          ("kl_div", (X34, X34), {"reduction": "batchmean", "log_target": True}),
          ("kl_div", (("x", ()), ("p", ())), {"reduction": "batchmean"}),
          ("kl_div", (X34, ("p", (4,))), {"reduction": "sum"})]


def _id(case):
    name, specs, kw = case
    shapes = "_".join(str(s[1]) if s[0] != "i" else "idx" for s in specs).replace(" ", "")
    opts = ",".join(f"{k}={'w' if isinstance(v, list) else v}" for k, v in kw.items())
    return f"{name}[{shapes}][{opts}]"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_values_grads_and_grad_fn_against_torch(case, dtype):
    name, specs, kw = case
    _check(name, specs, kw, dtype, seed=CASES.index(case))


# ---- mixed dtypes: integer targets, float32 with float64 ----------------------------------------
def _mixed(lib, name, xdt, tdt, **kw):
    rng = np.random.default_rng(7)
    x = lib.tensor(rng.uniform(0.1, 0.9, (3, 4)), dtype=getattr(lib, xdt), requires_grad=True)
    tv = rng.uniform(0.1, 0.9, (3, 4)) if tdt.startswith("float") else rng.integers(0, 2, (3, 4))
    t = lib.tensor(tv, dtype=getattr(lib, tdt), requires_grad=tdt.startswith("float"))
    out = getattr(lib.nn.functional, name)(x, t, **kw)
    out.backward(lib.ones_like(out))
    grads = [None if v.grad is None else (str(v.grad.dtype), v.grad.numpy().round(5).tolist())
             for v in (x, t)]
    return (str(out.dtype), out.grad_fn.name(), np.round(out.detach().numpy(), 5).tolist(),
            grads)


# (torch's own huber backward fails on mixed dtypes: its forward is checked in ERRORS)
MIXED = [(n, a, b) for n in ("mse_loss", "l1_loss", "smooth_l1_loss")
         for a, b in (("float32", "float64"), ("float64", "float32"), ("float32", "int64"),
                      ("float64", "bool")) if not (n == "l1_loss" and b == "bool")] + \
    [(n, a, b) for n in ("binary_cross_entropy_with_logits", "kl_div")
     for a, b in (("float32", "float64"), ("float64", "float32"))] + \
    [("cross_entropy", "float32", "float64"), ("cross_entropy", "float64", "float32")]


@pytest.mark.parametrize("name,xdt,tdt", MIXED)
def test_mixed_dtypes_match_torch(name, xdt, tdt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _mixed(ng, name, xdt, tdt) == _mixed(torch, name, xdt, tdt)


# ---- second derivatives through the differentiable rules (create_graph=True) ------------------
SECOND = [c for c in CASES if c[0] in ("mse_loss", "smooth_l1_loss", "huber_loss",
                                       "binary_cross_entropy", "binary_cross_entropy_with_logits",
                                       "nll_loss") and "weight" not in c[2] or
          c[0] == "binary_cross_entropy_with_logits" or
          (c[0] == "cross_entropy" and c[2].get("reduction") == "mean")]


def _second(lib, name, args, kw, rng_seed):
    out, xs = _call(lib, name, args, kw, np.float64)
    rng = np.random.default_rng(rng_seed)
    g = lib.tensor(rng.standard_normal(tuple(out.shape)), requires_grad=True)
    wants = [x for x in xs if x.requires_grad]
    firsts = lib.autograd.grad(out, wants, g, create_graph=True)
    s = sum((f * lib.tensor(rng.standard_normal(tuple(f.shape)))).sum() for f in firsts)
    seconds = lib.autograd.grad(s, wants + [g], allow_unused=True)
    return ([f.detach().numpy() for f in firsts],
            [np.zeros(tuple(v.shape)) if d is None else (d.detach() + 0).numpy()
             for v, d in zip(wants + [g], seconds)])


@pytest.mark.parametrize("case", SECOND, ids=[_id(c) for c in SECOND])
def test_second_derivatives_against_torch(case):
    name, specs, kw = case
    rng = np.random.default_rng(11)
    args = [(s, _arrays(s, rng)) for s in specs]
    ours = _second(ng, name, args, kw, 12)
    theirs = _second(torch, name, args, kw, 12)
    for mine, ref in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        np.testing.assert_allclose(mine, ref, rtol=1e-8, atol=1e-10)


def test_gradgradcheck_on_fused_losses():
    rng = np.random.default_rng(3)
    F = ng.nn.functional
    x = ng.tensor(rng.uniform(-2, 2, (3, 4)), dtype=ng.float64, requires_grad=True)
    t = ng.tensor(rng.uniform(0.1, 0.9, (3, 4)), dtype=ng.float64, requires_grad=True)
    w = ng.tensor(rng.uniform(0.5, 2, (4,)), dtype=ng.float64)
    fns = [lambda a, b: F.mse_loss(a, b), lambda a, b: F.huber_loss(a, b, delta=0.5),
           lambda a, b: F.smooth_l1_loss(a, b, beta=0.7, reduction="none"),
           lambda a, b: F.binary_cross_entropy(b, b * 0.5 + 0.25, weight=w),
           lambda a, b: F.binary_cross_entropy_with_logits(a, b, w, pos_weight=w * 2),
           lambda a, b: F.cross_entropy(a, ng.tensor([0, 3, 1]), label_smoothing=0.1)]
    for fn in fns:
        assert ng.autograd.gradgradcheck(fn, (x, t), eps=1e-6, atol=1e-5, rtol=1e-3)


# ---- big nodes: the kernels on whole arrays (float32) ---------------------------------------------
@pytest.mark.parametrize("name", ["mse_loss", "huber_loss", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits", "cross_entropy",
                                  "nll_loss"])
def test_big_nodes_match_torch(name):
    rng = np.random.default_rng(5)
    n, c = 8192, 5
    if name in ("cross_entropy", "nll_loss"):
        args = [(("x", (n, c)), rng.uniform(-2, 2, (n, c))),
                (("i", None), rng.integers(0, c, n))]
        kw = {"weight": list(rng.uniform(0.5, 2, c))}
    else:
        lo = 0.05 if name == "binary_cross_entropy" else -2
        args = [(("x", (n, c)), rng.uniform(lo, 0.95, (n, c))),
                (("x", (n, c)), rng.uniform(0.05, 0.95, (n, c)))]
        kw = {"weight": list(rng.uniform(0.5, 2, c))} if "binary" in name else {}
    (out, xs), (out_t, xs_t) = [_call(lib, name, args, kw, np.float32) for lib in (ng, torch)]
    out.backward()
    out_t.backward()
    np.testing.assert_allclose(out.item(), out_t.item(), rtol=1e-4)
    for x, x_t in zip(xs, xs_t):
        if x_t.requires_grad:
            assert x.grad.dtype is ng.float32
            np.testing.assert_allclose(x.grad.numpy(), x_t.grad.numpy(), rtol=1e-4, atol=1e-8)


# ---- cross_entropy's one-kernel path (2-d logits, class indices, no weight or smoothing) ------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_fast_path_equals_log_softmax_then_nll(reduction):
    """The one-kernel path records what the composition records (LogSoftmaxBackward0 under
    NllLossBackward0) and computes it as NumPy does: float64 values and gradients equal
    ``nll_loss(log_softmax(x, 1), t)`` bit for bit, ignored targets included."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((37, 10)) * 3
    t = rng.integers(0, 10, 37)
    t[[3, 17]] = -100
    a, b = ng.tensor(x, requires_grad=True), ng.tensor(x, requires_grad=True)
    fast = F.cross_entropy(a, ng.tensor(t), reduction=reduction)
    composed = F.nll_loss(F.log_softmax(b, 1), ng.tensor(t), reduction=reduction)
    assert fast.grad_fn.name() == "NllLossBackward0"
    assert fast.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
    assert np.array_equal(fast.detach().numpy(), composed.detach().numpy())
    w = rng.uniform(0.5, 1.5, fast.shape)
    (fast * ng.tensor(w)).sum().backward()
    (composed * ng.tensor(w)).sum().backward()
    assert np.array_equal(a.grad.numpy(), b.grad.numpy())


# ---- torch's errors ---------------------------------------------------------------------------
def _outcome(fn, lib):
    try:
        out = fn(lib, lib.nn.functional)
    except (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError) as e:
        return type(e).__name__, str(e)
    value = np.asarray(out.detach().numpy(), np.float64)
    return ("ok", str(out.dtype), tuple(out.shape),
            None if out.grad_fn is None else out.grad_fn.name(),
            np.where(np.isnan(value), -7.0, value).round(5).tolist())


def _t(lib, data, dtype=None, rg=False):
    return lib.tensor(data, dtype=dtype, requires_grad=rg)


_X = [[0.1, -0.3, 0.5, 1.0, 2.0], [0.3, 0.2, -1.0, 0.4, 0.0], [1.5, -2.0, 0.3, 0.2, 0.1]]
_P = [[0.1, 0.3, 0.5, 0.99], [0.3, 0.2, 0.01, 0.4]]


def _i(lib, *shape, fill=0):
    return lib.full(shape, fill, dtype=lib.int64)


ERRORS = {
    "nll batch": lambda lib, f: f.nll_loss(_t(lib, _X, rg=True), _t(lib, [1, 0])),
    "nll 2d input 0d target": lambda lib, f: f.nll_loss(_t(lib, _X), _t(lib, 1)),
    "nll float target": lambda lib, f: f.nll_loss(_t(lib, _X), _t(lib, [1.0, 0.0, 2.0])),
    "nll int32 target": lambda lib, f: f.nll_loss(_t(lib, _X), _t(lib, [1, 0, 2], lib.int32)),
    "nll bool target": lambda lib, f: f.nll_loss(_t(lib, _X), _t(lib, [True, False, True])),
    "nll out of bounds": lambda lib, f: f.nll_loss(_t(lib, _X), _t(lib, [1, 0, 5])),
    "nll negative": lambda lib, f: f.nll_loss(_t(lib, _X), _t(lib, [1, 0, -1]), reduction="none"),
    "nll 2d target": lambda lib, f: f.nll_loss(_t(lib, _X), _t(lib, [[1], [0], [2]])),
    "nll 0d input": lambda lib, f: f.nll_loss(_t(lib, 1.0), _t(lib, 0)),
    "nll 1d input 1d target": lambda lib, f: f.nll_loss(_t(lib, _X[0]), _t(lib, [1, 2, 3])),
    "nll 1d input (1,) target": lambda lib, f: f.nll_loss(_t(lib, _X[0], rg=True), _t(lib, [3]),
                                                          reduction="none"),
    "nll 3d target size": lambda lib, f: f.nll_loss(lib.zeros(2, 3, 4), _i(lib, 2, 5)),
    "nll 4d target size": lambda lib, f: f.nll_loss(lib.zeros(2, 3, 4, 4), _i(lib, 2, 5, 4)),
    "nll 4d target ndim": lambda lib, f: f.nll_loss(lib.zeros(2, 3, 4, 4), _i(lib, 2, 4)),
    "nll 4d weight": lambda lib, f: f.nll_loss(lib.zeros(2, 3, 4, 4), _i(lib, 2, 4, 4),
                                               weight=lib.ones(2)),
    "nll 4d out of bounds": lambda lib, f: f.nll_loss(lib.zeros(2, 3, 4, 4),
                                                      _i(lib, 2, 4, 4, fill=3)),
    "nll 4d float target": lambda lib, f: f.nll_loss(lib.zeros(2, 3, 4, 4), lib.zeros(2, 4, 4)),
    "nll weight shape": lambda lib, f: f.nll_loss(_t(lib, _X), _t(lib, [1, 0, 2]),
                                                  weight=lib.ones(4)),
    "nll weight 2d": lambda lib, f: f.nll_loss(_t(lib, _X), _t(lib, [1, 0, 2]),
                                               weight=lib.ones(1, 5)),
    "nll weight dtype": lambda lib, f: f.nll_loss(_t(lib, _X), _t(lib, [1, 0, 2]),
                                                  weight=lib.ones(5, dtype=lib.float64)),
    "nll weight requires grad": lambda lib, f: f.nll_loss(
        _t(lib, _X), _t(lib, [1, 0, 2]), weight=lib.ones(5, requires_grad=True)),
    "nll 4d weight requires grad": lambda lib, f: f.nll_loss(
        lib.zeros(2, 3, 4, 4), _i(lib, 2, 4), weight=lib.ones(3, requires_grad=True)),
    "nll int input": lambda lib, f: f.nll_loss(_t(lib, [[1, 2], [3, 4]]), _t(lib, [1, 0])),
    "nll int input 4d": lambda lib, f: f.nll_loss(lib.zeros(2, 3, 4, 4, dtype=lib.int64),
                                                  _i(lib, 2, 4, 4)),
    "nll bad reduction": lambda lib, f: f.nll_loss(_t(lib, _X), _t(lib, [1, 0, 2]),
                                                   reduction="foo"),
    "nll all ignored": lambda lib, f: f.nll_loss(_t(lib, _X, rg=True), _t(lib, [-100] * 3)),
    "nll zero weights": lambda lib, f: f.nll_loss(_t(lib, _X, rg=True), _t(lib, [1, 2, 3]),
                                                  weight=lib.zeros(5)),
    "nll empty": lambda lib, f: f.nll_loss(lib.zeros(0, 5, requires_grad=True), _i(lib, 0)),
    "nll empty none": lambda lib, f: f.nll_loss(lib.zeros(0, 5, requires_grad=True), _i(lib, 0),
                                                reduction="none"),
    "nll empty 3d none": lambda lib, f: f.nll_loss(lib.zeros(0, 3, 4, requires_grad=True),
                                                   _i(lib, 0, 4), reduction="none"),
    "ce batch": lambda lib, f: f.cross_entropy(_t(lib, _X), _t(lib, [1, 0])),
    "ce float target shape": lambda lib, f: f.cross_entropy(_t(lib, _X), lib.zeros(3, 4)),
    "ce long probabilities": lambda lib, f: f.cross_entropy(_t(lib, _X),
                                                            lib.ones(3, 5, dtype=lib.int64)),
    "ce probabilities ignore_index": lambda lib, f: f.cross_entropy(
        _t(lib, _X), lib.ones(3, 5), ignore_index=1),
    "ce label_smoothing > 1": lambda lib, f: f.cross_entropy(_t(lib, _X), _t(lib, [1, 0, 2]),
                                                             label_smoothing=1.5),
    "ce label_smoothing = 2": lambda lib, f: f.cross_entropy(_t(lib, _X), _t(lib, [1, 0, 2]),
                                                             label_smoothing=2.0),
    "ce label_smoothing < 0": lambda lib, f: f.cross_entropy(
        _t(lib, _X, rg=True), _t(lib, [1, 0, 2]), label_smoothing=-0.5),
    "ce probabilities ls > 1": lambda lib, f: f.cross_entropy(_t(lib, _X), lib.ones(3, 5),
                                                              label_smoothing=1.5),
    "ce probabilities weight": lambda lib, f: f.cross_entropy(_t(lib, _X), lib.ones(3, 5),
                                                              weight=lib.ones(4)),
    "ce 0d": lambda lib, f: f.cross_entropy(_t(lib, 1.0), _t(lib, 0)),
    "ce 0d float": lambda lib, f: f.cross_entropy(_t(lib, 1.0), _t(lib, 0.0)),
    "ce int input": lambda lib, f: f.cross_entropy(_t(lib, [[1, 2], [3, 4]]), _t(lib, [1, 0])),
    "ce int input 3d": lambda lib, f: f.cross_entropy(lib.zeros(2, 3, 4, dtype=lib.int64),
                                                      _i(lib, 2, 4)),
    "ce int32 target": lambda lib, f: f.cross_entropy(_t(lib, _X), _t(lib, [1, 0, 2], lib.int32)),
    "ce probabilities empty": lambda lib, f: f.cross_entropy(lib.zeros(0, 5, requires_grad=True),
                                                             lib.zeros(0, 5)),
    "ce ls all ignored": lambda lib, f: f.cross_entropy(
        _t(lib, _X, rg=True), _t(lib, [-100] * 3), label_smoothing=0.2),
    "ce ls weighted all ignored": lambda lib, f: f.cross_entropy(
        _t(lib, _X, rg=True), _t(lib, [-100] * 3), label_smoothing=0.2, weight=lib.ones(5)),
    "ce out of bounds": lambda lib, f: f.cross_entropy(_t(lib, _X), _t(lib, [1, 2, 9])),
    "ce negative target": lambda lib, f: f.cross_entropy(_t(lib, _X), _t(lib, [1, -2, 0])),
    "ce all ignored": lambda lib, f: f.cross_entropy(_t(lib, _X, rg=True), _t(lib, [-100] * 3)),
    "ce ignore_index in range": lambda lib, f: f.cross_entropy(
        _t(lib, _X, rg=True), _t(lib, [1, 2, 1]), ignore_index=1, reduction="sum"),
    "ce ls out of bounds": lambda lib, f: f.cross_entropy(_t(lib, _X), _t(lib, [1, 2, 9]),
                                                          label_smoothing=0.2),
    "ce ls 1d ignored": lambda lib, f: f.cross_entropy(
        _t(lib, _X[0], rg=True), _t(lib, -100), label_smoothing=0.2, reduction="none"),
    "ce weight requires grad": lambda lib, f: f.cross_entropy(
        _t(lib, _X, rg=True), _t(lib, [1, 0, 2]), weight=lib.ones(5, requires_grad=True)),
    "ce probabilities weight requires grad": lambda lib, f: f.cross_entropy(
        _t(lib, _X, rg=True), lib.ones(3, 5) / 5, weight=lib.ones(5, requires_grad=True)),
    "mse shapes": lambda lib, f: f.mse_loss(_t(lib, _X), lib.zeros(3, 4)),
    "mse int and int": lambda lib, f: f.mse_loss(lib.ones(3, dtype=lib.int64),
                                                 lib.ones(3, dtype=lib.int32)),
    "mse int input": lambda lib, f: f.mse_loss(lib.ones(3, dtype=lib.int64),
                                               lib.ones(3, requires_grad=True)),
    "mse bad reduction": lambda lib, f: f.mse_loss(_t(lib, _X), _t(lib, _X), reduction="foo"),
    "mse weight shape": lambda lib, f: f.mse_loss(_t(lib, _X), _t(lib, _X), weight=lib.ones(5)),
    "mse weight bad reduction": lambda lib, f: f.mse_loss(
        _t(lib, _X), _t(lib, _X), weight=lib.ones(3, 5), reduction="foo"),
    "mse empty": lambda lib, f: f.mse_loss(lib.zeros(0, requires_grad=True), lib.zeros(0)),
    "mse legacy sum": lambda lib, f: f.mse_loss(_t(lib, _X, rg=True), _t(lib, _X[::-1]),
                                                size_average=False),
    "mse legacy none": lambda lib, f: f.mse_loss(_t(lib, _X, rg=True), _t(lib, _X[::-1]),
                                                 reduce=False),
    "mse elementwise_mean": lambda lib, f: f.mse_loss(_t(lib, _X, rg=True), _t(lib, _X[::-1]),
                                                      reduction="elementwise_mean"),
    "l1 bool": lambda lib, f: f.l1_loss(_t(lib, _X, rg=True), lib.ones(3, 5, dtype=lib.bool)),
    "l1 int and int": lambda lib, f: f.l1_loss(lib.ones(3, dtype=lib.int64),
                                               lib.ones(3, dtype=lib.int64)),
    "l1 int and int sum": lambda lib, f: f.l1_loss(lib.ones(3, dtype=lib.int64),
                                                   lib.zeros(3, dtype=lib.int64), reduction="sum"),
    "smooth_l1 negative beta": lambda lib, f: f.smooth_l1_loss(_t(lib, _X), _t(lib, _X),
                                                               beta=-1.0),
    "smooth_l1 int and int": lambda lib, f: f.smooth_l1_loss(lib.ones(3, dtype=lib.int64),
                                                             lib.ones(3, dtype=lib.int64)),
    "huber delta 0": lambda lib, f: f.huber_loss(_t(lib, _X), _t(lib, _X), delta=0.0),
    "huber float64 target": lambda lib, f: f.huber_loss(_t(lib, _X, rg=True),
                                                        lib.ones(3, 5, dtype=lib.float64)),
    "huber float32 target": lambda lib, f: f.huber_loss(_t(lib, _X, lib.float64, rg=True),
                                                        lib.ones(3, 5)),
    "huber int target": lambda lib, f: f.huber_loss(_t(lib, _X, rg=True),
                                                    lib.ones(3, 5, dtype=lib.int64)),
    "huber int input": lambda lib, f: f.huber_loss(lib.ones(3, 5, dtype=lib.int64), _t(lib, _X)),
    "huber int and int": lambda lib, f: f.huber_loss(lib.ones(3, dtype=lib.int64),
                                                     lib.ones(3, dtype=lib.int64)),
    "huber weight shape": lambda lib, f: f.huber_loss(_t(lib, _X, rg=True), lib.zeros(3, 5),
                                                      weight=lib.ones(5)),
    "bce sizes": lambda lib, f: f.binary_cross_entropy(_t(lib, _P), lib.ones(4) / 2),
    "bce input range": lambda lib, f: f.binary_cross_entropy(_t(lib, _P) + 1, _t(lib, _P)),
    "bce nan input": lambda lib, f: f.binary_cross_entropy(_t(lib, _P) * float("nan"),
                                                           _t(lib, _P)),
    "bce target range": lambda lib, f: f.binary_cross_entropy(_t(lib, _P), _t(lib, _P) + 1),
    "bce dtypes": lambda lib, f: f.binary_cross_entropy(_t(lib, _P), _t(lib, _P, lib.float64)),
    "bce int target": lambda lib, f: f.binary_cross_entropy(_t(lib, _P),
                                                            lib.ones(2, 4, dtype=lib.int64)),
    "bce int and int": lambda lib, f: f.binary_cross_entropy(lib.ones(2, 4, dtype=lib.int64),
                                                             lib.ones(2, 4, dtype=lib.int64)),
    "bce weight shape": lambda lib, f: f.binary_cross_entropy(_t(lib, _P), _t(lib, _P),
                                                              weight=lib.ones(3)),
    "bce weight bigger": lambda lib, f: f.binary_cross_entropy(_t(lib, _P), _t(lib, _P),
                                                               weight=lib.ones(3, 2, 4)),
    "bce float64 weight": lambda lib, f: f.binary_cross_entropy(
        _t(lib, _P, rg=True), _t(lib, _P), weight=lib.ones(4, dtype=lib.float64) * 2),
    "bce weight requires grad": lambda lib, f: f.binary_cross_entropy(
        _t(lib, _P, rg=True), _t(lib, _P), weight=lib.ones(4, requires_grad=True)),
    "bce log clamped at -100": lambda lib, f: f.binary_cross_entropy(
        _t(lib, [0.0, 1.0, 0.5, 1e-30], rg=True), _t(lib, [0.3, 0.3, 0.0, 1.0]),
        reduction="none"),
    "bcel sizes": lambda lib, f: f.binary_cross_entropy_with_logits(_t(lib, _P), lib.ones(4)),
    "bcel int target": lambda lib, f: f.binary_cross_entropy_with_logits(
        _t(lib, _P), lib.ones(2, 4, dtype=lib.int64)),
    "bcel bool target": lambda lib, f: f.binary_cross_entropy_with_logits(
        _t(lib, _P), lib.ones(2, 4, dtype=lib.bool)),
    "bcel int input": lambda lib, f: f.binary_cross_entropy_with_logits(
        lib.ones(2, 4, dtype=lib.int64), _t(lib, _P)),
    "bcel weight bigger": lambda lib, f: f.binary_cross_entropy_with_logits(
        _t(lib, _P), _t(lib, _P), weight=lib.ones(2, 2, 4)),
    "bcel weight shape": lambda lib, f: f.binary_cross_entropy_with_logits(
        _t(lib, _P), _t(lib, _P), weight=lib.ones(5)),
    "bcel pos_weight shape": lambda lib, f: f.binary_cross_entropy_with_logits(
        _t(lib, _P), _t(lib, _P), pos_weight=lib.ones(3)),
    "bcel pos_weight bigger": lambda lib, f: f.binary_cross_entropy_with_logits(
        _t(lib, _P), _t(lib, _P), pos_weight=lib.ones(3, 2, 4)),
    "bcel weight requires grad": lambda lib, f: f.binary_cross_entropy_with_logits(
        _t(lib, _P), _t(lib, _P), weight=lib.ones(4, requires_grad=True)),
    "bcel pos_weight requires grad": lambda lib, f: f.binary_cross_entropy_with_logits(
        _t(lib, _P), _t(lib, _P), pos_weight=lib.ones(4, requires_grad=True)),
    "bcel large logits": lambda lib, f: f.binary_cross_entropy_with_logits(
        _t(lib, [-800.0, -30.0, 0.0, 30.0, 800.0], rg=True), _t(lib, [0.2, 1.0, 0.5, 0.0, 0.7]),
        reduction="none"),
    "kl int target": lambda lib, f: f.kl_div(_t(lib, _X, rg=True),
                                             lib.ones(3, 5, dtype=lib.int64)),
    "kl broadcast": lambda lib, f: f.kl_div(_t(lib, _X, rg=True), lib.ones(5) / 5),
    "kl bad reduction": lambda lib, f: f.kl_div(_t(lib, _X), _t(lib, _X), reduction="foo"),
    "kl zero target": lambda lib, f: f.kl_div(_t(lib, _X[0], rg=True),
                                              _t(lib, [0.0, 0.5, 0.5, 0.0, 0.0]),
                                              reduction="none"),
    "kl legacy batchmean": lambda lib, f: f.kl_div(_t(lib, _X, rg=True), lib.ones(3, 5) / 5,
                                                   reduce=True, reduction="batchmean"),
}


@pytest.mark.parametrize("key", list(ERRORS))
def test_errors_and_edge_values_match_torch(key):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _outcome(ERRORS[key], ng) == _outcome(ERRORS[key], torch)


def _edge(lib, fn, *datas):
    leaves = [lib.tensor(d, dtype=lib.float64, requires_grad=True) for d in datas]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib.nn.functional, *leaves)
    out.sum().backward()
    return [v.grad.numpy() for v in leaves]


EDGE = {
    "nll all ignored": (lambda f, x: f.nll_loss(x, ng_or_torch(x).tensor([-100] * 3)), _X),
    "nll zero weights": (lambda f, x: f.nll_loss(x, ng_or_torch(x).tensor([1, 2, 3]),
                                                 weight=ng_or_torch(x).zeros(5).double()), _X),
    "nll empty": (lambda f, x: f.nll_loss(x.reshape(0, 5), ng_or_torch(x).zeros(
        0, dtype=ng_or_torch(x).int64)), []),
    "bce log clamped at -100": (lambda f, x, t: f.binary_cross_entropy(x, t, reduction="none"),
                                [0.0, 1.0, 0.5, 1e-30, 1 - 1e-17], [0.3, 0.3, 0.0, 1.0, 0.3]),
    "bcel large logits": (lambda f, x, t: f.binary_cross_entropy_with_logits(
        x, t, pos_weight=ng_or_torch(x).full((5,), 2.0, dtype=x.dtype), reduction="none"),
        [-800.0, -30.0, 0.0, 30.0, 800.0], [0.2, 1.0, 0.5, 0.0, 0.7]),
    "kl zero target": (lambda f, x: f.kl_div(x, ng_or_torch(x).tensor(
        [0.0, 0.5, 0.5, 0.0], dtype=x.dtype), reduction="none"), [0.1, -0.3, 0.5, 1.0]),
    "ce ls all ignored": (lambda f, x: f.cross_entropy(x, ng_or_torch(x).tensor([-100] * 3),
                                                       label_smoothing=0.2), _X),
    "ce ls 1d ignored": (lambda f, x: f.cross_entropy(x, ng_or_torch(x).tensor(-100),
                                                      label_smoothing=0.2, reduction="none"),
                         _X[0]),
    "mse empty": (lambda f, x, t: f.mse_loss(x, t), [], []),
}


def ng_or_torch(t):
    return ng if isinstance(t, ng.Tensor) else torch


@pytest.mark.parametrize("key", list(EDGE))
def test_edge_gradients_match_torch(key):
    """Gradients where torch's kernels clamp or divide by zero: nan, inf and zeros agree."""
    fn, *datas = EDGE[key]
    for mine, theirs in zip(_edge(ng, fn, *datas), _edge(torch, fn, *datas)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_kl_div_target_gradient_at_zero_is_finite():
    """A documented difference: where the target is 0, torch's xlogy(t, t) has a nan
    derivative; ours is 0, so the target's gradient there is -input (elsewhere they agree)."""
    grads = []
    for lib in (ng, torch):
        x = lib.tensor([0.1, -0.3, 0.5, 1.0], dtype=lib.float64, requires_grad=True)
        t = lib.tensor([0.0, 0.5, 0.25, 0.0], dtype=lib.float64, requires_grad=True)
        lib.nn.functional.kl_div(x, t, reduction="sum").backward()
        grads.append((x.grad.numpy(), t.grad.numpy()))
    (gx, gt), (gx_t, gt_t) = grads
    np.testing.assert_allclose(gx, gx_t, rtol=1e-12)
    np.testing.assert_allclose(gt[[1, 2]], gt_t[[1, 2]], rtol=1e-12)
    assert np.isnan(gt_t[[0, 3]]).all()
    np.testing.assert_array_equal(gt[[0, 3]], [-0.1, -1.0])


# ---- warnings -------------------------------------------------------------------------------
WARNS = {
    "size": lambda lib, f: f.mse_loss(lib.zeros(3, 4), lib.zeros(4)),
    "size l1": lambda lib, f: f.l1_loss(lib.zeros(3, 4), lib.zeros(1, 4)),
    "size smooth_l1": lambda lib, f: f.smooth_l1_loss(lib.zeros(3, 4), lib.zeros(4)),
    "size huber": lambda lib, f: f.huber_loss(lib.zeros(3, 1), lib.zeros(4)),
    "legacy": lambda lib, f: f.l1_loss(lib.zeros(3), lib.zeros(3), size_average=False),
    "legacy nll": lambda lib, f: f.nll_loss(lib.zeros(2, 3), _i(lib, 2), reduce=False),
    "legacy ce": lambda lib, f: f.cross_entropy(lib.zeros(2, 3), _i(lib, 2), size_average=True),
    "legacy bce": lambda lib, f: f.binary_cross_entropy(lib.ones(2) / 2, lib.ones(2) / 2,
                                                        reduce=False),
    "kl mean": lambda lib, f: f.kl_div(lib.zeros(3), lib.ones(3) / 3),
    "elementwise_mean": lambda lib, f: f.mse_loss(lib.zeros(3), lib.zeros(3),
                                                  reduction="elementwise_mean"),
    "none": lambda lib, f: f.kl_div(lib.zeros(3), lib.ones(3) / 3, reduction="batchmean"),
}


@pytest.mark.parametrize("key", list(WARNS))
def test_warnings_match_torch(key):
    def messages(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            WARNS[key](lib, lib.nn.functional)
        return [(w.category.__name__, str(w.message)) for w in caught
                if not issubclass(w.category, ResourceWarning)]  # (gc's, not the loss's)
    ours, theirs = messages(ng), messages(torch)
    assert ours == theirs
    if key != "none":
        assert ours


# ---- Modules ---------------------------------------------------------------------------------
def _modules(lib):
    nn = lib.nn
    w = lib.tensor([1.0, 2.0, 0.5])
    return [nn.MSELoss(), nn.L1Loss(reduction="sum"), nn.SmoothL1Loss(beta=0.5),
            nn.HuberLoss(delta=2), nn.BCELoss(weight=w), nn.BCEWithLogitsLoss(pos_weight=w),
            nn.CrossEntropyLoss(weight=w, label_smoothing=0.1, ignore_index=1),
            nn.NLLLoss(reduction="none"), nn.KLDivLoss(reduction="batchmean", log_target=True),
            nn.CrossEntropyLoss()]


def test_module_reprs_buffers_and_attributes_match_torch():
    def describe(lib):
        return [(repr(m), m.reduction, sorted(m.state_dict()),
                 [(n, None if b is None else b.tolist()) for n, b in m._buffers.items()],
                 {k: getattr(m, k) for k in ("beta", "delta", "ignore_index", "label_smoothing",
                                             "log_target") if hasattr(m, k)})
                for m in _modules(lib)]
    assert describe(ng) == describe(torch)


def test_module_legacy_arguments_match_torch():
    def run(lib):
        nn = lib.nn
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ms = [nn.MSELoss(size_average=False), nn.L1Loss(reduce=False),
                  nn.NLLLoss(size_average=True, reduce=True), nn.KLDivLoss(reduce=True),
                  nn.CrossEntropyLoss(None, False), nn.BCELoss(reduce=False, reduction="sum")]
        return [m.reduction for m in ms], [str(w.message) for w in caught
                                           if not issubclass(w.category, ResourceWarning)]
    assert run(ng) == run(torch)
    for lib in (ng, torch):
        with pytest.raises(TypeError, match="delta must be a float or int, got: <class 'str'>"):
            lib.nn.HuberLoss(delta="1")


def test_modules_forward_like_torch():
    rng = np.random.default_rng(9)
    x = rng.uniform(-2, 2, (4, 3))
    p = rng.uniform(0.05, 0.95, (4, 3))
    idx = np.array([0, 2, 1, 1])

    def run(lib):
        outs = []
        for m in _modules(lib):
            a = lib.tensor(x, dtype=lib.float32, requires_grad=True)
            name = type(m).__name__
            if name == "BCELoss":
                out = m(lib.tensor(p, dtype=lib.float32, requires_grad=True),
                        lib.tensor(p[::-1].copy(), dtype=lib.float32))
            elif name in ("CrossEntropyLoss", "NLLLoss"):
                out = m(a, lib.tensor(idx))
            else:
                out = m(a, lib.tensor(p, dtype=lib.float32))
            out.sum().backward()
            outs.append((out.grad_fn.name(), np.round(out.detach().numpy(), 5).tolist()))
        return outs
    assert run(ng) == run(torch)


def test_module_double_converts_weight_buffer():
    m = ng.nn.CrossEntropyLoss(weight=ng.tensor([1.0, 2.0, 3.0]))
    m.double()
    assert m.weight.dtype is ng.float64
    x = ng.tensor(np.ones((2, 3)), dtype=ng.float64, requires_grad=True)
    assert m(x, ng.tensor([0, 2])).dtype is ng.float64


_LOSS_NAMES = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
               "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy", "kl_div"]


@pytest.mark.parametrize("name", _LOSS_NAMES)
def test_a_loss_given_an_array_raises_torchs_type_error(name):
    """A NumPy array (or a list) where a Tensor belongs: torch's TypeError naming the
    argument, not an AttributeError from inside the loss."""
    fn = getattr(ng.nn.functional, name)
    x = ng.rand(3, 5)
    target = np.zeros(3, np.int64) if name in ("nll_loss", "cross_entropy") else np.zeros((3, 5))
    with pytest.raises(TypeError, match=r"\(\): argument 'target' \(position 2\) must be "
                                        r"Tensor, not numpy.ndarray"):
        fn(x, target)
    with pytest.raises(TypeError, match=r"argument 'input' \(position 1\) must be Tensor, "
                                        r"not list"):
        fn(x.tolist(), ng.tensor(target))
    if name in ("nll_loss", "cross_entropy"):  # torch's names for these two are its kernels'
        try:
            getattr(torch.nn.functional, name)(torch.rand(3, 5), target)
        except TypeError as e:
            with pytest.raises(TypeError, match=re.escape(str(e))):
                fn(x, target)
