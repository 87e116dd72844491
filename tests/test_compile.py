"""numbagrad.compile: replay equals eager for every op of the table, and the compiled
transforms behave as the eager ones (kinds, retracing, guards, errors, Numba, threads)."""

import threading

import numpy as np
import pytest
from numba import njit
from test_ops import CASES, IDS, _call, _first, _inputs

import numbagrad as ng
import numbagrad.func  # noqa: F401 - binds ng.func
from numbagrad.compiler import float32_nodes
from numbagrad.compiler import scalar_stream as replay_scalar
from numbagrad.core.tape import FLAG_NEEDS_GRAD, column
from numbagrad.engine import gemm
from numbagrad.engine.registry import OPS

# Ops compiled replay cannot run yet: compile raises NotImplementedError naming them. The
# README's Limitations lists the same; a new op or a new kernel must update both.
NOT_REPLAYABLE = {"py_function",
                  # random draws: compile refuses to trace them (test_api_creation.py)
                  "bernoulli", "bernoulli_float_", "bernoulli_tensor_", "exponential_",
                  "normal_", "normal_float_tensor", "normal_tensor_float", "normal_tensor_tensor",
                  "poisson", "random_", "random_from_to_", "random_to_", "uniform_",
                  # its step is its operands' own dtype's: a float64 formula rounded once to
                  # float32 would give back the input
                  "nextafter"}


class Cube(ng.autograd.Function):
    """A custom Function: its backward is Python, which replay cannot run (NOT_REPLAYABLE)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3.0 * x * x


def test_the_list_of_ops_without_replay_is_exact():
    assert {op.name for op in OPS if not op.replayable} == NOT_REPLAYABLE


def _weighted_sum(op, sample, n_inputs, seed):
    """f(x0, ..) = sum(op(x0, ..) * w): a random upstream gradient, not only ones."""
    rng = np.random.default_rng(seed)
    weights = {}

    def f(*xs):
        out = _first(_call(ng, op, sample, list(xs)))
        if out.dtype.is_floating_point is False:
            out = out.double()
        key = tuple(out.shape)
        if key not in weights:
            weights[key] = rng.uniform(0.5, 1.5, key)
        return (out * ng.tensor(weights[key], dtype=out.dtype)).sum()
    return f


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op,i,sample", CASES, ids=IDS)
def test_replay_equals_eager(op, i, sample, dtype):
    """Value and every gradient of a replay equal the eager transform's: float64 to a few
    ulps (summation and BLAS may round differently), float32 to float32 precision; and a
    second call with new inputs still matches (no value baked into the trace)."""
    if not op.replayable:
        pytest.skip(f"{op.name}: no replay kernel (NOT_REPLAYABLE)")
    rng = np.random.default_rng(7)
    arrays = _inputs(op, sample, rng, dtype)
    f = _weighted_sum(op, sample, len(arrays), seed=i)
    argnums = tuple(range(len(arrays)))
    eager = ng.func.value_and_grad(f, argnums=argnums)
    try:
        expected = eager(*arrays)
    except (RuntimeError, TypeError, IndexError, ValueError) as e:
        pytest.skip(f"the eager sample itself fails for {dtype.__name__}: {e}")
    compiled = ng.compile(eager)
    rtol = 1e-12 if dtype == np.float64 else 2e-5
    for attempt in range(2):
        value, grads = compiled(*arrays)
        ev, eg = expected
        np.testing.assert_allclose(value, ev, rtol=rtol, atol=rtol)
        for got, want in zip(grads, eg):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
        if sample.call and (">" in sample.call or "<" in sample.call):
            break  # a mask computed from the data is a constant of the trace (README)
        # new inputs, same signature: the replay must follow them
        arrays = _inputs(op, sample, np.random.default_rng(100 + attempt), dtype)
        expected = eager(*arrays)


# float32 replay is held to eager per element by test_replay_within_one_ulp_of_eager (small
# nodes); this tolerance test's float32 twin runs with -m exhaustive
test_replay_equals_eager.exhaustive_when = lambda p: p["dtype"] is np.float32


def ulps(a, b, dt=None):
    """Largest |a - b| in ulps of b's dtype (``dt`` for Python floats); inf where one is
    not finite and they differ."""
    b = np.asarray(b)
    dt = dt or b.dtype
    b = b.astype(dt) if b.dtype.kind == "f" else b
    a = np.asarray(a).astype(b.dtype)
    if a.size == 0:
        return 0
    fin = np.isfinite(a) & np.isfinite(b)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    sp = np.spacing(np.maximum(np.abs(a), np.abs(b)).astype(a.dtype))
    d = np.where(same, 0, np.where(fin, np.abs(a.astype(np.float64) - b) / sp, np.inf))
    return float(d.max())


@pytest.mark.parametrize("big", [False, True], ids=["small", "big"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op,i,sample", CASES, ids=IDS)
def test_replay_within_one_ulp_of_eager(op, i, sample, dtype, big, monkeypatch):
    """The replay's bar: it equals eager bit for bit or to 1 ulp per element, for the op's
    values (a compiled function of Tensors) and every gradient of sum(op(x) * w). ``big``:
    with the tape's BIG threshold at 1 element, eager takes every node down its big-node
    path (the op's parallel kernel or NumPy derivative, in the node's own dtype), and the
    replay hands the nodes it differentiates in float32 to the same kernels (eager_nodes)."""
    if not op.replayable:
        pytest.skip(f"{op.name}: no replay kernel (NOT_REPLAYABLE)")
    if big:
        monkeypatch.setattr(ng.core.tape, "BIG", 1)
    arrays = _inputs(op, sample, np.random.default_rng(7), dtype)
    eager = ng.func.value_and_grad(_weighted_sum(op, sample, len(arrays), seed=i),
                                   argnums=tuple(range(len(arrays))))
    try:
        _, eager_grads = eager(*arrays)
    except (RuntimeError, TypeError, IndexError, ValueError) as e:
        pytest.skip(f"the eager sample itself fails for {dtype.__name__}: {e}")
    _, grads = ng.compile(eager)(*arrays)

    def values(*xs):
        return _first(_call(ng, op, sample, list(xs)))
    tensors = [ng.tensor(a, requires_grad=True) for a in arrays]
    fresh = [ng.tensor(a, requires_grad=True) for a in arrays]
    want_t = values(*tensors)
    got_t = ng.compile(values)(*fresh)
    want, got = want_t.detach().numpy(), got_t.detach().numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    worst = {"value": ulps(got, want)}
    worst.update({f"grad {k}": ulps(g, e) for k, (g, e) in enumerate(zip(grads, eager_grads))})
    if want_t.requires_grad and want.dtype.kind == "f":
        # and the compiled function's own backward, for the same output gradient
        w = np.asarray(np.random.default_rng(i).uniform(0.5, 1.5, want.shape), want.dtype)
        want_t.backward(ng.tensor(w))
        got_t.backward(ng.tensor(w))
        for k, (a, b) in enumerate(zip(fresh, tensors)):
            assert (a.grad is None) == (b.grad is None), k
            if b.grad is not None:
                worst[f"backward {k}"] = ulps(a.grad.numpy(), b.grad.numpy())
    assert max(worst.values()) <= 1, worst


def _two_layers(x, w, b, w2):
    h = ng.nn.functional.linear(x, w, b).relu()
    return (h @ w2.t()).tanh().sum()


def _big_inputs(dtype):
    """A 64 x 784 batch through 784 -> 256 -> 10: past the tape's BIG threshold, so eager
    keeps these nodes as their own arrays and differentiates them in their own dtype."""
    rng = np.random.default_rng(3)
    return [rng.standard_normal((64, 784)).astype(dtype),
            (0.05 * rng.standard_normal((256, 784))).astype(dtype),
            rng.standard_normal(256).astype(dtype),
            (0.1 * rng.standard_normal((10, 256))).astype(dtype)]


_LAYOUT_BITS = pytest.mark.xfail(
    gemm.layout_sensitive(), strict=False,
    reason="a vector product (gemv), and on some machines a gemm, gives other bits for a "
           "transposed operand than for its contiguous copy: see gemm.layout_sensitive")


# the big-node float32 path: its float64 twin here, and test_replay_equals_eager_bit_for_bit_
# on_big_float32_nodes below on networks; every op's float32 big case with -m exhaustive
test_replay_within_one_ulp_of_eager.exhaustive_when = \
    lambda p: p["big"] and p["dtype"] is np.float32


@pytest.mark.parametrize("fuse", [True, False])
def test_a_large_trace_keeps_only_its_sources_values(fuse, monkeypatch):
    """The traced values of computed nodes are dropped from a large arena's base (every
    replay computes them): the replays, fused or interpreted, still equal eager's."""
    from numbagrad.compiler import program as program_mod
    if not fuse:
        monkeypatch.setattr(program_mod.fusion, "plan", lambda *a, **k: [])
    rng = np.random.default_rng(5)
    w = rng.standard_normal(300_000)

    def f(x):
        return ((x * 2.0).sin() * x + w).sum()
    vg = ng.func.value_and_grad(f)
    compiled = ng.compile(vg)
    for scale in (1.0, 0.5):
        x = scale * rng.standard_normal(300_000)
        (cv, cg), (ev, eg) = compiled(x), vg(x)
        np.testing.assert_allclose(cv, ev, rtol=1e-13)
        np.testing.assert_allclose(cg, eg, rtol=1e-13, atol=1e-15)
    p = next(iter(compiled.traces.values()))
    assert p.source_spans is not None and (p.fused is not None) == fuse
    computed = np.ones(len(p.base), bool)
    for o, n in p.source_spans:
        computed[o:o + n] = False
    assert computed.sum() >= 600_000 and not p.base[computed].any()


@_LAYOUT_BITS
def test_replay_equals_eager_bit_for_bit_on_big_float64_nodes():
    """Products large enough for BLAS and split in blocks (gemm.product): the same bits."""
    arrays = _big_inputs(np.float64)
    vg = ng.func.value_and_grad(_two_layers, argnums=(0, 1, 2, 3))
    ev, eg = vg(*arrays)
    cv, cg = ng.compile(vg)(*arrays)
    assert cv == ev
    for got, want in zip(cg, eg):
        np.testing.assert_array_equal(got, want)


def test_replay_equals_eager_bit_for_bit_on_big_float32_nodes():
    """Eager differentiates these nodes in float32 (float32 adjoints, F.linear's weight
    gradient written in the weight's layout): the replay runs the same kernels on them, on
    float32 arrays whose products read eager's layouts (float32_nodes), so on every
    machine (gemm.layout_sensitive or not)."""
    arrays = _big_inputs(np.float32)
    vg = ng.func.value_and_grad(_two_layers, argnums=(0, 1, 2, 3))
    compiled = ng.compile(vg)
    for scale in (1.0, 1.5):  # the second call: new inputs through the same trace
        inputs = [arrays[0] * np.float32(scale)] + arrays[1:]
        ev, eg = vg(*inputs)
        cv, cg = compiled(*inputs)
        assert cv == ev
        for got, want in zip(cg, eg):
            assert got.dtype == want.dtype == np.float32
            np.testing.assert_array_equal(got, want)
    assert next(iter(compiled.traces.values())).f32 is not None


@pytest.mark.parametrize("path", ["float32", "arena"])
def test_a_float32_network_with_mm_replays_eagers_bits(path, monkeypatch):
    """``x @ w + b`` layers (mm, whose weight gradients eager stores, not adds), replayed on
    float32 arrays (float32_nodes) or, where a trace does not qualify, on the arena, which
    leaves those adjoints unzeroed (the stores write all of them): both equal eager bit for
    bit, at the first call and on new batches (through the reused arenas); the batch and
    labels arrive in float32 and int64."""
    if path == "arena":
        monkeypatch.setattr(float32_nodes, "build", lambda program, steps: None)
    rng = np.random.default_rng(6)
    w1 = (0.05 * rng.standard_normal((784, 256))).astype(np.float32)
    b1 = np.zeros(256, np.float32)
    w2 = (0.1 * rng.standard_normal((256, 10))).astype(np.float32)

    def loss(p, x, y):
        h = (x @ p[0] + p[1]).relu()
        return ng.nn.functional.cross_entropy(h @ p[2], y)
    vg = ng.func.value_and_grad(loss)
    compiled = ng.compile(vg)
    for _ in range(3):
        x = rng.standard_normal((64, 784)).astype(np.float32)
        y = rng.integers(0, 10, 64)
        (cv, cg), (ev, eg) = compiled((w1, b1, w2), x, y), vg((w1, b1, w2), x, y)
        assert cv == ev
        for got, want in zip(cg, eg):
            assert got.dtype == np.float32 and np.array_equal(got, want)
    program = next(iter(compiled.traces.values()))
    if path == "float32":
        assert program.f32 is not None and program.fused is None
    else:
        leaf = program.grad_off[0]  # w1's adjoint
        assert not any(lo <= leaf < hi for lo, hi in program.fused.zero)


_X32 = np.random.default_rng(0).standard_normal((200, 300)).astype(np.float32)
_W64 = np.random.default_rng(1).standard_normal((200, 300))
# big nodes (60,000 elements) whose backward eager runs in float32, or into float32 adjoints
# from float64 kernels (casts), or sums a one-element operand's gradient in parallel
_EAGER_PATHS = {
    "cast_up": (lambda x, w: ((x.double() * w).tanh() + x.double().sin()).sum(), (_X32, _W64)),
    "cast_down": (lambda x, w: ((w.float() * x).tanh() * x).sum(), (_X32, _W64)),
    "one_node_twice": (lambda x, w: (x * x).exp().mean() + (w * w).sum(), (_X32, _W64)),
    "scalar_float64": (lambda w, s: (w * s).sin().sum() + (s / w).sum(), (_W64, np.array(0.7))),
    "scalar_float32": (lambda x, s: (x * s).sin().sum() + ((s - x) ** 2).sum(),
                       (_X32, np.array(0.7, np.float32))),
    "products": (lambda x, w: (x @ w.float().t()).relu().sum(), (_X32, _W64)),
}


@pytest.mark.parametrize("name", list(_EAGER_PATHS))
def test_replay_follows_eager_big_node_paths_bit_for_bit(name):
    """Mixed float32 and float64 nodes, an input used twice by one node, one-element operands:
    the replay runs eager's kernels in eager's dtypes (eager_nodes), so the bits agree."""
    f, arrays = _EAGER_PATHS[name]
    vg = ng.func.value_and_grad(f, argnums=(0, 1))
    ev, eg = vg(*arrays)
    cv, cg = ng.compile(vg)(*arrays)
    assert cv == ev
    for got, want in zip(cg, eg):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


SCALAR_CASES = [(op, i, s) for op, i, s in CASES if op in replay_scalar.scalar_ops()
                and len(set(s.shapes)) == 1 and np.prod(s.shapes[0]) > 0]


@pytest.mark.parametrize("op,i,sample", SCALAR_CASES,
                         ids=[f"{op.name}-{i}" for op, i, _ in SCALAR_CASES])
def test_scalar_stream_equals_generic_replay_and_eager(op, i, sample, monkeypatch):
    """The op applied element by element (one-element nodes only: the trace runs as the
    scalar instruction stream) gives the generic replay's value and gradients bit for bit,
    and eager's to 1e-12."""
    arrays = [a.reshape(-1) for a in _inputs(op, sample, np.random.default_rng(i),
                                              np.float64)]
    weights = np.random.default_rng(1).uniform(0.5, 1.5, arrays[0].size)

    def f(*xs):
        total = 0.0
        for k in range(weights.size):
            out = _first(_call(ng, op, sample, [x[k] for x in xs]))
            total = total + out * float(weights[k])
        return total
    vg = ng.func.value_and_grad(f, argnums=tuple(range(len(arrays))))
    try:
        e_value, e_grads = vg(*arrays)
    except (IndexError, RuntimeError) as e:  # a sample written for whole tensors (dims)
        pytest.skip(f"{sample.call} does not apply to one element: {e}")
    stream = ng.compile(vg)
    value, grads = stream(*arrays)
    program = next(iter(stream.traces.values()))
    if program.guards:  # a mask read from a computed element: the generic replay runs it
        assert program.stream is None
    else:
        assert program.stream is not None
    monkeypatch.setattr(replay_scalar, "build", lambda *a: None)
    generic = ng.compile(vg)
    g_value, g_grads = generic(*arrays)
    assert next(iter(generic.traces.values())).stream is None
    assert value == g_value
    for got, want in zip(grads, g_grads):
        assert np.array_equal(got, want)
    assert value == pytest.approx(e_value, rel=1e-12, abs=1e-12)
    for got, want in zip(grads, e_grads):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_scalar_stream_drops_what_cannot_reach_the_output():
    def f(v):
        dead = ng.sin(v[0]) * v[1]  # noqa: F841 - recorded, never used
        return v[0] * v[1] + ng.tanh(v[2])
    c = ng.compile(ng.func.value_and_grad(f))
    x = np.array([0.3, -1.2, 0.7])
    value, g = c(x)
    ins, _ = next(iter(c.traces.values())).stream
    names = sorted(OPS[k].name if k >= 0 else "copy" for k in ins[:, 0])
    assert names == ["add", "copy", "copy", "copy", "mul", "tanh"]
    assert value == pytest.approx(0.3 * -1.2 + np.tanh(0.7))
    assert np.allclose(g, [-1.2, 0.3, 1 - np.tanh(0.7) ** 2])


def test_each_replayed_value_is_within_two_ulps_of_eager():
    """Each node recomputed by replay from the eager values of its inputs is within 2 ulps of
    its eager value: arithmetic is exact, transcendentals differ because Numba calls the C
    library and NumPy its own SIMD code (tanh: up to 2 ulps on this machine kind)."""
    def f(x, w):
        return ((ng.tanh(x * w + 0.5) - x.exp() * 0.25) ** 2 / (1.0 + w * w)).sum()
    vg = ng.func.value_and_grad(f, argnums=(0, 1))
    c = ng.compile(vg)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(300), rng.standard_normal(300)
    c(x, w)
    p = next(iter(c.traces.values()))
    exact = {"mul", "add_scalar", "mul_scalar", "sub", "pow_scalar", "div", "sum"}
    for i, row in enumerate(p.nodes):
        val = p.base.copy()  # the eager value of every node, recorded by the trace
        p.replay.forward(p, val, i, i + 1)
        o, n = row[1], row[2]
        maxulp = 0 if OPS[row[0]].name in exact else 2
        np.testing.assert_array_max_ulp(val[o:o + n], p.base[o:o + n], maxulp=maxulp)
    (v, (gx, gw)), (ev, (ex, ew)) = c(x, w), vg(x, w)
    assert v == pytest.approx(ev, rel=1e-12)
    np.testing.assert_allclose(gx, ex, rtol=1e-10, atol=1e-12 * np.abs(ex).max())
    np.testing.assert_allclose(gw, ew, rtol=1e-10, atol=1e-12 * np.abs(ew).max())


def rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def test_embedding_replays_a_padding_row():
    """The op table's samples never look up padding_idx: its rows still have their value in
    the replayed forward (only their gradient is withheld)."""
    idx = ng.tensor([1, 2, 3, 2])
    w8 = np.random.default_rng(0).uniform(0.5, 1.5, (4, 2))

    def f(w):
        out = ng.nn.functional.embedding(idx, w, padding_idx=2)
        return (out * ng.tensor(w8)).sum()
    vg = ng.func.value_and_grad(f)
    c = ng.compile(vg)
    for seed in (1, 2):
        w = np.random.default_rng(seed).standard_normal((4, 2))
        (v, g), (ev, eg) = c(w), vg(w)
        assert v == pytest.approx(ev, rel=1e-12)
        assert np.array_equal(g, eg) and not g[2].any()


def test_kinds_and_return_types():
    x = np.linspace(-1, 1, 7)
    g_eager = ng.func.grad(rosenbrock)(x)
    g = ng.compile(ng.func.grad(rosenbrock))(x)
    assert isinstance(g, np.ndarray) and np.array_equal(g, g_eager)
    v, g2 = ng.compile(ng.func.value_and_grad(rosenbrock))(x)
    assert isinstance(v, float) and np.array_equal(g2, g_eager)
    g3, v3 = ng.compile(ng.func.grad_and_value(rosenbrock))(x)
    assert v3 == v and np.array_equal(g3, g_eager)
    # float32 in, float32 out; Tensors in, Tensors out
    g32 = ng.compile(ng.func.grad(rosenbrock))(x.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, ng.func.grad(rosenbrock)(x.astype(np.float32)), rtol=1e-5)
    gt = ng.compile(ng.func.grad(rosenbrock))(ng.tensor(x))
    assert isinstance(gt, ng.Tensor) and np.array_equal(gt.numpy(), g_eager)
    # a Python float argument
    vf, gf = ng.compile(ng.func.value_and_grad(lambda a: (a * 3.0).sin()))(0.25)
    assert isinstance(gf, float) and vf == pytest.approx(np.sin(0.75)) and \
        gf == pytest.approx(3 * np.cos(0.75))


def test_a_view_taken_again_at_every_step_is_one_node():
    """A loop writing ``h @ w.T`` records a transpose per step: the trace keeps one (the
    others' consumers read it) and the replay still equals eager, on (1, 32) rows that take
    the sweeps' inline loops and the small-product loops, float64 and float32."""
    def rnn(w, b, xs):
        h = ng.zeros((1, 8), dtype=w.dtype)
        for t in range(xs.shape[0]):
            h = ng.tanh(xs[t] @ w.T + h @ w.T + b)
        return (h * h).sum()
    rng = np.random.default_rng(3)
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        w = (rng.standard_normal((8, 8)) * 0.3).astype(dtype)
        b = rng.standard_normal(8).astype(dtype)
        xs = rng.standard_normal((6, 1, 8)).astype(dtype)
        vg = ng.func.value_and_grad(rnn, argnums=(0, 1, 2))
        c = ng.compile(vg)
        (v, gs), (ev, egs) = c(w, b, xs), vg(w, b, xs)
        p = next(iter(c.traces.values()))
        names = [OPS[k].name for k in p.nodes[:, 0]]
        assert names.count("permute") == 1 and names.count("mm") == 12
        assert v == pytest.approx(ev, rel=tol)
        for got, want in zip(gs, egs):
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_rows_of_an_input_not_differentiated_are_read_in_place():
    """``xs[t]`` of an input whose gradient is not taken is an alias of its row in the arena
    (no node computes it); a strided view, a differentiated input's row and a view of a
    large input keep their nodes. Each replay equals eager bit for bit, float32 and float64,
    at the first call and on new values."""
    def rnn(w, xs):
        h = ng.zeros((1, 8), dtype=w.dtype)
        for t in range(xs.shape[0]):
            h = ng.tanh(xs[t] @ w + h @ w)
        return (h * h).sum() + xs[:, 0, 1].sum()  # a strided view
    rng = np.random.default_rng(4)
    for dtype in (np.float32, np.float64):
        w = (rng.standard_normal((8, 8)) * 0.3).astype(dtype)
        for argnums, rows_kept in ((0, 0), ((0, 1), 5)):
            vg = ng.func.value_and_grad(rnn, argnums=argnums)
            c = ng.compile(vg)
            for _ in range(2):
                xs = rng.standard_normal((5, 1, 8)).astype(dtype)
                (v, g), (ev, eg) = c(w, xs), vg(w, xs)
                assert v == ev
                for got, want in zip(g if argnums != 0 else [g], eg if argnums != 0 else [eg]):
                    assert got.dtype == want.dtype and np.array_equal(got, want)
            p = next(iter(c.traces.values()))
            names = [OPS[k].name for k in p.nodes[:, 0]]
            # w, xs and the aliased rows are leaves; xs[:, 0, 1] (strided) keeps its node
            assert names.count("select") == rows_kept + 1
            assert names.count("leaf") == 2 + 5 - rows_kept
    big = rng.standard_normal((3, 40_000))  # at or over tape.BIG: eager's big-node rules
    c = ng.compile(ng.func.grad(lambda a, x: (x[1] * a).sum()))
    a = rng.standard_normal(40_000)
    assert np.array_equal(c(a, big), big[1])
    assert "select" in [OPS[k].name for k in next(iter(c.traces.values())).nodes[:, 0]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_products_replay_eagers_bits(dtype):
    """Products under gemm.SMALL_MM multiply-adds run as loops in eager and replay alike
    (float32 nodes in float32, without copies of their operands): the same bits, value
    and gradients, at the RNN's shapes and odd ones."""
    rng = np.random.default_rng(5)
    for m, k, n in ((1, 32, 32), (1, 16, 32), (3, 7, 5), (8, 32, 32), (2, 0, 3)):
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        assert m * k * n <= gemm.SMALL_MM

        def f(a, b):
            y = a @ b
            return (y.tanh() * y).sum()
        vg = ng.func.value_and_grad(f, argnums=(0, 1))
        (v, g), (ev, eg) = ng.compile(vg)(a, b), vg(a, b)
        assert v == ev and all(np.array_equal(x, y) for x, y in zip(g, eg))


def test_argnums_static_arguments_and_unused_inputs():
    def f(x, y, scale, n):
        return (x * y).sum() * scale + (x ** n).sum()
    vg = ng.func.value_and_grad(f, argnums=(0, 2))
    c = ng.compile(vg)
    x, y = np.arange(1.0, 4.0), np.array([0.5, -1.0, 2.0])
    for n in (2, 3, 2):  # an int is static: a new value retraces, an old one reuses
        (v, (gx, gs)), (ev, (ex, es)) = c(x, y, 1.5, n), vg(x, y, 1.5, n)
        assert v == pytest.approx(ev) and np.allclose(gx, ex) and gs == pytest.approx(es)
    assert len(c.traces) == 2
    # an input the output does not use gets a zero gradient, as the eager transform
    g = ng.compile(ng.func.grad(lambda a, b: (a * 2).sum(), argnums=1))(x, y)
    assert np.array_equal(g, np.zeros(3))


@pytest.mark.parametrize("rows", [50, 20_000])  # the interpreted sweep; a fused region
def test_inputs_not_differentiated_get_no_gradient_work(rows):
    """Every floating input is traced as requiring grad; the replay then clears that on the
    nodes no differentiated input reaches, so ``X @ w`` computes no gradient for X."""
    def nll(w, data):
        X, y = data
        z = X @ w
        return (ng.nn.functional.softplus(z) - y * z).sum() + (X * X).sum()
    rng = np.random.default_rng(5)
    X, y, w = rng.standard_normal((rows, 8)), rng.random(rows), rng.standard_normal(8)
    vg = ng.func.value_and_grad(nll)
    c = ng.compile(vg)
    for scale in (1.0, -2.0):  # a second call reuses the arenas
        (v, g), (ev, eg) = c(w * scale, (X, y)), vg(w * scale, (X, y))
        assert v == pytest.approx(ev, rel=1e-12)
        np.testing.assert_allclose(g, eg, rtol=1e-12, atol=1e-12)
    program = next(iter(c.traces.values()))
    needs = column(program.nodes, "flags") & FLAG_NEEDS_GRAD != 0
    x_node, w_node = program.slots[1], program.slots[0]
    assert needs[w_node] and not needs[x_node]
    assert needs.sum() < len(needs) - 2  # X * X and its sum need none either


def test_new_shapes_retrace_and_traces_are_bounded():
    c = ng.compile(ng.func.grad(rosenbrock), max_traces=2)
    for n in (3, 4, 5, 3):
        x = np.linspace(-1, 1, n)
        assert np.array_equal(c(x), ng.func.grad(rosenbrock)(x))
    assert len(c.traces) == 2


def test_closed_over_parameters_are_read_at_each_call():
    w = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = ng.compile(ng.func.grad(lambda x: (x * w).sum() ** 2))
    x = np.ones(3)
    assert np.allclose(c(x), 2 * 6.0 * np.array([1.0, 2.0, 3.0]))
    with ng.no_grad():
        w.mul_(2.0)
    assert np.allclose(c(x), 2 * 12.0 * np.array([2.0, 4.0, 6.0]))
    assert w.grad is None  # the transform differentiates x only, as eager


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_a_closed_over_constant_changed_in_place_retraces(dtype):
    # float32 and int64 constants enter a float64 graph as promoted copies: the trace must
    # watch the original, not the copy
    k = ng.tensor([1, 2], dtype=getattr(ng, dtype))
    c = ng.compile(ng.func.grad(lambda x: (x * k).sum()))
    x = np.zeros(2)
    assert np.array_equal(c(x), [1.0, 2.0])
    k.add_(1)
    assert np.array_equal(c(x), [2.0, 3.0])


def test_value_dependent_control_flow_takes_the_branch_of_each_call():
    def f(x):
        return (x * x).sum() if float(x.sum()) > 0 else (-x).sum()
    c = ng.compile(ng.func.grad(f), check=True)
    assert np.array_equal(c(np.ones(3)), 2 * np.ones(3))
    assert np.array_equal(c(-np.ones(3)), -np.ones(3))  # a guard failed: traced again
    assert np.array_equal(c(2 * np.ones(3)), 4 * np.ones(3))
    # float() reads the sum itself (not only its sign): each new sum is traced anew
    assert len(c.traces) == 3
    assert np.array_equal(c(-np.ones(3)), -np.ones(3)) and len(c.traces) == 3  # replayed


def test_unsupported_ops_and_functions_say_so():
    def f(x):
        return Cube.apply(x).sum()
    with pytest.raises(NotImplementedError, match="py_function.*does not support yet"):
        ng.compile(ng.func.grad(f))(np.ones(4))
    with pytest.raises(TypeError, match="expected a callable"):
        ng.compile(3.0)
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar"):
        ng.compile(ng.func.grad(lambda x: x * 2))(np.ones(3))


def test_as_numba_inside_an_njit_gradient_descent_loop():
    vg = ng.compile(ng.func.value_and_grad(rosenbrock))
    x0 = np.full(6, -0.5)
    f = vg.as_numba(x0)

    @njit
    def descend(x, steps, lr):
        g = np.empty_like(x)
        value = 0.0
        for _ in range(steps):
            value = f(x, g)
            x -= lr * g
        return value

    x = x0.copy()
    descend(x, 1, 1e-4)
    # the same steps in Python with the eager gradient
    y = x0.copy()
    y -= 1e-4 * ng.func.grad(rosenbrock)(y)
    assert np.allclose(x, y, rtol=1e-14)
    x = x0.copy()
    final = descend(x, 5000, 1e-3)
    assert final < rosenbrock(ng.tensor(x0)).item() / 10


def test_as_numba_inside_njit_hamiltonian_monte_carlo():
    """A leapfrog HMC sampler in @njit on a Gaussian, using the compiled gradient of the
    negative log density: the samples' mean and variance match the target's."""
    sigma = np.array([1.0, 2.0])

    def neg_log_p(q):
        return (0.5 * (q / ng.tensor(sigma)) ** 2).sum()
    grad_u = ng.compile(ng.func.value_and_grad(neg_log_p)).as_numba(np.zeros(2))

    @njit
    def hmc(n, eps, steps, seed):
        np.random.seed(seed)
        q = np.zeros(2)
        g = np.empty(2)
        out = np.empty((n, 2))
        u = grad_u(q, g)
        for i in range(n):
            p = np.random.standard_normal(2)
            q1, p1 = q.copy(), p.copy()
            g1 = g.copy()
            # a jittered trajectory length: a fixed eps * steps near half the Gaussian's
            # period would map q to about -q and leave the radius unmixed (a biased std)
            n_steps = steps + np.random.randint(0, steps)
            p1 -= 0.5 * eps * g1
            for _ in range(n_steps):
                q1 += eps * p1
                u1 = grad_u(q1, g1)
                p1 -= eps * g1
            p1 += 0.5 * eps * g1
            h0 = u + 0.5 * (p * p).sum()
            h1 = u1 + 0.5 * (p1 * p1).sum()
            if np.random.random() < np.exp(h0 - h1):
                q, u, g = q1, u1, g1
            out[i] = q
        return out

    samples = hmc(20000, 0.3, 10, 0)
    assert np.allclose(samples.mean(0), 0.0, atol=0.1)
    assert np.allclose(samples.std(0), sigma, rtol=0.05)


def _on_threads(work, n):
    """``work(k)`` for k in 0..n-1, each on a thread of its own, all at once."""
    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_concurrent_calls_from_threads_are_correct():
    c = ng.compile(ng.func.value_and_grad(rosenbrock))
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal(500) for _ in range(8)]
    expected = [ng.func.value_and_grad(rosenbrock)(x) for x in xs]
    c(xs[0])  # trace first; the replays then run concurrently
    errors = []

    def work(k):
        for _ in range(50):
            v, g = c(xs[k])
            if v != expected[k][0] or not np.array_equal(g, expected[k][1]):
                errors.append(k)

    _on_threads(work, 8)
    assert errors == []


def test_concurrent_calls_through_eager_kernels_are_correct():
    """Float32 big nodes, whose backward the replay hands to eager's kernels (eager_nodes),
    replayed from four threads at once: every call gets its own inputs' gradients. (BLAS's
    pools held at one thread by the test: calls in other threads than the main one run
    with the pools as the user left them, and OpenBLAS's bits depend on its thread count,
    numbagrad/_blas.py)"""
    import threadpoolctl
    arrays = _big_inputs(np.float32)
    vg = ng.func.value_and_grad(_two_layers, argnums=(0, 1, 2, 3))
    c = ng.compile(vg)
    inputs = [[arrays[0] * np.float32(1 + k / 8)] + arrays[1:] for k in range(4)]
    expected = [vg(*a) for a in inputs]
    c(*inputs[0])
    errors = []

    def work(k):
        for _ in range(10):
            v, g = c(*inputs[k])
            if v != expected[k][0] or not all(np.array_equal(a, b)
                                               for a, b in zip(g, expected[k][1])):
                errors.append(k)

    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        _on_threads(work, 4)
    assert errors == []


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,dim", [((100_003,), None), ((7, 3001), None), ((7, 3001), 1),
                                       ((5, 4, 999), (1, 2)), ((5, 4, 999), 0),
                                       ((5, 4, 999), (0, 2))])
def test_eager_sums_equal_the_replays_bit_for_bit(shape, dim, dtype):
    """Eager sums over trailing dims take NumPy's (pairwise) value, the replay its kernel's;
    other dims go through the kernel in both: the same bits either way (values of many
    magnitudes, so another order of additions would show)."""
    rng = np.random.default_rng(len(shape))
    x = (rng.standard_normal(shape) * np.exp(rng.uniform(-25, 25, shape))).astype(dtype)

    def total(t):
        return t.sum() if dim is None else t.sum(dim)

    want = total(ng.tensor(x)).numpy()
    got = ng.compile(total)(ng.tensor(x, requires_grad=True)).detach().numpy()
    assert got.dtype == want.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_integer_and_bool_numpy_arguments_reach_func_as_tensors():
    """As eager func.value_and_grad: labels and masks passed as NumPy arrays are Tensors
    inside f; a compiled call equals eager's and torch's, and new labels give a new trace."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    mask = rng.random(8) > 0.3

    def loss(w, x, y, m):
        z = ng.nn.functional.cross_entropy(x @ w, y, reduction="none")
        return (z * m).sum()

    vg = ng.func.value_and_grad(loss)
    compiled = ng.compile(vg)
    for y in (rng.integers(0, 3, 8), rng.integers(0, 3, 8)):
        value, grad = compiled(w, x, y, mask)
        eager_value, eager_grad = vg(w, x, y, mask)
        assert value == eager_value and grad.dtype == np.float32
        np.testing.assert_array_equal(grad, eager_grad)
        tw = torch.tensor(w, requires_grad=True)
        tz = torch.nn.functional.cross_entropy(torch.tensor(x) @ tw, torch.tensor(y),
                                               reduction="none")
        (tz * torch.tensor(mask)).sum().backward()
        np.testing.assert_allclose(grad, tw.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert len(compiled.traces) == 2


@pytest.mark.parametrize("shapes", [((64, 256), (256,)), ((256,), (3, 4, 256)),
                                    ((128, 512), (1, 512))])
def test_a_row_operand_replays_as_eager(shapes):
    """An operand repeated along the leading dims (a bias row) takes the replay kernels' row
    cases, forward and backward: values and gradients equal eager's to the bit (float64),
    the masked fill's per-element mask included."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])

    def f(a, b):
        s = ng.tanh(a * 0.5 + b) * (a - b)
        return (s.masked_fill(s > 0.3, 2.0) / (1.5 + b * b)).sum()
    compiled = ng.compile(ng.func.value_and_grad(f, argnums=(0, 1)))
    for _ in range(2):
        v, (ga, gb) = compiled(a, b)
        ta, tb = ng.tensor(a, requires_grad=True), ng.tensor(b, requires_grad=True)
        want = f(ta, tb)
        want.backward()
        assert float(v) == want.item()
        assert np.array_equal(np.asarray(ga), ta.grad.numpy())
        assert np.array_equal(np.asarray(gb), tb.grad.numpy())
