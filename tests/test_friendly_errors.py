"""Failures found during a backward read as the user's problem, not the engine's: torch's
message, the forward call site when anomaly mode recorded it, and a traceback that ends at
the user's call (no frames inside numbagrad's engine)."""

import os
import warnings

import numpy as np
import pytest

import numbagrad as ng

ENGINE_DIR = os.path.join(os.path.dirname(ng.__file__), "autograd")


def _engine_frames(excinfo):
    return [str(entry.path) for entry in excinfo.traceback
            if str(entry.path).startswith(ENGINE_DIR)
            and not str(entry.path).endswith(("__init__.py", "anomaly.py"))]


def _freed():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp().sum()
    y.backward()
    y.backward()


def _dirty(anomaly):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with ng.autograd.set_detect_anomaly(anomaly, check_nan=False):
        y = x.exp()  # the culprit: ExpBackward0 needs its output, changed below
    y.add_(1)
    y.sum().backward()


class _WrongShape(ng.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return ng.ones(3)


def _custom(anomaly):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with ng.autograd.set_detect_anomaly(anomaly, check_nan=False):
        y = _WrongShape.apply(x)  # the culprit
    y.sum().backward()


@pytest.mark.parametrize("case", ["freed", "dirty", "custom", "grad"])
def test_sweep_errors_end_at_the_users_call(case):
    with pytest.raises(RuntimeError) as excinfo:
        if case == "freed":
            _freed()
        elif case == "dirty":
            _dirty(False)
        elif case == "custom":
            _custom(False)
        else:
            x = ng.tensor([1.0, 2.0], requires_grad=True)
            y = (x * x).sum()
            ng.autograd.grad(y, x)
            ng.autograd.grad(y, x)
    assert _engine_frames(excinfo) == []
    # the message alone says what went wrong, as torch words it
    first = str(excinfo.value).splitlines()[0]
    assert any(w in first for w in ("second time", "inplace operation", "invalid gradient"))


@pytest.mark.parametrize("culprit", [_dirty, _custom])
def test_anomaly_mode_warns_with_the_forward_call_site(culprit):
    # as torch: the error's message is the same, a warning before it names the forward call
    with pytest.raises(RuntimeError) as plain:
        culprit(False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError) as located:
            culprit(True)
    assert str(located.value) == str(plain.value)
    warned = [str(w.message) for w in caught if str(w.message).startswith("Error detected in")]
    assert len(warned) == 1
    assert "test_friendly_errors.py" in warned[0] and "# the culprit" in warned[0]


def test_nan_warning_points_at_the_users_backward_call():
    x = ng.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ng.autograd.detect_anomaly():
            z = (x.sqrt() * 0).sum()
            with pytest.raises(RuntimeError, match="SqrtBackward0"):
                z.backward()
    errors = [w for w in caught if "Error detected in SqrtBackward0" in str(w.message)]
    assert len(errors) == 1 and errors[0].filename == __file__


def test_bugs_inside_numbagrad_keep_their_traceback(monkeypatch):
    """Only the errors the sweep finds in the user's graph are cut short: an unexpected
    error keeps every frame, so that it can be reported and fixed."""
    from numbagrad.autograd import engine

    def broken(*args, **kwargs):
        raise RuntimeError("an engine bug")

    monkeypatch.setattr(engine, "run_backward", broken)
    x = ng.tensor(np.ones(2), requires_grad=True)
    with pytest.raises(RuntimeError, match="an engine bug") as excinfo:
        (x * x).sum().backward()
    assert any(str(e.path).endswith("test_friendly_errors.py") and e.name == "broken"
               for e in excinfo.traceback)
