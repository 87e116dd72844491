"""Margin, ranking, embedding, Poisson and Gaussian NLL losses against torch: values,
gradients (float64 and float32), node names, module reprs, errors."""

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
A, B, C = R.standard_normal((4, 5)), R.standard_normal((4, 5)), R.standard_normal((4, 5))
SIGN = np.where(R.random(4) > 0.5, 1.0, -1.0)
SIGN2D = np.where(R.random((4, 5)) > 0.5, 1.0, -1.0)
MULTI = (R.random((4, 5)) > 0.5).astype(float)
COUNTS = R.integers(0, 5, (4, 5)).astype(float)
CLASSES = np.array([0, 3, 1, 4])

CALLS = [
    "F.margin_ranking_loss(a[:, 0], b[:, 0], s, margin=0.3)",
    "F.margin_ranking_loss(a[:, 0], b[:, 0], s, reduction='none')",
    "F.hinge_embedding_loss(a, s2, margin=0.5)",
    "F.hinge_embedding_loss(a, s2, reduction='sum')",
    "F.soft_margin_loss(a, s2)",
    "F.multilabel_soft_margin_loss(a, m)",
    "F.multilabel_soft_margin_loss(a, m, weight=c.abs()[0], reduction='none')",
    "F.cosine_embedding_loss(a, b, s, margin=0.2)",
    "F.cosine_embedding_loss(a, b, s, reduction='none')",
    "F.triplet_margin_loss(a, b, c)",
    "F.triplet_margin_loss(a, b, c, margin=2.0, p=1, swap=True, reduction='sum')",
    "F.poisson_nll_loss(a, k)",
    "F.poisson_nll_loss(a.abs(), k, log_input=False, full=True)",
    "F.gaussian_nll_loss(a, b, c.abs() + 0.1)",
    "F.gaussian_nll_loss(a, b, c[:, 0].abs(), full=True, reduction='sum')",
    "F.multi_margin_loss(a, y)",
    "F.multi_margin_loss(a, y, p=2, margin=0.5, weight=c.abs()[0].detach(), reduction='none')",
]


def _run(lib, call, dtype):
    dt = getattr(lib, dtype)
    ts = {n: lib.tensor(v, dtype=dt, requires_grad=True) for n, v in
          (("a", A), ("b", B), ("c", C))}
    env = {"F": lib.nn.functional, **ts, "s": lib.tensor(SIGN, dtype=dt),
           "s2": lib.tensor(SIGN2D, dtype=dt), "m": lib.tensor(MULTI, dtype=dt),
           "k": lib.tensor(COUNTS, dtype=dt), "y": lib.tensor(CLASSES)}
    out = eval(call, env)  # noqa: S307 - test expressions
    out.backward(lib.ones_like(out))
    return out.detach().numpy(), {n: t.grad for n, t in ts.items()}, out.grad_fn.name()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("call", CALLS)
def test_values_and_gradients_as_torch(call, dtype):
    v_t, g_t, name_t = _run(torch, call, dtype)
    v_n, g_n, name_n = _run(ng, call, dtype)
    tol = dict(rtol=2e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(v_n, v_t, **tol)
    for k in g_t:
        assert (g_n[k] is None) == (g_t[k] is None)
        if g_t[k] is not None:
            np.testing.assert_allclose(g_n[k].numpy(), g_t[k].numpy(), **tol)
    if "soft_margin_loss(a, s2)" not in call and "multi_margin" not in call:
        assert name_n == name_t  # (those two are one kernel in torch: README)


def test_second_derivatives_as_torch():
    out = []
    for lib in (torch, ng):
        a = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        loss = lib.nn.functional.cosine_embedding_loss(a, b, lib.tensor(SIGN)) + \
            lib.nn.functional.poisson_nll_loss(a, lib.tensor(COUNTS))
        (g,) = lib.autograd.grad(loss, a, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), b)
        out.append(h.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-10, atol=1e-13)


MODULES = ["MarginRankingLoss(margin=0.5)", "HingeEmbeddingLoss()", "SoftMarginLoss()",
           "MultiLabelSoftMarginLoss()", "CosineEmbeddingLoss(0.1)", "TripletMarginLoss()",
           "PoissonNLLLoss()", "GaussianNLLLoss()", "MultiMarginLoss(p=2)"]


@pytest.mark.parametrize("expr", MODULES)
def test_module_reprs_and_attributes_as_torch(expr):
    mods = [eval("lib.nn." + expr, {"lib": lib}) for lib in (torch, ng)]  # noqa: S307
    assert repr(mods[1]) == repr(mods[0])
    for attr in ("reduction", "margin", "p", "eps", "swap", "log_input", "full"):
        assert getattr(mods[1], attr, None) == getattr(mods[0], attr, None)


ERRORS = ["F.margin_ranking_loss(a, b[0], s)", "F.multi_margin_loss(a, y, p=3)",
          "F.gaussian_nll_loss(a, b, c[:2])", "F.gaussian_nll_loss(a, b, -c.abs())",
          "F.triplet_margin_loss(a, b, c[0])", "lib.nn.TripletMarginLoss(margin=-1.0)",
          "F.soft_margin_loss(a, b, reduction='avg')", "F.gaussian_nll_loss(a, b, c[:, :2].abs())",
          "F.multi_margin_loss(a, y, weight=lib.ones(5, requires_grad=True))"]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_as_torch(call):
    caught = []
    for lib in (torch, ng):
        env = {"F": lib.nn.functional, "lib": lib, "a": lib.tensor(A), "b": lib.tensor(B),
               "c": lib.tensor(C), "s": lib.tensor(SIGN), "y": lib.tensor(CLASSES)}
        with pytest.raises(Exception) as e:
            eval(call, env)  # noqa: S307
        caught.append((type(e.value), str(e.value)))
    assert caught[1] == caught[0]
