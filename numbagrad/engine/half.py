"""float16 through Numba kernels, which have no float16 type: the arrays go in as float32 and
the floats that come back are rounded once to float16, as torch's CPU kernels compute Half
(in float, rounded at the end)."""

import numpy as np

F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)


def _is_half(a):
    return isinstance(a, np.ndarray) and a.dtype == F16


def _rounded(out):
    if isinstance(out, tuple):
        return tuple(_rounded(o) for o in out)
    if isinstance(out, np.ndarray) and out.dtype == _F32:
        return out.astype(F16)
    return out


def in_float32(kernel):
    """``kernel`` (a function of arrays returning arrays) that also takes float16 arrays."""
    def call(*args):
        if not any(_is_half(a) for a in args):
            return kernel(*args)
        return _rounded(kernel(*[a.astype(_F32) if _is_half(a) else a for a in args]))
    call.__name__ = getattr(kernel, "__name__", "kernel")
    call.__doc__ = kernel.__doc__
    return call
