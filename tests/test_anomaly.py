"""detect_anomaly / set_detect_anomaly: a NaN made by a backward names the op and the line of
the forward call that recorded it."""

import warnings

import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def _nan_backward(lib, **kw):
    x = lib.tensor([1.0, 0.0, 2.0], requires_grad=True)
    y = x.sqrt()  # the culprit: sqrt'(0) = inf, times 0 is NaN
    (y * 0.0).sum().backward(**kw)


@pytest.mark.parametrize("create_graph", [False, True])
def test_nan_names_the_op_and_the_forward_line(create_graph):
    # torch's message, and torch's warning before it with the forward call's traceback
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ng.autograd.detect_anomaly():
            with pytest.raises(RuntimeError) as ours:
                _nan_backward(ng, create_graph=create_graph)
        with torch.autograd.detect_anomaly():
            with pytest.raises(RuntimeError) as theirs:
                _nan_backward(torch, create_graph=create_graph)
    assert str(ours.value) == str(theirs.value) == \
        "Function 'SqrtBackward0' returned nan values in its 0th output."
    ours_warned = [str(w.message) for w in caught
                   if "Error detected in SqrtBackward0" in str(w.message)]
    assert ours_warned and "test_anomaly.py" in ours_warned[0] and "y = x.sqrt()" in \
        ours_warned[0]


def test_set_detect_anomaly_switches_and_big_nodes_are_checked_too(monkeypatch):
    from numbagrad.core import tape as tape_mod
    monkeypatch.setattr(tape_mod, "BIG", 0)
    assert not ng.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ng.autograd.set_detect_anomaly(True)
        try:
            assert ng.is_anomaly_enabled() and ng.autograd.is_anomaly_check_nan_enabled()
            with pytest.raises(RuntimeError, match="SqrtBackward0"):
                _nan_backward(ng)
        finally:
            ng.autograd.set_detect_anomaly(False)
    assert not ng.is_anomaly_enabled()
    _nan_backward(ng)  # off again: NaN gradients pass silently, as in torch


def test_anomaly_mode_without_nan_gives_the_same_gradients():
    x = ng.tensor([0.5, 1.5], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ng.autograd.detect_anomaly():
            (x.exp() * x).sum().backward()
    expected = (x.detach().exp() * (x.detach() + 1)).numpy()
    assert x.grad.numpy().tolist() == pytest.approx(expected.tolist())
