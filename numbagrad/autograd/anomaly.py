"""Anomaly detection, as torch.autograd.detect_anomaly / set_detect_anomaly: the backward's
side. The switches, and what recording does while they are on, are in core/anomaly_flags.py
(re-exported here); the sweep hands every node recorded in anomaly mode to Python, where its
gradients are checked for NaN. An error in a node's backward comes after torch's warning
naming the node and the traceback of its forward call.
This makes backward as slow as the Python path (microseconds per node): a debugging mode,
as in torch.
"""

import functools
import sys
import warnings

from ..core.anomaly_flags import (  # noqa: F401 - the public switches' old home
    PACKAGE_DIR,
    call_site,
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    note,
    set_detect_anomaly,
    state,
)
from ..engine import registry


def warn_forward_site(tape, node, grad_fn=None):
    """torch's warning when the backward of ``node`` fails in anomaly mode: the node's name and
    the traceback of the forward call that recorded it (the error's message stays torch's).
    Nothing when anomaly mode did not record the node."""
    if tape is None or node not in tape.sites:
        return
    _, _, stack = tape.sites[node]
    name = grad_fn or tape.names.get(node) or registry.OPS[tape.code(node)].grad_fn
    warnings.warn(f"Error detected in {name}. Traceback of forward call that caused the "
                  f"error:\n{''.join(stack)}", UserWarning, stacklevel=_user_stacklevel())


def sweep_error(message, tape=None, node=None):
    """The RuntimeError for a failure met during a backward sweep (torch's message; in anomaly
    mode, torch's warning names the forward call of ``node`` first), marked so that
    ``backward()`` and ``autograd.grad()`` re-raise it without numbagrad's own frames: the
    traceback ends at the user's call, not inside the engine."""
    warn_forward_site(tape, node)
    err = RuntimeError(message)
    err._numbagrad_sweep = True
    return err


def raised_at_user_call(fn):
    """Decorate a public entry point of backward: a ``sweep_error`` leaves it with its
    traceback cut to start here (the frames below are the engine's, no help to the user)."""

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
    while frame is not None and frame.f_code.co_filename.startswith(PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def nan_error(tape, node, grad_fn, index):
    """torch's error for a backward that produced NaN, after torch's warning naming where the
    forward call was."""
    warn_forward_site(tape, node, grad_fn)
    return sweep_error(f"Function '{grad_fn}' returned nan values in its {index}th output.")
