"""torch.fft's real-valued helpers: the sample frequencies of a transform (``fftfreq``,
``rfftfreq``) and the shifts that put the zero frequency in the middle (``fftshift``,
``ifftshift``). The transforms themselves take or give complex tensors, which numbagrad
does not have (the limits page says so)."""

import numpy as np

from . import dtypes
from .creation_device import check_device
from .ops.out_api import check_out, write_out
from .ops.shape.gather import roll
from .tensor import Tensor, _make, _wrap_dim, require_grad

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _frequencies(name, ints, n, d, out, dtype, device, requires_grad):
    """``ints`` (the frequency indices) times ``1 / (n * d)``, as ATen computes them: the
    indices in the result's dtype, multiplied in place by the scale rounded to it."""
    check_device(device)
    if out is not None:
        check_out(f"fft_{name}", out)
        dtype = out.dtype if dtype is None else dtype
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    values = ints.astype(dt.np) * dt.np.type(1.0 / (n * d))
    result = _make(values)
    if out is not None:
        return write_out(out, result, warn=False)
    return require_grad(result) if requires_grad else result


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (n * d)``.

    Same as ``torch.fft.fftfreq``.
    """
    ints = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)])
    return _frequencies("fftfreq", ints, n, d, out, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """The sample frequencies of a real ``n``-point transform (the non-negative ones):
    ``[0, 1, ..., n // 2] / (n * d)``.

    Same as ``torch.fft.rfftfreq``.
    """
    return _frequencies("rfftfreq", np.arange(n // 2 + 1), n, d, out, dtype, device,
                        requires_grad)


def _shift(input, dim, half):  # noqa: A002 - torch's names
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_fftshift(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dims = list(range(input.ndim)) if dim is None else \
        [dim] if isinstance(dim, (int, np.integer)) else list(dim)
    if not dims:
        return roll(input, [], [])
    dims = [_wrap_dim(d, input.ndim) for d in dims]
    return roll(input, [half(input.shape[d]) for d in dims], dims)


def fftshift(input, dim=None):  # noqa: A002 - torch's names
    """``input`` rolled by half its size along ``dim`` (every dim by default), so that the
    zero frequency of a transform comes to the middle.

    Same as ``torch.fft.fftshift``.
    """
    return _shift(input, dim, lambda size: size // 2)


def ifftshift(input, dim=None):  # noqa: A002 - torch's names
    """The inverse of ``fftshift``: rolled by ``(size + 1) // 2`` along ``dim``.

    Same as ``torch.fft.ifftshift``.
    """
    return _shift(input, dim, lambda size: (size + 1) // 2)
