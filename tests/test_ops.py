"""Op tests generated from the op table: every op x sample x dtype, in the serial sweep and
in the big-node (parallel kernel) path, against torch and against finite differences."""

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.core import tape as tape_mod
from numbagrad.engine import kernelgen
from numbagrad.engine.registry import OPS, Sample

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float32)

_UNARY = [(), (4,), (2, 3), (0,)]
_BINARY = [((), ()), ((4,), (4,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((0,), (0,)),
           ((2, 3), ())]


# ops (and their samples) whose node takes other inputs than torch's (README, Limitations):
# self and a combined operand (lerp's weight * (end - self), addcmul's product), block_diag's
# concatenation, circular_pad's copies, clamp with both tensor bounds (two nodes)
def _every(k):
    return True


_OTHER_INPUTS = {"addcmul": _every, "addcdiv": _every, "lerp_tensor": _every,
                 "block_diag": _every, "circular_pad": _every,
                 "clamp_tensor_max": lambda k: k >= 4}


def _samples(op):
    if op.samples:
        return op.samples
    if op.arity == 1:
        return [Sample((s,)) for s in _UNARY]
    return [Sample(s) for s in _BINARY]


CASES = [(op, i, s) for op in OPS if not (op.source or op.python)
         for i, s in enumerate(_samples(op))]
IDS = [f"{op.name}-{i}" for op, i, _ in CASES]


def _setitem(lib, x, idx, v):
    x[idx] = v
    return x


def _index_add(lib, x, idx, n):
    """zeros(n).index_add(0, idx, x): torch's public form of the index_add_flat op."""
    if lib is torch:
        return torch.zeros(n, dtype=x.dtype).index_add(0, torch.tensor(idx), x)
    from numbagrad.ops.index.indexing import index_add_flat
    return index_add_flat(x, idx, (n,))


def _call(lib, op, sample, xs):
    env = {"lib": lib, "kw": dict(sample.kw), "_setitem": _setitem, "_index_add": _index_add}
    env.update({f"x{i}": x for i, x in enumerate(xs)})
    if sample.call:
        return eval(sample.call, env)  # noqa: S307 - test expressions from the op table
    name = op.torch or op.name
    return getattr(lib, name)(*xs, **sample.kw)


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def _inputs(op, sample, rng, dtype):
    lo, hi = op.domain
    arrays = []
    for shp in sample.shapes:
        a = rng.uniform(lo, hi, size=shp)
        if lo < 0 < hi:  # keep inputs away from kinks (0 for relu/abs, ties for max)
            a = np.where(np.abs(a) < 0.05, 0.3, a)
        arrays.append(a.astype(dtype))
    return arrays


def _run(lib, op, sample, arrays, g):
    if lib is torch:
        xs = [torch.tensor(a, requires_grad=True) for a in arrays]
    else:
        xs = [ng.tensor(a, requires_grad=True) for a in arrays]
    out = _first(_call(lib, op, sample, xs))
    value = out.detach().numpy().copy()
    if out.requires_grad and g is not None:
        out.backward(lib.tensor(g.astype(value.dtype)))
    grads = [None if x.grad is None else x.grad.numpy().copy() for x in xs]
    return value, grads, out


@pytest.fixture(params=["sweep", "big"])
def path(request, monkeypatch):
    """Run each case twice: small nodes in the serial sweep, and every node forced onto the
    big-node path (its op's parallel kernel, called from Python)."""
    if request.param == "big":
        monkeypatch.setattr(tape_mod, "BIG", 0)
    return request.param


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op,i,sample", CASES, ids=IDS)
def test_against_torch(op, i, sample, dtype, path):
    if path == "big" and dtype == np.float32 and op.elementwise is False and i > 0:
        pytest.skip("big path in float32: first sample per structured op is enough")
    rng = np.random.default_rng(1000 + i)
    arrays = _inputs(op, sample, rng, dtype)
    try:
        value_t, grads_t, out_t = _run(torch, op, sample, arrays, None)
    except (RuntimeError, IndexError, ValueError) as e:
        # torch refuses this sample: we must refuse it with the same error
        with pytest.raises(type(e)) as ours:
            _run(ng, op, sample, arrays, None)
        assert str(ours.value) == str(e)
        return
    g = rng.standard_normal(value_t.shape)
    value_t, grads_t, out_t = _run(torch, op, sample, arrays, g)
    value, grads, out = _run(ng, op, sample, arrays, g)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    assert value.dtype == value_t.dtype
    assert value.shape == value_t.shape
    np.testing.assert_allclose(value, value_t, **tol)
    assert (out.grad_fn is None) == (out_t.grad_fn is None)
    if out_t.grad_fn is not None:
        assert out.grad_fn.name() == out_t.grad_fn.name()
        assert type(out.grad_fn).__name__ == type(out_t.grad_fn).__name__
        # the inputs torch lists, None where no gradient flows (a Python number operand)
        if not _OTHER_INPUTS.get(op.name, lambda k: False)(i):
            assert [f is None for f, _ in out.grad_fn.next_functions] == \
                [f is None for f, _ in out_t.grad_fn.next_functions]
    for mine, theirs in zip(grads, grads_t):
        assert (mine is None) == (theirs is None)
        if theirs is not None:
            assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
            np.testing.assert_allclose(mine, theirs, **tol)


@pytest.mark.parametrize("op,i,sample", CASES, ids=IDS)
def test_finite_differences(op, i, sample):
    """d/dt <g, f(x + t v)> at t=0 equals <grad, v>, in float64, random g and v."""
    rng = np.random.default_rng(2000 + i)
    arrays = _inputs(op, sample, rng, np.float64)
    xs = [ng.tensor(a, requires_grad=True) for a in arrays]
    try:
        out = _first(_call(ng, op, sample, xs))
    except (RuntimeError, IndexError):
        pytest.skip("the sample is invalid (test_against_torch checks the error)")
    if not out.requires_grad:
        pytest.skip("output is not differentiable")
    g = rng.standard_normal(out.shape)
    out.backward(ng.tensor(g))
    vs = [rng.standard_normal(a.shape) for a in arrays]
    analytic = sum(float(np.sum(x.grad.numpy() * v)) for x, v in zip(xs, vs) if x.grad is not None)
    eps = 1e-6

    def f(t):
        with ng.no_grad():
            ys = [ng.tensor(a + t * v) for a, v in zip(arrays, vs)]
            return float(np.sum(_first(_call(ng, op, sample, ys)).numpy() * g))

    numeric = (f(eps) - f(-eps)) / (2 * eps)
    assert analytic == pytest.approx(numeric, rel=1e-5, abs=1e-6)


def _grads_with_graph(lib, op, sample, arrays, g, w):
    """First derivatives with create_graph=True, then the second: d<w, grads>/dx."""
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = _first(_call(lib, op, sample, xs))
    if not out.requires_grad:
        return None, None
    firsts = lib.autograd.grad(out, xs, lib.tensor(g.astype(arrays[0].dtype)),
                               create_graph=True, allow_unused=True)
    s = sum((f * lib.tensor(wk)).sum() for f, wk in zip(firsts, w) if f is not None)
    if isinstance(s, int) or not s.requires_grad:  # the first derivatives are constant
        seconds = [np.zeros_like(a) for a in arrays]
    else:
        # (+ 0: torch may answer with a lazy ZeroTensor, which refuses .numpy())
        seconds = [np.zeros_like(a) if d is None else (d.detach() + 0).numpy().copy()
                   for a, d in zip(arrays, lib.autograd.grad(s, xs, allow_unused=True))]
    firsts = [None if f is None else (f.detach() + 0).numpy().copy() for f in firsts]
    return firsts, seconds


# the big path's float32 kernels are the float64 ones' generated source in float32 (and
# test_compile runs them in float64 and float32 on replay): -m exhaustive runs them here too
test_against_torch.exhaustive_when = \
    lambda p: p["path"] == "big" and p["dtype"] is np.float32


@pytest.mark.parametrize("op,i,sample", CASES, ids=IDS)
def test_second_derivatives(op, i, sample):
    """create_graph=True: the differentiable rule gives the sweep's first derivatives, and
    differentiating them again gives torch's second derivatives (float64)."""
    rng = np.random.default_rng(3000 + i)
    arrays = _inputs(op, sample, rng, np.float64)
    try:
        value_t, grads_t, _ = _run(torch, op, sample, arrays, None)
    except (RuntimeError, IndexError, ValueError):
        pytest.skip("the sample is invalid (test_against_torch checks the error)")
    g = rng.standard_normal(value_t.shape)
    _, fast, out = _run(ng, op, sample, arrays, g)
    if not out.requires_grad:
        pytest.skip("output is not differentiable")
    w = [rng.standard_normal(a.shape) for a in arrays]
    firsts, seconds = _grads_with_graph(ng, op, sample, arrays, g, w)
    tol = dict(rtol=1e-9, atol=1e-11)
    for mine, sweep in zip(firsts, fast):
        assert (mine is None) == (sweep is None)
        if sweep is not None:
            np.testing.assert_allclose(mine, sweep, **tol)
    try:
        firsts_t, seconds_t = _grads_with_graph(torch, op, sample, arrays, g, w)
    except RuntimeError as e:  # torch has no second derivative here (hardsigmoid): ours is
        assert "is not implemented" in str(e)  # checked by the gradgradcheck test below
        return
    for mine, theirs in zip(seconds, seconds_t):
        np.testing.assert_allclose(mine, theirs, **tol)


@pytest.mark.parametrize("op,i,sample", CASES, ids=IDS)
def test_gradcheck_and_gradgradcheck(op, i, sample):
    """torch's own checking tools, ours, on every op sample (float64)."""
    rng = np.random.default_rng(4000 + i)
    arrays = _inputs(op, sample, rng, np.float64)
    xs = [ng.tensor(a, requires_grad=True) for a in arrays]
    try:
        out = _first(_call(ng, op, sample, xs))
    except (RuntimeError, IndexError):
        pytest.skip("the sample is invalid (test_against_torch checks the error)")
    if not out.requires_grad or out.numel() == 0:
        pytest.skip("output is not differentiable")

    def fn(*inputs):
        return _first(_call(ng, op, sample, list(inputs)))
    assert ng.autograd.gradcheck(fn, tuple(xs), eps=1e-6, atol=1e-6, rtol=1e-4)
    assert ng.autograd.gradgradcheck(fn, tuple(xs), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_every_op_has_a_rule_a_sample_and_a_backward_kernel():
    for op in OPS:
        if op.source or op.python:
            continue
        assert op.grad_fn, op.name
        assert op.grads is not None or op.kernel, f"{op.name} has no derivative"
        assert op.grads is not None or op.vjp, f"{op.name} has no differentiable derivative"
        assert _samples(op), f"{op.name} has no test sample"
        source = kernelgen.op_source(op)
        assert "def bw(i, frame):" in source, f"{op.name} has no backward kernel"
        compile(source, op.name, "exec")  # valid Python


def _parallel_callees(fn, seen):
    """The parallel=True @njit functions that ``fn`` (an @njit function) may call,
    directly or through other @njit functions of its module globals."""
    from numba.core.registry import CPUDispatcher
    found = []
    for name in fn.py_func.__code__.co_names:
        callee = fn.py_func.__globals__.get(name)
        if not isinstance(callee, CPUDispatcher) or callee in seen:
            continue
        seen.add(callee)
        if callee.targetoptions.get("parallel"):
            found.append(callee.__name__)
        found += _parallel_callees(callee, seen)
    return found


def test_no_sweep_kernel_calls_a_parallel_function():
    # the sweep calls these kernels; a cached serial function that calls a parallel=True one
    # segfaults once it is loaded from Numba's cache (numba #8578): big nodes must get their
    # parallelism from Python (numpy_bw or the generated parallel elementwise kernels)
    from numba.core.registry import CPUDispatcher
    kernels = {op.kernel for op in OPS if isinstance(op.kernel, CPUDispatcher)}
    assert kernels, "no table kernel given as a function: the check would check nothing"
    for kernel in kernels:
        assert not kernel.targetoptions.get("parallel"), kernel.__name__
        assert _parallel_callees(kernel, set()) == [], kernel.__name__
