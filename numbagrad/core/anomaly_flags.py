"""Anomaly detection's switches and what recording does while it is on (torch's
set_detect_anomaly / detect_anomaly); the backward's checks are in autograd/anomaly.py.

While it is on, every recorded node remembers where the forward call that made it came
from (the first frame outside numbagrad), and is flagged so that the compiled sweep hands
it to Python, where its gradients are checked for NaN.
"""

import functools
import linecache
import os
import sys
import traceback
import warnings

from .tape import FLAG_HOOK

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _State:
    enabled = False
    check_nan = True


state = _State()


def is_anomaly_enabled():
    """Whether anomaly detection is on.

    Same as ``torch.is_anomaly_enabled``.
    """
    return state.enabled


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection checks the gradients for NaN.

    Same as ``torch.is_anomaly_check_nan_enabled``.
    """
    return state.check_nan


class set_detect_anomaly:  # noqa: N801 - torch's name
    """Switch anomaly detection on or off (immediately; also usable as a context manager)."""

    def __init__(self, mode, check_nan=True):
        self.prev = (state.enabled, state.check_nan)
        state.enabled, state.check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        state.enabled, state.check_nan = self.prev
        return False


class detect_anomaly:  # noqa: N801 - torch's name
    """Context manager (and decorator) enabling anomaly detection inside its block.

    Args:
        check_nan: whether a backward that produces NaN raises (default True).
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (state.enabled, state.check_nan)
        state.enabled, state.check_nan = True, self.check_nan
        return self

    def __exit__(self, *exc):
        state.enabled, state.check_nan = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


def call_site():
    """(``file:line``, the source line, the user's stack) of the forward call being
    recorded: frames inside numbagrad are skipped."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return "<unknown>", "", []
    filename, line = frame.f_code.co_filename, frame.f_lineno
    return (f"{filename}:{line}", linecache.getline(filename, line).strip(),
            traceback.format_stack(frame))


def note(tape, node):
    """Called by record() while anomaly mode is on: remember the call site and make the
    sweep hand this node to Python (where its gradients are checked)."""
    tape.sites[node] = call_site()
    tape.set_flag(node, FLAG_HOOK)
