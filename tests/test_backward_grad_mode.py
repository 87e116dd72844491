"""Backward runs with grad mode off, as torch's engine does (a hook's arithmetic records
nothing), and a thread may record on while another thread differentiates its tape."""

import threading

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def _hooked(lib, seen):
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    y = x * 2

    def hook(g):
        seen.append(lib.is_grad_enabled())
        out = g * x  # uses a tensor that requires grad: recorded only with create_graph
        seen.append(out.requires_grad)
        return out

    y.register_hook(hook)
    (y * y).sum().backward()
    return x.grad


def test_hooks_run_without_grad_mode_as_torch():
    ours, theirs = [], []
    got = _hooked(ng, ours)
    want = _hooked(torch, theirs)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert ours == theirs == [False, False]


def test_recording_while_another_thread_differentiates_the_same_tape():
    a = ng.tensor([1.0, 2.0], dtype=ng.float64, requires_grad=True)
    b = (a * a).sum()  # recorded on this thread's tape, which the other thread sweeps
    errors = []

    def differentiate():
        try:
            for _ in range(200):
                b.backward(retain_graph=True)
        except Exception as err:  # pragma: no cover - the failure this test is about
            errors.append(err)

    worker = threading.Thread(target=differentiate)
    worker.start()
    c = a
    for _ in range(2000):  # used to fail within a few hundred ops: BufferError
        c = c * 1.0001
    worker.join()
    assert not errors, errors
    c.sum().backward()
    ta = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    tb = (ta * ta).sum()
    for _ in range(200):
        tb.backward(retain_graph=True)
    tc = ta
    for _ in range(2000):
        tc = tc * 1.0001
    tc.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-12)
