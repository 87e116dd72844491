"""The backward a graph gets written out as once it recurs (autograd/written.py) gives
the interpreted engine's gradients to the bit, and is used only where nothing can make two
backwards of one graph differ."""

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.autograd import big_nodes, written

ROWS, COLS = 64, 600  # 38,400 elements: big nodes (tape.BIG is 32,768)


@pytest.fixture
def interpreted(monkeypatch):
    """A switch: calling it makes every later backward interpreted."""
    def off():
        monkeypatch.setattr(written, "eligible", lambda *args: False)
    return off


@pytest.fixture
def runs(monkeypatch):
    """A list that gets one entry per backward run by a written-out function."""
    ran = []
    build = written.build

    def counted(run, log):
        fn = build(run, log)

        def written_fn(r):
            ran.append(1)
            fn(r)
        written_fn.source = fn.source
        return written_fn
    monkeypatch.setattr(written, "build", counted)
    return ran


def _written_graphs():
    """The written-out functions remembered so far, and the graphs found not writable."""
    done, refused = 0, 0
    for statics in big_nodes._STATICS.values():
        for k, v in statics.items():
            if isinstance(k, tuple) and k[0] == "written":
                done += callable(v)
                refused += v == written._NOT_WRITTEN
    return done, refused


def _mlp_run(steps, dtype, seed=0):
    """Parameters and losses after ``steps`` SGD steps of a small MLP on big activations."""
    ng.manual_seed(seed)
    nn = ng.nn
    model = nn.Sequential(nn.Linear(COLS, 256), nn.ReLU(), nn.Linear(256, 256), nn.Tanh(),
                          nn.Linear(256, 10)).to(getattr(ng, np.dtype(dtype).name))
    opt = ng.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(seed)
    x = ng.tensor(rng.standard_normal((ROWS * 2, COLS)).astype(dtype))
    y = ng.tensor(rng.integers(0, 10, ROWS * 2))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y) * 0.5 + 0.01 * model[0].weight.pow(2).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return [p.detach().numpy().copy() for p in model.parameters()], losses


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_training_steps_equal_the_interpreted_engine_to_the_bit(dtype, interpreted, runs):
    big_nodes._STATICS.clear()
    ours, our_losses = _mlp_run(4, dtype)
    assert len(runs) == 2  # steps 3 and 4 ran what step 2 wrote out
    interpreted()
    theirs, their_losses = _mlp_run(4, dtype)
    assert our_losses == their_losses
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def _big_inputs(k, dtype=np.float32):
    rng = np.random.default_rng(k)
    return [ng.tensor(rng.standard_normal((ROWS, COLS)).astype(dtype), requires_grad=True)
            for _ in range(2)]


def _backward(fn, k, **kw):
    a, b = _big_inputs(k)
    fn(a, b).backward(**kw)
    return a.grad.numpy().copy(), b.grad.numpy().copy()


def _graphs():
    """Graphs of big nodes with adds handing their gradient on, reused operands, views,
    small nodes the compiled sweep differentiates between big ones, and float64 mixed in."""
    return {
        "add_then_mul": lambda a, b: ((a + b) * a).sum(),
        "shared_gradient": lambda a, b: ((a.relu() + b.tanh()) * 2.0).sum(),
        "small_tail": lambda a, b: (a * b).sum(dim=0).mean() * 3.0 + a.sum() * 0.5,
        "transposed": lambda a, b: (a.t() @ b).pow(2).mean(),
        "float64_mix": lambda a, b: (a.double().sigmoid() * b.double()).sum(),
        "exp_log": lambda a, b: (a.exp() - (b * b + 1).log()).sum(),
    }


@pytest.mark.parametrize("name", list(_graphs()))
def test_graphs_equal_the_interpreted_engine_over_repeated_backwards(name, interpreted, runs):
    fn = _graphs()[name]
    big_nodes._STATICS.clear()
    ours = [_backward(fn, k) for k in range(5)]  # interpreted, then written
    assert runs
    interpreted()
    theirs = [_backward(fn, k) for k in range(5)]
    for pair_a, pair_b in zip(ours, theirs):
        for a, b in zip(pair_a, pair_b):
            np.testing.assert_array_equal(a, b)


def test_a_shared_adjoint_is_written_out_with_the_engines_bookkeeping():
    big_nodes._STATICS.clear()
    fn = _graphs()["shared_gradient"]
    grads = [_backward(fn, 0) for _ in range(4)]
    assert _written_graphs() == (1, 0)
    (done,) = [v for s in big_nodes._STATICS.values() for k, v in s.items()
               if isinstance(k, tuple) and callable(v)]
    assert "run.shared" in done.source
    for g in grads[1:]:
        np.testing.assert_array_equal(grads[0][0], g[0])
        np.testing.assert_array_equal(grads[0][1], g[1])


def _retained_backwards():
    a, b = _big_inputs(0)
    loss = (a.relu() * b).sum()
    for _ in range(4):
        loss.backward(retain_graph=True)
    return a.grad.numpy().copy(), b.grad.numpy().copy()


def test_retain_graph_backwards_are_written_and_add_up(interpreted, runs):
    # (the second notes what it does, the third and fourth run what was written)
    big_nodes._STATICS.clear()
    ours = _retained_backwards()
    assert len(runs) == 2
    interpreted()
    theirs = _retained_backwards()
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def test_a_hook_on_a_later_step_runs_and_changes_the_gradient():
    big_nodes._STATICS.clear()
    fn = _graphs()["add_then_mul"]
    for k in range(4):
        _backward(fn, k)
    assert _written_graphs()[0] >= 1
    a, b = _big_inputs(0)
    s = a + b
    calls = []
    s.register_hook(lambda g: calls.append(1) or g * 0)
    (s * a).sum().backward()
    assert calls == [1]
    np.testing.assert_array_equal(b.grad.numpy(), 0)  # b's gradient comes only through s


def test_anomaly_mode_is_interpreted():
    big_nodes._STATICS.clear()
    fn = _graphs()["add_then_mul"]
    with ng.autograd.detect_anomaly():
        for k in range(4):
            _backward(fn, k)
    assert _written_graphs() == (0, 0)


def test_freed_values_still_raise_torchs_error():
    big_nodes._STATICS.clear()
    fn = _graphs()["exp_log"]
    for k in range(4):
        _backward(fn, k)
    a, b = _big_inputs(0)
    loss = fn(a, b)
    loss.backward()
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def test_written_source_reads_as_python():
    big_nodes._STATICS.clear()
    fn = _graphs()["transposed"]
    for k in range(4):
        _backward(fn, k)
    (done,) = [v for s in big_nodes._STATICS.values() for k, v in s.items()
               if isinstance(k, tuple) and callable(v)]
    assert done.source.startswith("def written(run):")
    compile(done.source, "<test>", "exec")


def test_a_graph_met_once_is_not_written_out():
    big_nodes._STATICS.clear()
    a, b = _big_inputs(0)
    (a * b).sum().backward()
    assert _written_graphs() == (0, 0)
