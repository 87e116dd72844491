"""torch as the oracle: run the same function with numbagrad and torch, compare results."""

import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def both(fn):
    """Run ``fn(lib)`` with numbagrad and torch; return both results (errors as strings)."""
    out = []
    for lib in (ng, torch):
        try:
            out.append(fn(lib))
        except (RuntimeError, TypeError, IndexError, NotImplementedError) as e:
            out.append(f"{type(e).__name__}: {e}")
    return out


def same(fn):
    """Both libraries give the same result (or the same error); returns ours."""
    ours, theirs = both(fn)
    assert ours == theirs
    return ours
