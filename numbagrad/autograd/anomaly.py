"""Anomaly detection, as torch.autograd.detect_anomaly / set_detect_anomaly.

While it is on, every recorded node remembers where the forward call that made it came
from (the first frame outside numbagrad), and is flagged so that the compiled sweep hands
it to Python. There, once the node's gradients are computed, they are checked for NaN; the
error names the node's grad_fn and the forward call site. This makes backward as slow as
the Python path (microseconds per node): a debugging mode, as in torch.
"""

import linecache
import os
import sys
import traceback
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _State:
    enabled = False
    check_nan = True


state = _State()


def is_anomaly_enabled():
    return state.enabled


def is_anomaly_check_nan_enabled():
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
    """Context manager (and decorator) enabling anomaly detection inside its block."""

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
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


def call_site():
    """(``file:line``, the source line, the user's stack) of the forward call being
    recorded: frames inside numbagrad are skipped."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return "<unknown>", "", []
    filename, line = frame.f_code.co_filename, frame.f_lineno
    return (f"{filename}:{line}", linecache.getline(filename, line).strip(),
            traceback.format_stack(frame))


def note(tape, node):
    """Called by record() while anomaly mode is on: remember the call site and make the
    sweep hand this node to Python (where its gradients are checked)."""
    from ..core.tape import F_FLAGS, FLAG_HOOK, NODE_FIELDS
    tape.sites[node] = call_site()
    tape.nodes[node * NODE_FIELDS + F_FLAGS] |= FLAG_HOOK


def forward_site(tape, node):
    """A line naming the forward call that recorded ``node`` (known in anomaly mode), or ''."""
    if tape is None or node not in tape.sites:
        return ""
    site, code, _ = tape.sites[node]
    return f"\nThe forward call that created it was at {site}" + (f": {code}" if code else "")


def sweep_error(message, tape=None, node=None):
    """The RuntimeError for a failure met during a backward sweep (torch's message, plus the
    forward call site of ``node`` when anomaly mode recorded it), marked so that
    ``backward()`` and ``autograd.grad()`` re-raise it without numbagrad's own frames: the
    traceback ends at the user's call, not inside the engine."""
    err = RuntimeError(message + forward_site(tape, node))
    err._numbagrad_sweep = True
    return err


def raised_at_user_call(fn):
    """Decorate a public entry point of backward: a ``sweep_error`` leaves it with its
    traceback cut to start here (the frames below are the engine's, no help to the user)."""
    import functools

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RuntimeError as err:
            if not getattr(err, "_numbagrad_sweep", False):
                raise
            raise err.with_traceback(None) from None  # found by the backward sweep: see the message

    return entry


def _user_stacklevel():
    """warnings.warn's stacklevel naming the innermost frame outside numbagrad."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def nan_error(tape, node, grad_fn, index):
    """torch's error for a backward that produced NaN, plus where the forward call was."""
    _, _, stack = tape.sites.get(node, ("<unknown>", "", []))
    warnings.warn(f"Error detected in {grad_fn}. Traceback of forward call that caused the "
                  f"error:\n{''.join(stack)}", UserWarning, stacklevel=_user_stacklevel())
    return sweep_error(f"Function '{grad_fn}' returned nan values in its {index}th output.",
                       tape, node)
