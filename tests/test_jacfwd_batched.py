"""jacfwd's one batched forward pass (autograd/forward_ad_batched.py) against torch.func.jacfwd:
each op's tangents for all the Jacobian's columns at once, by its vectorized rule or its own
rule once per column; and the pass per column where the batch cannot go (a tangent due a
graph, a function reading its tangent)."""

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.func  # noqa: F401 - binds ng.func
import numbagrad.func.transforms as tr

torch = pytest.importorskip("torch")
torch_func = pytest.importorskip("torch.func")

RNG = np.random.default_rng(7)
X = RNG.standard_normal(3)
Y = RNG.standard_normal((2, 3))
A = RNG.standard_normal((5, 3))
M = RNG.standard_normal((3, 4))
W = RNG.standard_normal((4, 3))
BIAS = RNG.standard_normal(4)
B3 = RNG.standard_normal((2, 3, 2))


def _t(lib, a, dtype):
    return lib.tensor(a, dtype=getattr(lib, dtype))


# name -> (function of (lib, c) where c(a) makes a constant, argument arrays, argnums)
CASES = {
    "mv_tanh_times_sum": (lambda lib, c: lambda x: lib.tanh(c(A) @ x) * x.sum(), (X,), 0),
    "mm_exp": (lambda lib, c: lambda y: (y @ c(M)).exp(), (Y,), 0),
    "transpose_sin": (lambda lib, c: lambda y: y.T.sin(), (Y,), 0),
    "slice_times_2": (lambda lib, c: lambda y: y[:, 1:] * 2, (Y,), 0),
    "sum_dim_keepdim": (lambda lib, c: lambda y: (y * y).sum(dim=0, keepdim=True), (Y,), 0),
    "mean_dim": (lambda lib, c: lambda y: y.exp().mean(dim=1), (Y,), 0),
    "mean_all": (lambda lib, c: lambda y: (y ** 3).mean(), (Y,), 0),
    "reshape_cumsum": (lambda lib, c: lambda y: y.reshape(6).cumsum(0), (Y,), 0),
    "softmax": (lambda lib, c: lambda y: lib.softmax(y, dim=1), (Y,), 0),
    "broadcast_product_two_args": (lambda lib, c: lambda x, y: (x * y).sum(1), (X, Y), (0, 1)),
    "addmm": (lambda lib, c: lambda y: lib.addmm(c(BIAS), y, c(W).T, beta=0.5, alpha=2.0),
              (Y,), 0),
    "linear_bias_and_input": (lambda lib, c: lambda y, b: lib.nn.functional.linear(
        y, c(W), b), (Y, BIAS), (0, 1)),
    "bmm": (lambda lib, c: lambda b: lib.bmm(b, c(B3).transpose(1, 2)), (B3,), 0),
    "dot_both_sides": (lambda lib, c: lambda x: x.dot(x.sin()), (X,), 0),
    "stack": (lambda lib, c: lambda x: lib.stack([x, x * 2]), (X,), 0),
    "where": (lambda lib, c: lambda x: lib.where(x > 0, x, x ** 2), (X,), 0),
    "quotient": (lambda lib, c: lambda x: x.pow(3) / (1 + x.abs()), (X,), 0),
    "clamp": (lambda lib, c: lambda x: x.clamp(-0.5, 0.5) * x, (X,), 0),
    "conv1d": (lambda lib, c: lambda x: lib.nn.functional.conv1d(
        x.reshape(1, 1, 3), c(np.array([[[0.5, -1.0]]]))), (X,), 0),
    "independent_output": (lambda lib, c: lambda x: c(A).sum() * 2, (X,), 0),
    "zero_d_input": (lambda lib, c: lambda s: (s * c(X)).exp(), (np.array(0.3),), 0),
}
# the ops each case's batch runs once per column (the others are vectorized)
PER_COLUMN = {"transpose_sin", "slice_times_2", "reshape_cumsum", "softmax", "stack",
              "conv1d", "where"}


def _jacobian(lib, case, dtype):
    make, args, argnums = CASES[case]
    fn = make(lib, lambda a: _t(lib, a, dtype))
    return lib.func.jacfwd(fn, argnums=argnums)(*[_t(lib, a, dtype) for a in args])


def _flat(j):
    if isinstance(j, (tuple, list)):
        return [x for part in j for x in _flat(part)]
    return [j]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_batched_jacobian_is_torchs(case, dtype, monkeypatch):
    columns = []
    real = tr._jacobian_by_columns
    monkeypatch.setattr(tr, "_jacobian_by_columns",
                        lambda *a: (columns.append(1), real(*a))[1])
    ours = _flat(_jacobian(ng, case, dtype))
    theirs = _flat(_jacobian(torch, case, dtype))
    assert columns == []  # one batched pass
    rtol = 1e-10 if dtype == "float64" else 2e-5
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=rtol, atol=rtol)


def test_vectorized_rules_run_no_column_loop(monkeypatch):
    """The products, sums, reshapes and elementwise ops of the benchmark's function never
    fall to the per-column loop."""
    from numbagrad.autograd import forward_ad_batched as batched
    per_column = []
    real = batched._per_column
    monkeypatch.setattr(batched, "_per_column", lambda op, *a: (per_column.append(op.name),
                                                                real(op, *a))[1])
    for case in sorted(set(CASES) - PER_COLUMN):
        _jacobian(ng, case, "float64")
    assert per_column == []


def test_graph_due_or_tangent_read_falls_back_to_columns(monkeypatch):
    """A closed-over weight that requires grad (its tangents are due a graph) and a function
    reading its input's tangent take one pass per column, with torch's values."""
    columns = []
    real = tr._jacobian_by_columns
    monkeypatch.setattr(tr, "_jacobian_by_columns",
                        lambda *a: (columns.append(1), real(*a))[1])
    results = []
    for lib in (ng, torch):
        w = lib.tensor(W[0], requires_grad=True)
        results.append(lib.func.jacfwd(lambda x, w=w: (w * x).sin())(lib.tensor(X)))
    assert columns == [1]
    assert results[0].requires_grad and results[1].requires_grad
    np.testing.assert_allclose(results[0].detach().numpy(), results[1].detach().numpy(),
                               rtol=1e-10)

    def reads_tangent(x):
        ng.autograd.forward_ad.unpack_dual(x)
        return x * 2
    j = ng.func.jacfwd(reads_tangent)(ng.tensor(X))
    assert columns == [1, 1]
    np.testing.assert_array_equal(j.numpy(), 2 * np.eye(3))


@pytest.mark.parametrize("name", ["grad", "jacrev", "jacfwd", "vjp", "jvp", "hessian"])
def test_closed_over_weights_keep_their_graph(name):
    """A transform of a function using a module's weights (closed over, requiring grad)
    returns results with a graph to them, as torch's: a loss on a derivative trains the
    weights (physics-informed networks). Without such a tensor, or under no_grad, none."""
    def run(lib, closed=True, outer_grad=True):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
        for p, a in zip(model.parameters(), _weights()):
            p.data = lib.tensor(a)
        if not closed:
            model.requires_grad_(False)
        x = lib.tensor(X)

        def f(v):
            out = model(v.reshape(1, 3)).reshape(2)
            return out.sum() if name in ("grad", "hessian") else out
        ctx = torch.enable_grad() if outer_grad else torch.no_grad()
        nctx = ng.enable_grad() if outer_grad else ng.no_grad()
        with (ctx if lib is torch else nctx):
            if name == "vjp":
                r = lib.func.vjp(f, x)[1](lib.ones(2))[0]
            elif name == "jvp":
                r = lib.func.jvp(f, (x,), (lib.tensor(X[::-1].copy()),))[1]
            else:
                r = getattr(lib.func, name)(f)(x)
        if not r.requires_grad:
            return r.detach().numpy(), None
        (r ** 2).sum().backward()
        return r.detach().numpy(), [None if p.grad is None else p.grad.numpy()
                                    for p in model.parameters()]

    for kw in ({}, {"closed": False}, {"outer_grad": False}):
        ours, theirs = run(ng, **kw), run(torch, **kw)
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
        assert (ours[1] is None) == (theirs[1] is None), kw
        if theirs[1] is not None:
            for a, b in zip(ours[1], theirs[1]):
                assert (a is None) == (b is None)
                if b is not None:
                    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def _weights():
    rng = np.random.default_rng(3)
    return [rng.standard_normal(s) * 0.5 for s in ((4, 3), (4,), (2, 4), (2,))]
