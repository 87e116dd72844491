"""torch 2.13 as the oracle of the parity tests: ``fn(lib)`` run on numbagrad and on torch,
its results (values, or the exception's type and message) compared."""

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def outcome(lib, fn, plain):
    """``fn(lib)`` as comparable data, ``plain(result)``, or (type name, message); warnings,
    which the two libraries give differently, silenced."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)
    return plain(out)


def rounded(v, decimals=12):
    """A result as nested lists: each tensor's shape, dtype and values to ``decimals``."""
    if isinstance(v, (tuple, list)):
        return [rounded(u, decimals) for u in v]
    if hasattr(v, "detach"):
        return ("tensor", list(v.shape), str(v.dtype).replace("torch.", ""),
                np.asarray(v.detach().numpy(), np.float64).round(decimals).tolist())
    return v


def _nan_safe(v):
    if isinstance(v, (list, tuple)):
        return [_nan_safe(u) for u in v]
    return "nan" if isinstance(v, float) and v != v else v


def same_as_torch(fn, decimals=12, nan_equal=False):
    """numbagrad's outcome of ``fn`` equals torch's (values to ``decimals``, NaN equal to NaN
    with ``nan_equal``); returns it."""
    def plain(v):
        v = rounded(v, decimals)
        return _nan_safe(v) if nan_equal else v
    ours, theirs = outcome(ng, fn, plain), outcome(torch, fn, plain)
    assert ours == theirs, f"numbagrad: {ours}\ntorch:     {theirs}"
    return ours


def same_type_as_torch(fn):
    """The exception type only, where torch's message is an accident of its implementation."""
    ours, theirs = outcome(ng, fn, rounded), outcome(torch, fn, rounded)
    assert isinstance(theirs[0], str) and ours[0] == theirs[0], f"{ours}\n{theirs}"
