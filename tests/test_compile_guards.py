"""Values a compiled function reads out of its trace (item(), if on a tensor, masks, argmax
indices, detach()) are guards: a call whose values differ is traced again, never answered
from another call's path. Each case is checked against eager calls of the same function."""

import warnings

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.core.trace_guards import TraceReadError

func = ng.func

INPUTS = [np.array([1.0, 2.0, 0.5]), np.array([-1.0, -2.0, 0.5]), np.array([3.0, -2.0, 0.0]),
          np.array([0.5, 0.25, 4.0]), np.array([1.0, 2.0, 0.5])]


def _branch(x):
    if x.sum() > 0:
        return (x * x).sum()
    return (-3.0 * x).sum()


def _item(x):
    return x.sum() * x.max().item()


def _float_int_bool(x):
    k = int(x.abs().sum()) % 3
    s = float(x[0])
    return x[k] * s + (x.sum() if bool(x[1] > 0) else x.prod())


def _where(x):
    return ng.where(x > 0.6, x * x, -2.0 * x).sum()


def _argmax(x):
    return x[x.argmax()] * 3.0 + x[x.min(0).indices]


def _detach(x):
    return (x * x.detach()).sum()


def _masked(x):
    return x[x > 0.6].sum() + x.masked_fill(x.isnan() | (x < 0), 0.0).sum()


def _tolist(x):
    return x.sum() * sum(x.tolist()) + x.mean() * float(np.asarray(x.detach()).max())


def _integer_cast(x):
    return ng.ldexp(x, (x * 2.0).round().long().abs()).sum()


FUNCTIONS = [_branch, _item, _float_int_bool, _where, _argmax, _detach, _masked, _tolist,
             _integer_cast]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__[1:])
def test_compiled_transform_equals_eager_on_every_call(f):
    c = ng.compile(func.value_and_grad(f))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reads that change every call end up eager
        for x in INPUTS + INPUTS[::-1]:
            value, grad = c(x)
            want_value, want_grad = func.value_and_grad(f)(x)
            assert value == pytest.approx(want_value, rel=1e-12, abs=1e-12)
            np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__[1:])
def test_compiled_tensor_function_equals_eager_on_every_call(f):
    c = ng.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x in INPUTS + INPUTS[::-1]:
            a = ng.tensor(x, requires_grad=True)
            b = ng.tensor(x, requires_grad=True)
            got, want = c(a), f(b)
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(),
                                       rtol=1e-12, atol=1e-12)
            got.backward()
            want.backward()
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_an_input_only_cast_to_integers_gets_no_gradient_as_in_eager():
    def f(x, y):
        return ng.ldexp(x, (y * 2.0).round().long().abs()) * 1.5
    c = ng.compile(f)
    for y in INPUTS[:3]:
        xs = [ng.tensor(INPUTS[3], requires_grad=True) for _ in range(2)]
        ys = [ng.tensor(y, requires_grad=True) for _ in range(2)]
        got, want = c(xs[0], ys[0]), f(xs[1], ys[1])
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_array_equal(xs[0].grad.numpy(), xs[1].grad.numpy())
        assert ys[0].grad is None and ys[1].grad is None


def test_one_trace_per_path_and_each_replayed():
    c = ng.compile(func.grad(_branch))
    for x in INPUTS * 3:
        c(x)
    assert len(c.traces) == 2  # the two branches, both kept for these shapes
    assert all(p.reads for p in c.traces.values())


def test_masks_from_the_inputs_are_checked_before_the_replay():
    c = ng.compile(func.value_and_grad(_where))
    c(INPUTS[0])
    (program,) = c.traces.values()
    assert program.input_guards and not program.guards  # the fused or stream replay stays


def test_a_read_that_changes_every_call_runs_eagerly_with_one_warning():
    c = ng.compile(func.value_and_grad(_item), max_traces=3)
    rng = np.random.default_rng(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(8):
            x = rng.uniform(-1, 1, 4)
            value, grad = c(x)
            want_value, want_grad = func.value_and_grad(_item)(x)
            assert value == pytest.approx(want_value, rel=1e-12)
            np.testing.assert_allclose(grad, want_grad, rtol=1e-12)
    ours = [w for w in caught if "numbagrad.compile" in str(w.message)]
    assert len(ours) == 1
    assert "item() at" in str(ours[0].message) and "run eagerly" in str(ours[0].message)
    assert ours[0].filename == __file__  # the warning points at the caller's line


def test_fullgraph_refuses_a_read_naming_its_line():
    line = _item.__code__.co_firstlineno + 1
    with pytest.raises(TraceReadError, match=f"item\\(\\) at .*test_compile_guards.py:{line}"):
        ng.compile(func.grad(_item), fullgraph=True)(INPUTS[0])
    with pytest.raises(TraceReadError, match="comparison"):
        ng.compile(_where, fullgraph=True)(ng.tensor(INPUTS[0], requires_grad=True))
    # a function that reads nothing compiles with fullgraph=True
    g = ng.compile(func.grad(lambda x: (x * x).sum()), fullgraph=True)
    np.testing.assert_allclose(g(INPUTS[1]), 2 * INPUTS[1])


def test_no_grad_inside_runs_eagerly():
    def f(x):
        with ng.no_grad():
            scale = x.sum()
        return (x * scale).sum()
    c = ng.compile(func.value_and_grad(f))
    with pytest.warns(UserWarning, match="sum under no_grad at .*cannot recompute"):
        c(INPUTS[0])
    for x in INPUTS:
        value, grad = c(x)
        want_value, want_grad = func.value_and_grad(f)(x)
        assert value == pytest.approx(want_value)
        np.testing.assert_allclose(grad, want_grad)


def test_reads_of_constants_are_not_guards():
    table = ng.tensor([0.5, 2.0, 3.0])

    def f(x):
        k = int(table.argmax())  # a closed-over constant: the same on every call
        return (x * table[k]).sum() if table.sum().item() > 1 else x.sum()
    c = ng.compile(func.grad(f))
    c(INPUTS[0])
    (program,) = c.traces.values()
    assert not program.reads


def test_an_input_read_only_by_a_guard_gets_no_gradient_as_in_eager():
    def f(x, t):
        return ng.where(x > t, x, 0.0)
    c = ng.compile(f)
    x, t = ng.tensor(INPUTS[0], requires_grad=True), ng.tensor(0.7, requires_grad=True)
    c(x, t).sum().backward()
    assert t.grad is None
    np.testing.assert_allclose(x.grad.numpy(), INPUTS[0] > 0.7)


def test_as_numba_refuses_a_trace_with_reads():
    c = ng.compile(func.value_and_grad(_branch))
    c(INPUTS[0])
    with pytest.raises(NotImplementedError, match="as_numba.*reads a value.*test_compile_guards"):
        c.as_numba()


def test_eager_reads_are_unchanged_outside_a_trace():
    x = ng.tensor([1.5, -2.0], requires_grad=True)
    assert x[0].item() == 1.5 and bool(x[0] > 0) and int(x[1]) == -2
    assert (x > 0).tolist() == [True, False] and x.argmax().item() == 0


def test_compiled_gradients_match_torch():
    """torch as the oracle, for the same functions written with torch."""
    torch = pytest.importorskip("torch")
    pairs = [
        (_branch, lambda x: (x * x).sum() if x.sum() > 0 else (-3.0 * x).sum()),
        (_where, lambda x: torch.where(x > 0.6, x * x, -2.0 * x).sum()),
        (_argmax, lambda x: x[x.argmax()] * 3.0 + x[x.min(0).indices]),
        (_detach, lambda x: (x * x.detach()).sum()),
    ]
    for f, tf in pairs:
        c = ng.compile(func.grad(f))
        for x in INPUTS:
            tx = torch.tensor(x, requires_grad=True)
            tf(tx).backward()
            np.testing.assert_allclose(c(x), tx.grad.numpy(), rtol=1e-12, atol=1e-12,
                                       err_msg=f.__name__)


def test_isclose_and_equal_are_guards():
    def f(x):
        return x.sum() * 2.0 if ng.allclose(x, ng.ones(3, dtype=ng.float64)) or ng.equal(x, -x) else x.sum()
    c = ng.compile(func.grad(f))
    for x in (np.ones(3), np.zeros(3), INPUTS[0], np.ones(3)):
        np.testing.assert_allclose(c(x), func.grad(f)(x))


def test_batch_norm_in_training_mode_refuses_before_changing_any_state():
    ng.manual_seed(0)
    model = ng.nn.Sequential(ng.nn.Linear(4, 3), ng.nn.BatchNorm1d(3))
    c = ng.compile(model)
    x = ng.tensor(np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32))
    with pytest.raises(NotImplementedError, match="running statistics.*model.eval"):
        c(x)
    assert int(model[1].num_batches_tracked) == 0
    assert not model[1].running_mean.numpy().any()
    rm, rv = ng.zeros(3), ng.ones(3)
    with pytest.raises(NotImplementedError, match="running statistics"):
        ng.compile(lambda t: ng.nn.functional.batch_norm(t, rm, rv, training=True))(x[:, :3])
    assert not rm.numpy().any()
    model.eval()  # the statistics are then constants: it compiles
    np.testing.assert_allclose(c(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)
