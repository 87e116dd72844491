"""Wrong answers and spurious or unclear errors, each held to torch 2.13 as the oracle: the
same values and gradients, or the same exception type with torch's message (or one naming
the op, the shapes and what was expected)."""

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

NAN = float("nan")


def _outcome(lib, fn):
    """``fn(lib)`` as comparable data: a nested list of values, or (type name, message)."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)
    return _plain(out)


def _plain(v):
    if isinstance(v, (tuple, list)):
        return [_plain(u) for u in v]
    if hasattr(v, "detach"):
        return ("tensor", list(v.shape), str(v.dtype).replace("torch.", ""),
                np.asarray(v.detach().numpy(), np.float64).round(12).tolist())
    return v


def same_as_torch(fn):
    ours, theirs = _outcome(ng, fn), _outcome(torch, fn)
    assert ours == theirs, f"numbagrad: {ours}\ntorch:     {theirs}"
    return ours


def close(a, b):
    return np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=1e-6,
                       atol=1e-12, equal_nan=True)


# ---- 1. narrow ---------------------------------------------------------------------------
@pytest.mark.parametrize("dim, start, length", [
    (0, -2, 2), (0, 2, 5), (0, 3, 0), (0, 4, 0), (0, -4, 1), (0, -3, 3), (0, 0, -1),
    (-1, 1, 2), (2, 0, 1)])
def test_narrow_wraps_a_negative_start_and_checks_the_bounds(dim, start, length):
    same_as_torch(lambda lib: lib.arange(3.0).narrow(dim, start, length))


def test_narrow_of_a_0d_tensor_and_a_wrapped_start_on_a_matrix():
    same_as_torch(lambda lib: lib.ones(()).narrow(0, 0, 1))
    same_as_torch(lambda lib: lib.arange(12.0).reshape(3, 4).narrow(1, -3, 2))
