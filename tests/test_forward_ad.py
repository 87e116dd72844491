"""numbagrad.autograd.forward_ad against torch.autograd.forward_ad: the same script run with
``lib`` = numbagrad or torch gives the same primals and tangents (float64 to 1e-12) and the
same errors; tangents do not outlive their tensors, and eager mode outside a level is as
before."""

import gc
import weakref

import numpy as np
import pytest
from torch_oracle import same_as_torch

import numbagrad as ng
import numbagrad.func  # noqa: F401 - binds ng.func
from numbagrad.autograd import forward_ad as ng_fwd
from numbagrad.engine import record as record_module

torch = pytest.importorskip("torch")
pytest.importorskip("torch.func")  # binds torch.func

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4))
TA = RNG.standard_normal((3, 4))
B = RNG.standard_normal(4)
TB = RNG.standard_normal(4)
W = RNG.standard_normal((4, 5))
TW = RNG.standard_normal((4, 5))
P = RNG.uniform(0.5, 2.0, (3, 4))  # positive values for log, sqrt, pow


def fwd(lib):
    return lib.autograd.forward_ad


def dual_run(body, dtype="float64", requires_grad=False):
    """``fn(lib)``: under a dual level, a (3,4), b (4,) and w (4,5) dual tensors handed to
    ``body(lib, a, b, w)``; the result's (primal, tangent) per output."""
    def fn(lib):
        dt = getattr(lib, dtype)
        fw = fwd(lib)
        with fw.dual_level():
            def dual(v, t):
                x = lib.tensor(v, dtype=dt, requires_grad=requires_grad)
                return fw.make_dual(x, lib.tensor(t, dtype=dt))
            out = body(lib, dual(A, TA), dual(B, TB), dual(W, TW))
            outs = out if isinstance(out, tuple) else (out,)
            result = []
            for o in outs:
                p, t = fw.unpack_dual(o)
                result += [p.detach(), t]
            return result
    return fn


ELEMENTWISE = {
    "sin_exp": lambda lib, a, b, w: a.sin() * a.exp(),
    "tanh_sigmoid": lambda lib, a, b, w: lib.tanh(a) - lib.sigmoid(a) / 3.0,
    "log_sqrt_pow": lambda lib, a, b, w: (a * a + 1.0).log() + (a * a).sqrt() + (a * a) ** 1.5,
    "broadcast_mul_div": lambda lib, a, b, w: a * b - a / (b * b + 2.0),
    "pow_minimum": lambda lib, a, b, w: (a * a + 1.0) ** b + lib.minimum(b, a),
    "relu_abs_clamp": lambda lib, a, b, w: lib.relu(a) + a.abs() * b + a.clamp(-0.5, 0.5),
    "maximum_where": lambda lib, a, b, w: lib.maximum(a, b) + lib.where(a > 0, a, b * 2.0),
    "erf_gelu": lambda lib, a, b, w: lib.erf(a) + lib.nn.functional.gelu(a * b),
    "scalar_ops": lambda lib, a, b, w: 2.0 - a * 3.0 + 1.0 / (a * a + 1.0),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_tangents(name):
    same_as_torch(dual_run(ELEMENTWISE[name]))


STRUCTURED = {
    "matmul": lambda lib, a, b, w: (a @ w, a @ b, b @ b, lib.mm(a, w)),
    "bmm_addmm": lambda lib, a, b, w: (lib.bmm(a.reshape(1, 3, 4), w.reshape(1, 4, 5)),
                                     lib.addmm(b[:3].reshape(3, 1), a, w, beta=0.5, alpha=2.0)),
    "reshape_views": lambda lib, a, b, w: (a.reshape(2, 6), a.t(), a.permute(1, 0)[1:3],
                                         a.unsqueeze(0).transpose(0, 2), a[1], a[:, ::2],
                                         w.flatten()[3:11:3], a.view(12).squeeze()),
    "index_cat_stack": lambda lib, a, b, w: (a[[0, 2, 2]], a[:, [1, 3]],
                                           lib.cat([a, b.unsqueeze(0)], 0),
                                           lib.stack([b, b * 2.0], 1),
                                           lib.gather(a, 1, lib.tensor([[0, 0], [1, 3], [2, 1]])),
                                           lib.index_select(w, 1, lib.tensor([4, 0]))),
    "reductions": lambda lib, a, b, w: (a.sum(), a.sum(0), a.mean(1, keepdim=True), a.mean(),
                                      b.expand(3, 4) * a, b.repeat(2)),
    "split_unbind": lambda lib, a, b, w: (*a.split(2, 1), *a.unbind(0), a.chunk(2, 0)[1]),
    "softmax": lambda lib, a, b, w: (lib.softmax(a, 1), lib.log_softmax(a, 0),
                                   lib.nn.functional.softmax(b, 0)),
    "casts_copies_nn": lambda lib, a, b, w: (
        a.clone(), a.t().contiguous(), a.to(lib.float32), a.detach(), a.masked_fill(a > 0, 1.5),
        lib.nn.functional.linear(a, w.t(), b.exp()[[0, 1, 2, 0, 1]]),  # F.linear's fast path
        lib.nn.functional.linear(a.reshape(3, 2, 2), w[:2].t(), w[0]),
        lib.nn.functional.cross_entropy(a, lib.tensor([0, 3, 1])),
        lib.nn.functional.batch_norm(a, lib.zeros(4, dtype=a.dtype), lib.ones(4, dtype=a.dtype),
                                     b, b * 2.0, training=True)),
    "fallback_ops": lambda lib, a, b, w: (a.var(0), a.std(), a.norm(), lib.logsumexp(a, 1),
                                        a.prod(1), a.amax(0), a.max(1).values,
                                        lib.nn.functional.mse_loss(a, b.expand(3, 4)),
                                        lib.nn.functional.layer_norm(a, (4,), b, b * 0.5)),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_structured_tangents(name, requires_grad):
    same_as_torch(dual_run(STRUCTURED[name], requires_grad=requires_grad))


def mlp(lib, a, b, w):
    hidden = lib.tanh(lib.nn.functional.linear(a, w.t(), b[:3].exp()[[0, 1, 2, 0, 1]]))
    return lib.softmax(hidden, dim=-1).mul(lib.arange(5.0, dtype=hidden.dtype)).sum()


def test_small_mlp():
    same_as_torch(dual_run(mlp))


def test_float32_and_no_grad():
    same_as_torch(dual_run(lambda lib, a, b, w: (a.sin() * b, a @ w), dtype="float32"), 5)

    def under_no_grad(lib, a, b, w):
        with lib.no_grad():
            return (a * b).exp(), lib.softmax(a, 0)
    same_as_torch(dual_run(under_no_grad))


def test_plain_tensors_and_tangent_free_results():
    def fn(lib):
        fw = fwd(lib)
        x = lib.tensor(A)
        outside = fw.unpack_dual(x)
        with fw.dual_level() as level:
            d = fw.make_dual(x, lib.tensor(TA))
            plain = fw.unpack_dual(x * 2.0)  # no tangent: x itself is no dual tensor
            ints = fw.unpack_dual(d.argmax(1))  # integer result: no tangent
            is_view = d._base is x
            kept = d
        after = fw.unpack_dual(kept)  # the level is gone, and its tangents
        return (level, outside.tangent, plain.tangent, ints.tangent, after.tangent, is_view,
                type(outside).__name__, outside._fields)
    same_as_torch(fn)


ERRORS = {
    "outside_level": lambda lib, fw: fw.make_dual(lib.tensor(A), lib.tensor(TA)),
    "shape_mismatch": lambda lib, fw: fw.make_dual(lib.tensor(A), lib.tensor(B)),
    "integer_primal": lambda lib, fw: fw.make_dual(lib.tensor([1, 2]), lib.tensor([1.0, 2.0])),
    "bad_level": lambda lib, fw: fw.make_dual(lib.tensor(A), lib.tensor(TA), level=3),
    "nested": lambda lib, fw: fw.dual_level().__enter__(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    def fn(lib):
        fw = fwd(lib)
        if name == "outside_level":
            return ERRORS[name](lib, fw)
        with fw.dual_level():
            return ERRORS[name](lib, fw)
    same_as_torch(fn)


def test_exit_without_level():
    same_as_torch(lambda lib: fwd(lib).exit_dual_level())


def test_enter_exit_functions():
    def fn(lib):
        fw = fwd(lib)
        level = fw.enter_dual_level()
        try:
            t = fw.unpack_dual(fw.make_dual(lib.tensor(B), lib.tensor(TB)).cos()).tangent
        finally:
            fw.exit_dual_level(level=level)
        return level, t
    same_as_torch(fn)


def test_tangents_do_not_leak():
    with ng_fwd.dual_level():
        x = ng_fwd.make_dual(ng.tensor(A), ng.tensor(TA))
        y = (x.sin() * 2.0).sum(0)
        tangent_ref = weakref.ref(ng_fwd.unpack_dual(y).tangent)
        refs = [weakref.ref(x), weakref.ref(y)]
        del x, y
        gc.collect()
        assert all(r() is None for r in refs)
        assert tangent_ref() is None
        assert not ng_fwd._tangents  # every entry dropped with its tensor
    assert record_module.forward_hook is None


def test_eager_graph_unchanged_and_reverse_mode_through_primal():
    """Outside a level the hook is off; inside, reverse mode still sees the primal graph:
    gradients and grad_fn names as torch's, with and without a dual level."""
    def fn(lib):
        fw = fwd(lib)
        x = lib.tensor(A, requires_grad=True)
        plain = (x.sin() * x).sum()
        g_plain, = lib.autograd.grad(plain, x)
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor(TA))
            y = (d.sin() * d).sum()
            g_dual, = lib.autograd.grad(y, x)
            names = (d.grad_fn.name(), y.grad_fn.name())
            tangent = fw.unpack_dual(y).tangent
        return g_plain, g_dual, names, tangent, plain.grad_fn.name()
    same_as_torch(fn)
    assert record_module.forward_hook is None


def test_inplace_ops_hand_over_the_tangent():
    def fn(lib):
        fw = fwd(lib)
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(B), lib.tensor(TB))
            y = lib.zeros(4, dtype=lib.float64)
            y.add_(d * 2.0)
            y.mul_(d)
            z = d.clone()
            z.clamp_(-0.5, 0.5)
            return fw.unpack_dual(y), fw.unpack_dual(z)
    same_as_torch(fn)


def test_func_jvp_runs_in_forward_mode():
    seen = []

    def f(lib):
        def body(a, w):
            if lib is ng:
                seen.append(ng_fwd.unpack_dual(a).tangent is not None)
            return lib.softmax(lib.tanh(a @ w), -1).sum(0), (a * a).sum()
        return lib.func.jvp(body, (lib.tensor(A), lib.tensor(W)),
                            (lib.tensor(TA), lib.tensor(TW)))
    same_as_torch(f)
    assert seen == [True]


def test_stale_view_tangent_raises_and_decorator():
    @ng_fwd.dual_level()
    def modified_base():
        x = ng.tensor(A)
        d = ng_fwd.make_dual(x, ng.tensor(TA))
        x.mul_(2.0)  # d, a view of x, changed under its tangent
        return d.sin()
    with pytest.raises(RuntimeError, match="modified in place through a view"):
        modified_base()
    assert record_module.forward_hook is None and ng_fwd._current_level == -1


def test_custom_function_without_jvp_raises_torchs_error_on_a_dual_input():
    for lib in (torch, ng):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            d = fwad.make_dual(lib.ones(2), lib.ones(2))
            with pytest.raises(NotImplementedError, match="must implement the jvp function"):
                Twice.apply(d)


_RECORDED_TANGENTS = {
    "chain": lambda lib, d, w: (d * w).sin() + d.exp() * 2.0,
    "sum": lambda lib, d, w: (d * w).sum(),
    "mean_dim": lambda lib, d, w: (d.reshape(2, 2) * w.reshape(2, 2)).mean(1),
    # (not softmax's and log_softmax's: torch's own reverse pass through their tangents
    # fails, an in-place op in its rule)
    "reshape": lambda lib, d, w: (d.tanh() * w).reshape(2, 2).sum(0, keepdim=True),
    "matmul_views": lambda lib, d, w: (d.reshape(2, 2) @ w.reshape(2, 2).T)[1:].exp(),
    "cat_expand": lambda lib, d, w: lib.cat([d, w]).expand(2, 8) * 1.5,
}


@pytest.mark.parametrize("name", sorted(_RECORDED_TANGENTS))
def test_tangents_are_recorded_for_reverse_mode(name):
    """A tangent computed from tensors that require grad keeps a graph, as torch's: its
    value, and the gradients of a loss on it (reverse over forward)."""
    f = _RECORDED_TANGENTS[name]
    results = []
    for lib in (torch, ng):
        fa = lib.autograd.forward_ad
        x = lib.tensor([0.3, -1.2, 0.7, 2.0], dtype=lib.float64, requires_grad=True)
        t = lib.tensor([0.5, -1.0, 0.25, 1.5], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([3.0, 0.4, -2.0, 1.1], dtype=lib.float64, requires_grad=True)
        with fa.dual_level():
            tangent = fa.unpack_dual(f(lib, fa.make_dual(x, t), w)).tangent
        name_of = type(tangent.grad_fn).__name__
        (tangent * tangent).sum().backward()
        # (torch gives a ZeroTensor where the tangent does not depend on a tensor)
        results.append((tangent.detach().numpy(), name_of,
                        [np.zeros(4) if v.grad is None else (v.grad + 0).detach().numpy()
                         for v in (x, t, w)]))
    (vt, nt, gt), (vn, nn_, gn) = results
    np.testing.assert_allclose(vn, vt, rtol=1e-12, atol=1e-14)
    # a graph, as torch's (its last node may differ: the derivative formulas are each's own)
    assert nt != "NoneType" and nn_ != "NoneType"
    for mine, theirs in zip(gn, gt):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_tangents_of_other_ops_carry_torchs_graph():
    """Where numbagrad's tangent rule is not written in recorded ops (cumsum's comes from its
    derivative), the tangent still has a graph (the double-vjp fallback), and a backward
    through it and everything computed from it gives torch's gradients."""
    def run(lib):
        fa = lib.autograd.forward_ad
        x = lib.tensor([[0.3, -1.2], [0.7, 2.0]], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([[1.0, 0.5], [-0.5, 2.0]], dtype=lib.float64, requires_grad=True)
        t0 = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        with fa.dual_level():
            d = fa.make_dual(x, t0)
            y = ((d.cumsum(0) @ w).sin() * w).sum()
            tangent = fa.unpack_dual(y).tangent
        tangent.backward()
        return [np.round(g.numpy(), 10).tolist() for g in (x.grad, w.grad, t0.grad)]
    same_as_torch(run)


_OVER_REVERSE = {
    "sin": lambda lib, x: x.sin().sum(),
    "square": lambda lib, x: (x * x).sum(),
    "sin_exp": lambda lib, x: (x.sin() * x.exp()).sum(),
    "matmul_tanh": lambda lib, x: (lib.tensor([[1.0, -0.5], [0.25, 2.0]], dtype=lib.float64)
                                   @ x).tanh().pow(2).sum(),
    "softmax": lambda lib, x: (x.softmax(0) * x).sum(),
}


@pytest.mark.parametrize("name", sorted(_OVER_REVERSE))
def test_forward_over_reverse(name):
    """Forward mode over reverse mode, as torch: the tangent of a gradient taken inside a dual
    level is the Hessian-vector product, by func.grad of a dual input and by autograd.grad
    with create_graph=True of a dual view."""
    f = _OVER_REVERSE[name]
    results = []
    for lib in (torch, ng):
        fa = lib.autograd.forward_ad
        x0 = lib.tensor([0.7, -1.3], dtype=lib.float64)
        v = lib.tensor([0.5, -1.0], dtype=lib.float64)
        with fa.dual_level():
            g = lib.func.grad(lambda x: f(lib, x))(fa.make_dual(x0, v))
            by_func = fa.unpack_dual(g).tangent
            no_graph = g.grad_fn is None and by_func.grad_fn is None
            xx = x0.clone().requires_grad_()
            (gx,) = lib.autograd.grad(f(lib, fa.make_dual(xx, v)), xx, create_graph=True)
            by_autograd = fa.unpack_dual(gx).tangent
        results.append((by_func.detach().numpy(), by_autograd.detach().numpy(), no_graph))
    (ft, at, nt), (fn, an, nn_) = results
    np.testing.assert_allclose(fn, ft, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(an, at, rtol=1e-12, atol=1e-14)
    assert nn_ == nt


# ops with no tangent rule written in recorded ops: their tangent gets a graph through the
# double-vjp fallback, and a loss on it differentiates as torch's
GRAPHED_FALLBACK = {
    "cumsum": lambda lib, x: x.cumsum(0),
    "norm": lambda lib, x: x.norm(),
    "vector_norm_dim": lambda lib, x: lib.linalg.vector_norm(x, dim=1),
    "prod": lambda lib, x: x.prod(1),
    "var": lambda lib, x: x.var(1),
    "max_dim": lambda lib, x: x.max(1)[0],
    "cummax": lambda lib, x: x.cummax(1)[0],
    "sort": lambda lib, x: x.sort(1)[0],
}
_X = [[1., 2.5, 3.], [0.4, -1.5, 6.]]
_W = [[0.3, -0.2, 0.5], [1., 0.7, -0.4]]


def _loss_on_tangent(lib, f, x_data=_X):
    fa = lib.autograd.forward_ad
    x = lib.tensor(x_data, dtype=lib.float64, requires_grad=True)
    w = lib.tensor(_W, dtype=lib.float64, requires_grad=True)
    with fa.dual_level():
        t = fa.unpack_dual(f(lib, fa.make_dual(x, w * 2))).tangent
        value = np.round(t.detach().numpy(), 10).tolist()
        t.sin().sum().backward()
    return value, np.round(x.grad.numpy(), 8).tolist(), np.round(w.grad.numpy(), 8).tolist()


@pytest.mark.parametrize("name", sorted(GRAPHED_FALLBACK))
def test_tangent_of_an_op_without_a_recorded_rule_has_torchs_graph(name):
    same_as_torch(lambda lib: _loss_on_tangent(lib, GRAPHED_FALLBACK[name]))


def test_layer_norm_tangent_graph_matches_finite_differences():
    """torch 2.13's layer_norm tangent differentiates to other values in x (its forward
    formula is not differentiated through the normalization); numbagrad's match finite
    differences, and the tangent itself and the w gradient match torch."""
    def f(lib, x):
        return lib.nn.functional.layer_norm(x, (3,))
    ours, theirs = _loss_on_tangent(ng, f), _loss_on_tangent(torch, f)
    assert ours[0] == theirs[0] and ours[2] == theirs[2]
    x0, eps = np.array(_X), 1e-6
    numeric = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        e = np.zeros_like(x0)
        e[i] = eps
        hi = np.sin(_loss_tangent_value(f, x0 + e)).sum()
        lo = np.sin(_loss_tangent_value(f, x0 - e)).sum()
        numeric[i] = (hi - lo) / (2 * eps)
    np.testing.assert_allclose(ours[1], numeric, rtol=1e-5, atol=1e-7)


def _loss_tangent_value(f, x_data):
    fa = ng.autograd.forward_ad
    with fa.dual_level():
        d = fa.make_dual(ng.tensor(x_data, dtype=ng.float64),
                         ng.tensor(np.array(_W) * 2, dtype=ng.float64))
        return fa.unpack_dual(f(ng, d)).tangent.numpy()
