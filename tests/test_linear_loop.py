"""A layer applied at every step of a loop on one tape: F.linear's transposed weight is one
node for all the steps (as the compiled replay merges them), with torch's values and
gradients, torch's error for a weight changed in place between steps; and the tape's arena,
which a loop's tapes outgrow, grows once to the size the last such tape reached."""

import numpy as np
import pytest
from torch_oracle import same_as_torch

import numbagrad as ng
from numbagrad.core import arena as arena_mod
from numbagrad.core import tape as tape_mod

RNG = np.random.default_rng(3)
X = RNG.standard_normal((6, 4, 5))
W = RNG.standard_normal((5, 5)) * 0.3
B = RNG.standard_normal(5)


def _loop(lib, change_between=False):
    w = lib.tensor(W, requires_grad=True)
    b = lib.tensor(B, requires_grad=True)
    h = lib.zeros(4, 5, dtype=lib.float64)
    for t in range(X.shape[0]):
        h = lib.tanh(lib.nn.functional.linear(lib.tensor(X[t]) + h, w, b))
        if change_between and t == 2:
            with lib.no_grad():
                w.mul_(1.5)
    (h * h).sum().backward()
    return [np.round(a, 10).tolist() for a in (h.detach().numpy(), w.grad.numpy(),
                                               b.grad.numpy())]


def test_loop_values_and_gradients_match_torch():
    same_as_torch(lambda lib: _loop(lib))


def test_loop_shares_one_transpose_node():
    w = ng.tensor(W, requires_grad=True)
    h = ng.zeros(4, 5, dtype=ng.float64)
    nodes = []
    for t in range(3):
        h = ng.nn.functional.linear(ng.tensor(X[t]) + h, w, None if t else ng.tensor(B))
        h = ng.nn.functional.linear(h, w, ng.tensor(B))
        nodes.append(h.grad_fn.next_functions[2][0])
    assert all(n.name() == "TBackward0" for n in nodes)
    assert len(h._tape.linear_t) == 1
    assert len(h._tape.transposes) == 1  # one t() node for the 5 products that take it


def test_weight_changed_in_place_between_steps_is_torchs_error():
    same_as_torch(lambda lib: _loop(lib, change_between=True))


def test_arena_of_a_loop_grows_once(monkeypatch):
    monkeypatch.setattr(arena_mod, "_SPARE_LARGEST", 4096)
    monkeypatch.setattr(arena_mod, "_last_large", 0)
    monkeypatch.setattr(arena_mod, "_spare", [])  # (not the larger ones earlier tests left)
    grows = []
    real = arena_mod.Arena._grow
    monkeypatch.setattr(arena_mod.Arena, "_grow", lambda self, need: (grows.append(need),
                                                                      real(self, need)))

    x0 = RNG.standard_normal(3000)

    def step():
        x = ng.tensor(x0, requires_grad=True)
        y = x
        for _ in range(40):  # (81 arrays whose values the derivatives read: written in
            y = ng.exp(ng.tanh(y))  # more than one go)
        y.sum().backward()
        return x.grad.numpy()
    g = step()
    assert len(grows) >= 2 and arena_mod._last_large >= 81 * 3000
    grows.clear()
    np.testing.assert_array_equal(step(), g)
    assert len(grows) <= 1  # straight to the last tape's size


@pytest.fixture(autouse=True)
def _fresh_thread_tape():
    """Each test starts its graph on a new tape (the current one may be another test's)."""
    tape_mod._local.tape = None
    yield


def _saved_view_changed(lib, case):
    lib.manual_seed(0)
    x = lib.randn(3, 3, dtype=lib.float64, requires_grad=True)
    a = lib.randn(3, 3, dtype=lib.float64, requires_grad=True)
    if case == "non-leaf":
        y = x * 2
        z = y.t() @ a
        y.add_(1)
    else:
        v = x[0:2] if case == "slice" else x[0:2].t()
        z = v * v
        with lib.no_grad():
            x.mul_(2)
    z.sum().backward()
    return np.round(x.grad.numpy(), 10).tolist()


@pytest.mark.parametrize("case", ["non-leaf", "slice", "slice-t"])
def test_saved_view_of_a_tensor_changed_in_place_is_torchs_error(case):
    same_as_torch(lambda lib: _saved_view_changed(lib, case))


def test_view_not_saved_is_no_error():
    same_as_torch(lambda lib: _unsaved_view(lib))


def _unsaved_view(lib):
    x = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
    z = x[0:2] + 1  # add saves nothing
    with lib.no_grad():
        x.mul_(2)
    z.sum().backward()
    return np.round(x.grad.numpy(), 10).tolist()


def test_large_arena_kept_for_the_next_step_and_let_go_when_idle(monkeypatch):
    monkeypatch.setattr(arena_mod, "_SPARE_LARGEST", 4096)
    monkeypatch.setattr(arena_mod, "_last_large", 0)
    monkeypatch.setattr(arena_mod, "_large", [])
    monkeypatch.setattr(arena_mod, "_spare", [])
    x0 = RNG.standard_normal(3000)

    def step(n):
        x = ng.tensor(x0, requires_grad=True)
        y = x
        for _ in range(n):
            y = ng.sin(y) * 1.5
        y.sum().backward()
        return x.grad.numpy().copy()
    g = step(40)
    assert len(arena_mod._large) == 1
    kept = id(arena_mod._large[0])  # (not a reference: that would keep it from reuse)
    np.testing.assert_array_equal(step(40), g)  # on the kept buffer, the same gradient
    assert len(arena_mod._large) == 1 and id(arena_mod._large[0]) == kept
    for _ in range(arena_mod._LARGE_IDLE_MAX + 1):  # small graphs: the buffer is let go
        (ng.tensor([1.0, 2.0], requires_grad=True) * 2).sum().backward()
    assert arena_mod._large == []
