"""Recording on a tape while another thread runs backward over it: the recorder moves to a
new tape (bridging its inputs) whenever the tape's buffers are viewed, even when the backward
starts between the recorder's check and its append."""

import sys
import threading

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.core import tape as tape_mod


@pytest.fixture
def fast_switching():
    """Thread switches every microsecond, so that the two threads interleave inside ops."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


@pytest.mark.parametrize("shape", [(), (16,)])
@pytest.mark.parametrize("late", [False, True], ids=["written", "unwritten"])
def test_recording_while_another_thread_runs_backward(shape, late, fast_switching, monkeypatch):
    """(``unwritten``: values no derivative reads are left out of the arena, as large ones
    are: a backward places them while the recorder writes them.)"""
    if late:
        monkeypatch.setattr(tape_mod, "_LATE_MIN", 2)
    for _ in range(50):
        x = ng.tensor(np.full(shape, 0.5), requires_grad=True)
        y = (x * x).sum()
        errors, stop = [], threading.Event()

        def backward_loop(y=y):
            try:
                while not stop.is_set():
                    y.backward(retain_graph=True)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        worker = threading.Thread(target=backward_loop)
        worker.start()
        try:
            z = x
            for _ in range(40):  # on the tape the other thread differentiates
                z = z * 1.01 + 0.001
        finally:
            stop.set()
            worker.join()
        assert errors == []
        want = np.full(shape, 0.5)
        for _ in range(40):
            want = want * 1.01 + 0.001
        np.testing.assert_allclose(z.detach().numpy(), want, rtol=1e-12)
        x.grad = None
        z.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.full(shape, 1.01 ** 40), rtol=1e-12)


def test_a_backward_holds_the_tapes_buffers_against_resizing():
    """The views a backward sweeps pin the tape's record buffers: a recorder in another
    thread gets BufferError (and moves to a new tape) instead of moving them under it."""
    from numbagrad.autograd.engine import _Run

    x = ng.tensor(np.full(4, 0.5), requires_grad=True)
    y = (x * 3.0).sum()  # one float attribute, so the fat buffer is viewed too
    tape = y._tape
    run = _Run(tape, True)
    try:
        for buf in (tape.nodes, tape.shapes, tape.fat):
            with pytest.raises(BufferError):
                buf.append(0)
        with pytest.raises(BufferError):
            tape.args.extend(bytes(8))
    finally:
        run.release()
    tape.nodes.append(0)  # released: it may grow again
    del tape.nodes[-1]
