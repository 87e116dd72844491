"""Fused elementwise regions of compiled replay (numbagrad.compiler.fusion) and the
vectorizable transcendentals they use (numbagrad.engine.vmath)."""

import os
import select
import signal
import threading

import numpy as np
import pytest
from numba import njit
from test_ops import CASES, _call, _first

import numbagrad as ng
import numbagrad.func  # noqa: F401 - binds ng.func
from numbagrad.compiler import fusion
from numbagrad.engine import reduction_tree, vmath
from numbagrad.engine.registry import OPS
from numbagrad.ops.kernel_helpers import _block_sum

# ---- vmath against NumPy -------------------------------------------------------------------


def _ulps(got, want):
    """Distance in units in the last place (NaN equals NaN; infinities must match)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    both_nan = np.isnan(got) & np.isnan(want)
    gi, wi = got.view(np.int64), want.view(np.int64)
    # map the sign-magnitude bit patterns onto a monotonic integer line
    gi = np.where(gi < 0, np.int64(-(2**63)) - gi, gi)
    wi = np.where(wi < 0, np.int64(-(2**63)) - wi, wi)
    d = np.abs(gi - wi).astype(np.float64)
    d[both_nan | (got == want)] = 0.0
    return d


def _vectorized(f):
    @njit(error_model="numpy")
    def apply(x, y):
        for k in range(x.shape[0]):
            y[k] = f(x[k])
    return apply


# eager's sigmoid (the op table's forward): what the fused sigmoid stands in for
_sigmoid_ref = next(op for op in OPS if op.name == "sigmoid").forward


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
                    -2.2250738585072014e-308, 1e-300, 709.78, 709.79, 710.0, -708.4, -745.1,
                    -745.2, -746.0, 0.625, -0.625, 0.6249999999, 22.0, 40.0, -40.0, 1e308,
                    -1e308, 88.7, -88.7, 1.0, -1.0, 0.5])


def _samples():
    rng = np.random.default_rng(11)
    every_float = rng.integers(0, 2**63 - 2**52, 300_000, dtype=np.int64).view(np.float64)
    every_float = every_float * rng.choice([-1.0, 1.0], every_float.size)  # all exponents
    return np.concatenate([SPECIAL, every_float, np.linspace(-750, 750, 300_001),
                           np.linspace(-1, 1, 100_001), np.linspace(-40, 40, 100_001),
                           np.exp(np.linspace(-745, 709, 100_000))])


@pytest.mark.parametrize("name,kernel,reference,max_ulps", [
    ("exp", vmath.vexp, np.exp, 2),
    ("log", vmath.vlog, np.log, 1),
    ("tanh", vmath.vtanh, np.tanh, 2),
    ("sigmoid", vmath.vsigmoid, _sigmoid_ref, 2),
])
def test_vmath_within_ulps_of_numpy_over_the_whole_float_range(name, kernel, reference,
                                                               max_ulps):
    """Finite values, infinities, NaN, signed zeros and subnormals, random bit patterns of
    every exponent: at most ``max_ulps`` from NumPy (eager's sigmoid for sigmoid), and
    special values exactly as NumPy gives them."""
    x = _samples()
    got = np.empty_like(x)
    _vectorized(kernel)(x, got)
    with np.errstate(all="ignore"):
        want = reference(x)
    d = _ulps(got, want)
    assert d.max() <= max_ulps, (name, x[np.argmax(d)], got[np.argmax(d)], want[np.argmax(d)])
    s = got[:SPECIAL.size]
    with np.errstate(all="ignore"):
        w = reference(SPECIAL)
    np.testing.assert_array_equal(np.isnan(s), np.isnan(w))
    np.testing.assert_array_equal(s[np.isinf(w)], w[np.isinf(w)])
    np.testing.assert_array_equal(np.signbit(s[w == 0]), np.signbit(w[w == 0]))


# ---- fused replay against eager ------------------------------------------------------------

N = 96  # elements per node: with FUSE_MIN lowered to it, the tests' small nodes fuse


@pytest.fixture
def fuse_small(monkeypatch):
    monkeypatch.setattr(fusion, "FUSE_MIN", N)


def _program(compiled):
    (program,) = compiled.traces.values()
    return program


def _check(f, arrays, rtol=1e-12, regions=None):
    """Compiled value_and_grad of ``f`` equals eager's (to ``rtol``; 0: bit for bit), twice
    (new inputs the second time), and the trace is fused (with ``regions`` regions if
    given)."""
    argnums = tuple(range(len(arrays)))
    eager = ng.func.value_and_grad(f, argnums=argnums)
    compiled = ng.compile(eager)
    for _ in range(2):
        ev, eg = eager(*arrays)
        value, grads = compiled(*arrays)
        np.testing.assert_allclose(value, ev, rtol=rtol, atol=rtol)
        for got, want in zip(grads, eg):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
        arrays = [a * 0.9 + 0.05 for a in arrays]
    plan = _program(compiled).fused
    assert plan is not None
    if regions is not None:
        assert len(plan.regions) == regions
    return compiled


def _rand(k, seed=0, lo=-2.0, hi=2.0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(lo, hi, N) for _ in range(k)]


def test_the_issue_workload_fuses_into_one_region_and_equals_eager(fuse_small):
    def f(x, w, b):
        return (ng.tanh(x * w + b) * ng.exp(-x * x) + 0.5 * (w - b) ** 2).sum()
    compiled = _check(f, _rand(3), regions=1)
    (region,) = _program(compiled).fused.regions
    assert len(region.members) == 11 and len(region.exits) == 1


def test_one_element_operands_broadcast_and_get_their_gradient_summed(fuse_small):
    def f(x, s):
        return (ng.sigmoid(x * s) * s + ng.log(x * x + 1.0)).sum()
    _check(f, [_rand(1)[0], np.array([0.7])], regions=1)


def test_masks_pow_and_where_inside_a_region(fuse_small):
    def f(x, y):
        a = ng.relu(x) * y ** 3
        return ng.where(x > 0.5, a, y * 2.0).sum() + (ng.abs(a) ** 0.5).sum()
    _check(f, _rand(2, seed=3))


def test_several_exits_and_a_dead_member(fuse_small):
    def f(x, y):
        t = ng.tanh(x * y)
        ng.exp(t)  # computed, never used: dead code for the fused kernels
        u = t * x
        return u.sum() + (t * t).mean() + u.max()
    compiled = _check(f, _rand(2, seed=4))
    assert any(len(r.exits) >= 2 for r in _program(compiled).fused.regions)


def test_an_exit_no_gradient_reaches_takes_the_interpreted_sweep(fuse_small):
    """t leaves the region for a max the output never uses: the sweep reaches the region
    with t untouched, and fused backward would be wrong in general (0 * inf); the driver
    falls back to the interpreted sweep for that region, never calling its kernel."""
    def f(x, w):
        t = ng.tanh(x * w)
        u = t * x
        t.max()  # consumes t outside the region, reaches nothing
        return u.max()
    compiled = _check(f, _rand(2, seed=5))
    (region,) = _program(compiled).fused.regions
    assert len(region.exits) == 2
    calls = []
    kernel = region.bw
    region.bw = lambda *a: calls.append(1) or kernel(*a)
    value, grads = compiled(*_rand(2, seed=5))
    ev, eg = ng.func.value_and_grad(f, argnums=(0, 1))(*_rand(2, seed=5))
    assert value == ev and calls == []
    for got, want in zip(grads, eg):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_float32_regions_round_every_member_as_the_replay_does(monkeypatch):
    """float32 members are rounded to float32 after each op, as the interpreted replay
    rounds them, and the tail sums in float32: an arithmetic chain and one with tanh and
    exp equal the unfused replay bit for bit, value and gradients, and eager's value."""
    def arithmetic(x, w):
        return ((x * w + 0.5) * (x - w) / (w * w + 1.0)).sum()

    def transcendental(x, w):
        return (ng.tanh(x * w) * ng.exp(-x * x) + w).sum()
    arrays = [np.resize(a, BIG).astype(np.float32) for a in _rand(2, seed=12)]
    for f in (arithmetic, transcendental):
        monkeypatch.setattr(fusion, "FUSE_MIN", 10**12)
        unfused = ng.compile(ng.func.value_and_grad(f, argnums=(0, 1)))
        want = unfused(*arrays)
        assert _program(unfused).fused is None
        monkeypatch.setattr(fusion, "FUSE_MIN", N)
        fused = ng.compile(ng.func.value_and_grad(f, argnums=(0, 1)))
        got = fused(*arrays)
        (region,) = _program(fused).fused.regions
        assert region.one_pass and region.tail_f32
        assert type(got[0]) is float and got[1][0].dtype == np.float32
        assert got[0] == want[0]
        for g, h in zip(got[1], want[1]):
            np.testing.assert_array_equal(g, h)
        ev, eg = ng.func.value_and_grad(f, argnums=(0, 1))(*[ng.tensor(a) for a in arrays])
        assert got[0] == float(ev)
        for g, e in zip(got[1], eg):
            np.testing.assert_allclose(g, e.numpy(), rtol=1e-5, atol=1e-6)


def test_nodes_below_fuse_min_are_not_fused():
    def f(x):
        return (ng.tanh(x) * x).sum()
    compiled = ng.compile(ng.func.value_and_grad(f))
    compiled(np.ones(N))
    assert _program(compiled).fused is None


def test_gradient_buffers_are_reused_only_when_the_caller_dropped_them(fuse_small):
    def f(x):
        return (ng.tanh(x) * x).sum()
    compiled = ng.compile(ng.func.grad(f))
    x = _rand(1)[0]
    kept = compiled(x)
    again = compiled(x)
    assert not np.shares_memory(kept, again)  # kept is alive: a new buffer
    np.testing.assert_array_equal(kept, again)
    del again
    third = compiled(x * 2.0)
    np.testing.assert_array_equal(kept, compiled(x))  # the kept result never changed
    assert not np.shares_memory(kept, third)


def _failures_in_threads(agrees, count, calls):
    """Run ``agrees(k)`` ``calls`` times on each of ``count`` threads at once; the ks of the
    calls that disagreed."""
    failures = []

    def work(k):
        for _ in range(calls):
            if not agrees(k):
                failures.append(k)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def test_concurrent_calls_of_a_fused_trace(fuse_small):
    def f(x, w):
        return (ng.tanh(x * w) * ng.exp(-x * x)).sum()
    compiled = ng.compile(ng.func.value_and_grad(f, argnums=(0, 1)))
    inputs = [_rand(2, seed=s) for s in range(6)]
    expected = [ng.func.value_and_grad(f, argnums=(0, 1))(*a) for a in inputs]
    compiled(*inputs[0])

    def agrees(k):
        value, grads = compiled(*inputs[k])
        return np.isclose(value, expected[k][0], rtol=1e-12) and all(
            np.allclose(g, e, rtol=1e-12) for g, e in zip(grads, expected[k][1]))
    assert _failures_in_threads(agrees, len(inputs), calls=20) == []


# ---- fused sums ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 7, 128, 129, 1000, 4097, 100_003, 1_000_000])
def test_pairwise_leaves_and_combine_give_numpys_sum_to_the_last_bit(n):
    """The leaves' block sums added up the tree equal np.sum bit for bit (values of many
    magnitudes, so any other order of additions would differ)."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n) * np.exp(rng.uniform(-30, 30, n))
    bounds, post = reduction_tree.pairwise_leaves(n)
    assert bounds[0] == 0 and bounds[-1] == n and np.all(np.diff(bounds) <= 128)
    sums = np.array([_block_sum(a, lo, hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:])])
    assert reduction_tree.pairwise_combine(sums, post) == np.sum(a)


BIG = 20_000  # elements: 157+ pairwise leaves, several chunks of 8 leaves


def _workload(x, w, b):
    return (ng.tanh(x * w + b) * ng.exp(-x * x) + 0.5 * (w - b) ** 2).sum()


@pytest.fixture
def chunks(monkeypatch):
    """Run every fused kernel in 3 chunks (on the pool's threads), whatever the machine."""
    monkeypatch.setattr(fusion, "FUSE_MIN", N)
    monkeypatch.setattr(fusion, "_chunks", lambda size: 3)


@pytest.mark.parametrize("chunked", [False, True])
def test_one_pass_region_sums_in_numpys_order_and_writes_gradients_in_place(chunked,
                                                                             monkeypatch):
    """The issue workload: the sum joins the region as its tail, the output is that sum, so
    forward and backward are one pass. The value equals eager's bit for bit (NumPy's
    pairwise order) on one thread or three; the caller's arrays are read in place and left
    as they were; the gradients equal eager's bit for bit too."""
    monkeypatch.setattr(fusion, "FUSE_MIN", N)
    if chunked:
        monkeypatch.setattr(fusion, "_chunks", lambda size: 3)
    arrays = [a.copy() for a in _rand(3, seed=9)]
    arrays = [np.resize(a, BIG) * 0.999 for a in arrays]
    before = [a.copy() for a in arrays]
    eager = ng.func.value_and_grad(_workload, argnums=(0, 1, 2))
    compiled = ng.compile(eager)
    value, grads = compiled(*arrays)
    (region,) = _program(compiled).fused.regions
    assert region.tail is not None and region.one_pass
    assert _program(compiled).fused.copy_in == [] and _program(compiled).fused.copy_out == []
    ev, eg = eager(*arrays)
    assert value == ev
    for got, want in zip(grads, eg):
        np.testing.assert_array_equal(got, want)
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)
    readonly = [a.copy() for a in arrays]
    for a in readonly:
        a.flags.writeable = False  # Numba would type it apart: the driver copies it instead
    value2, grads2 = compiled(*readonly)
    assert value2 == value and all(np.array_equal(g, h) for g, h in zip(grads, grads2))


def test_chunks_give_the_single_thread_results_bit_for_bit(monkeypatch):
    monkeypatch.setattr(fusion, "FUSE_MIN", N)
    arrays = [np.resize(a, BIG) for a in _rand(3, seed=2)]
    results = []
    for parts in (1, 2, 3):
        monkeypatch.setattr(fusion, "_chunks", lambda size, parts=parts: parts)
        compiled = ng.compile(ng.func.value_and_grad(_workload, argnums=(0, 1, 2)))
        results.append(compiled(*arrays))
    for value, grads in results[1:]:
        assert value == results[0][0]
        for g, h in zip(grads, results[0][1]):
            np.testing.assert_array_equal(g, h)


def test_a_tail_that_is_not_the_output_runs_forward_and_backward_apart(chunks):
    """The sum is scaled and added to: its adjoint is known only after the sweep, so the
    region has two kernels (forward with the reduction, backward reading the sum's
    adjoint); one-element operands get their gradient summed over the chunks."""
    def f(x, w, s):
        return (ng.tanh(x * w) * s).sum() * 3.0 + (w * w).sum()
    arrays = [np.resize(a, BIG) for a in _rand(2, seed=6)] + [np.array([0.8])]
    compiled = _check(f, arrays, rtol=1e-12)
    regions = _program(compiled).fused.regions
    assert [r.tail is not None for r in regions] == [True, True]
    assert not any(r.one_pass for r in regions)


def test_an_input_read_outside_the_region_keeps_the_two_pass_backward(chunks):
    """The region's sum is the output, but x also feeds a node outside it (the max): x's
    adjoint gets that node's gradient too, so the region may not write it in the forward
    pass."""
    def f(x, w):
        u = (x * 3.0).max()
        return (ng.sigmoid(x) * w * u).sum()
    arrays = [np.resize(a, BIG) for a in _rand(2, seed=7)]
    compiled = _check(f, arrays)
    program = _program(compiled)
    (region,) = program.fused.regions
    assert region.tail == program.out_node and not region.one_pass


def test_concurrent_calls_of_a_chunked_one_pass_region(chunks):
    compiled = ng.compile(ng.func.value_and_grad(_workload, argnums=(0, 1, 2)))
    inputs = [[np.resize(a, BIG) for a in _rand(3, seed=s)] for s in range(4)]
    expected = [compiled(*a) for a in inputs]

    def agrees(k):
        value, grads = compiled(*inputs[k])
        return value == expected[k][0] and all(
            np.array_equal(g, e) for g, e in zip(grads, expected[k][1]))
    assert _failures_in_threads(agrees, len(inputs), calls=10) == []


# Every elementwise op of the table inside fused regions: the table's samples, on (N,)
# operands (the samples whose operands share one 0-d or 1-d shape), a few ops per function so
# each function is one region and one compile.
ELEMENTWISE = [(op, i, s) for op, i, s in CASES if op.elementwise and op.replayable
               and op.arity in (1, 2) and len(set(s.shapes)) == 1 and len(s.shapes[0]) <= 1
               and "dropout" not in op.name]  # random: no draws during a trace
GROUPS = [ELEMENTWISE[k:k + 12] for k in range(0, len(ELEMENTWISE), 12)]


@pytest.mark.parametrize("group", GROUPS,
                         ids=[f"{g[0][0].name}..{g[-1][0].name}" for g in GROUPS])
def test_every_elementwise_op_fused_equals_eager(group, fuse_small):
    """sum_k op_k(inputs_k) * w_k as one region: value and every input's gradient equal
    eager's bit for bit (the fused loops compute eager's formulas with eager's exp, log,
    tanh and sigmoid)."""
    rng = np.random.default_rng(8)
    arrays, slices = [], []
    for op, _, sample in group:
        lo, hi = op.domain
        start = len(arrays)
        for _ in sample.shapes:
            a = rng.uniform(lo, hi, N)
            if lo < 0 < hi:  # away from kinks, as test_ops does
                a = np.where(np.abs(a) < 0.05, 0.3, a)
            arrays.append(a)
        slices.append((start, len(arrays)))
    weights = [rng.uniform(0.5, 1.5, N) for _ in group]

    def f(*xs):
        total = None
        for (op, _, sample), (lo, hi), w in zip(group, slices, weights):
            out = _first(_call(ng, op, sample, list(xs[lo:hi])))
            term = out * ng.tensor(w)
            total = term if total is None else total + term
        return total.sum()
    _check(f, arrays, rtol=0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_chunked_regions_on_its_own_pool(chunks):
    """The pool's threads do not survive fork: the child starts its own (the inherited one
    would queue the chunks forever)."""
    compiled = ng.compile(ng.func.value_and_grad(_workload, argnums=(0, 1, 2)))
    arrays = [np.resize(a, BIG) for a in _rand(3, seed=13)]
    value, _ = compiled(*arrays)  # the parent's pool now exists
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: one call, its value through the pipe
        try:
            os.write(write, repr(compiled(*arrays)[0]).encode())
        finally:
            os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], 120)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    out = os.read(read, 100).decode() if ready else ""
    os.close(read)
    os.waitpid(pid, 0)
    assert ready, "the forked child's call never returned"
    assert float(out) == value
