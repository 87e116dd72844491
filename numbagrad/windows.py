"""torch's window functions: bartlett, blackman, hamming, hann and kaiser windows.

Each is computed as torch's kernel computes it, step by step in the requested dtype (an
arange scaled by a float64 constant rounded to the dtype, then cos): periodic windows are the
symmetric window of one more point, without its last.
"""

import numpy as np

from . import dtypes
from .creation_device import check_device
from .tensor import _make, require_grad

_STRIDED = "strided"


def _checks(name, window_length, dtype, layout, device):
    check_device(device)
    if layout is not None and str(layout).split(".")[-1] != _STRIDED:
        raise RuntimeError(f"{name} is not implemented for sparse types, got: {layout}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    dt = dtypes.as_dtype(dtype) or dtypes.get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype="
                           f"{dt.c_name}, device=cpu, layout=Strided (default), requires_grad="
                           "false (default), pinned_memory=false, memory_format=(nullopt))")
    return dt


def _window(name, window_length, periodic, dtype, layout, device, requires_grad, values):
    """``values(arange(n), n)`` for torch's length ``n``, cut back to ``window_length`` for a
    periodic window; 0 and 1 points are empty and ones as in torch."""
    dt = _checks(name, window_length, dtype, layout, device)
    if window_length <= 1:
        arr = np.ones(window_length, dt.np)
    else:
        n = window_length + 1 if periodic else window_length
        arr = np.asarray(values(np.arange(n, dtype=dt.np), n), dt.np)[:window_length]
    t = _make(np.ascontiguousarray(arr))
    if requires_grad:
        require_grad(t)
    return t


def _cos(x):
    with np.errstate(all="ignore"):
        return np.cos(x)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """Hamming window ``alpha - beta * cos(2 pi n / (N - 1))``.

    Same as ``torch.hamming_window``: periodic by default (``N`` is ``window_length + 1``).
    """
    def values(r, n):
        f = r.dtype.type
        return f(-beta) * _cos(r * f(2.0 * np.pi / (n - 1))) + f(alpha)
    return _window("hamming_window", window_length, periodic, dtype, layout, device,
                   requires_grad, values)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))``.

    Same as ``torch.hann_window``: periodic by default (``N`` is ``window_length + 1``).
    """
    _checks("hann_window", window_length, dtype, layout, device)  # errors under its name
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``.

    Same as ``torch.blackman_window``: periodic by default (``N`` is ``window_length + 1``).
    """
    def values(r, n):
        f = r.dtype.type
        w = r * f(np.pi / (n - 1))
        return _cos(w * f(4)) * f(0.08) - _cos(w * f(2)) * f(0.5) + f(0.42)
    return _window("blackman_window", window_length, periodic, dtype, layout, device,
                   requires_grad, values)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """Bartlett (triangular) window ``1 - |2 n / (N - 1) - 1|``.

    Same as ``torch.bartlett_window``: periodic by default (``N`` is ``window_length + 1``).
    """
    def values(r, n):
        f = r.dtype.type
        w = r * f(2.0 / (n - 1))
        half = ((n - 1) >> 1) + 1
        w[half:] = f(2) - w[half:]
        return w
    return _window("bartlett_window", window_length, periodic, dtype, layout, device,
                   requires_grad, values)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """Kaiser window ``I0(beta sqrt(1 - ((n - a) / a) ** 2)) / I0(beta)``, ``a = (N - 1) / 2``.

    Same as ``torch.kaiser_window``: periodic by default (``N`` is ``window_length + 1``).
    """
    def values(r, n):
        a = (n - 1) / 2.0
        x = beta * np.sqrt(np.abs(1.0 - ((r.astype(np.float64) - a) / a) ** 2))
        return np.i0(x) / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, dtype, layout, device,
                   requires_grad, values)


__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]
