"""Numba's thread count fitted to the cores other programs leave free (numbagrad/_threads.py):
the machine's load is simulated by replacing the /proc/stat reading."""

import numba
import numpy as np
import pytest

import numbagrad as ng
from numbagrad import _threads


@pytest.fixture
def machine(monkeypatch):
    """A fake clock and CPU counters: ``step(seconds, others_busy_cores, own_cores)``."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs Numba's pool of 2 threads or more")
    state = {"t": 1000.0, "busy": 0.0, "own": 0.0}
    monkeypatch.setattr(_threads, "_FIT", True)
    monkeypatch.setattr(_threads, "_busy_seconds", lambda: state["busy"])
    monkeypatch.setattr(_threads, "_cpu_lines", (b"cpu0 ", b"cpu1 "))
    monkeypatch.setattr(_threads.time, "monotonic", lambda: state["t"])
    monkeypatch.setattr(_threads.time, "process_time", lambda: state["own"])
    monkeypatch.setattr(_threads, "_fit", _threads._Fit())
    before = numba.get_num_threads()
    numba.set_num_threads(2)

    def step(seconds, others, own=1.0):
        state["t"] += seconds
        state["busy"] += (others + own) * seconds
        state["own"] += own * seconds
        _threads.fit_threads()
        return numba.get_num_threads()
    yield step
    numba.set_num_threads(before)


def test_busy_cores_lower_the_count_and_free_ones_restore_it(machine):
    assert machine(0.0, 0.0) == 2  # the first look only takes a sample
    assert machine(0.2, 0.0) == 2  # idle machine: the user's count
    assert machine(0.2, 2.0) == 1  # another program on both cores: one thread
    assert machine(0.05, 0.0) == 1  # within the sampling period: not looked at again
    assert machine(0.2, 0.0) == 2  # the load gone: back to the user's count
    assert machine(0.2, 1.0) == 1  # one core busy of two: one left


def test_the_users_count_is_the_most(machine):
    machine(0.0, 0.0)
    ng.set_num_threads(1)
    assert machine(0.2, 0.0) == 1  # idle, but the user asked for one
    ng.set_num_threads(2)
    assert machine(0.2, 2.0) == 1
    assert machine(0.2, 0.0) == 2
    numba.set_num_threads(1)  # set directly, bypassing numbagrad: taken as the user's
    assert machine(0.2, 0.0) == 1
    machine(0.2, 2.0)
    ng.set_num_threads(2)  # on a busy machine: fitted at once, not at the next look
    assert numba.get_num_threads() == 1


def test_results_do_not_depend_on_the_fitted_count(machine):
    """A backward and a split product under load give the bits they give idle."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 1024)).astype(np.float32)
    w = rng.standard_normal((1024, 256)).astype(np.float32)

    def grads():
        x = ng.tensor(a, requires_grad=True)
        y = ng.tensor(w, requires_grad=True)
        (ng.tanh(x @ y) ** 2).sum().backward()
        return x.grad.numpy().copy(), y.grad.numpy().copy()
    machine(0.0, 0.0)
    machine(0.2, 0.0)
    idle = grads()
    assert numba.get_num_threads() == 2
    machine(0.2, 2.0)
    busy = grads()
    assert numba.get_num_threads() == 1
    for p, q in zip(idle, busy):
        np.testing.assert_array_equal(p, q)


def test_real_reading_is_a_plausible_count():
    """On Linux the reading itself works: busy seconds grow, the count stays within bounds."""
    b0 = _threads._busy_seconds()
    if b0 is None:
        pytest.skip("no /proc/stat here")
    sum(range(2_000_000))
    assert _threads._busy_seconds() >= b0


def test_num_threads_is_numbas_count_in_every_thread():
    """_threads.num_threads (the launched layer's count, without numba's lock) answers what
    numba.get_num_threads does: after each change, and in another thread (counts are per
    thread)."""
    import threading

    before = numba.get_num_threads()
    try:
        for n in range(1, numba.config.NUMBA_NUM_THREADS + 1):
            numba.set_num_threads(n)
            assert _threads.num_threads() == numba.get_num_threads() == n
        seen = []
        worker = threading.Thread(
            target=lambda: seen.append((_threads.num_threads(), numba.get_num_threads())))
        worker.start()
        worker.join()
        assert seen[0][0] == seen[0][1]
    finally:
        numba.set_num_threads(before)
