"""torch.accelerator as a CPU-only build of torch answers it: there is no accelerator.

``is_available()`` is False, ``current_accelerator()`` None and ``device_count()`` 0, so the
usual ``device = torch.accelerator.current_accelerator() or "cpu"`` picks the CPU. Every
function that needs a device raises torch's error for a CPU-only build, after checking its
argument as torch does (a device or device string gives "Accelerator expected", an index or
nothing "Cannot access accelerator device when none is available.").
"""

import warnings

from .creation_device import device as _device

__all__ = [
    "Graph", "current_accelerator", "current_device_idx", "current_device_index",
    "get_device_capability", "current_stream", "device_count", "device_index", "empty_cache",
    "empty_host_cache", "get_memory_info", "is_available", "max_memory_allocated",
    "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
    "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
    "set_device_index", "set_stream", "synchronize",
]

_NO_DEVICE = "Cannot access accelerator device when none is available."


def _no_device():
    raise RuntimeError(_NO_DEVICE)


def _device_index(device, optional):
    """The index ``device`` names, as torch's ``_get_device_index`` reads it (an int as is; a
    device, which would have to be the accelerator's, raises; nothing: the current index)."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device(device)  # a bad string raises torch's parse error first
    if isinstance(device, _device):
        raise RuntimeError("Accelerator expected")
    if not optional:
        raise ValueError("Expected a torch.device with a specified index or an integer, "
                         f"but got:{device}")
    return current_device_index()


def is_available():
    """Whether an accelerator is available: never, numbagrad computes on the CPU.

    Same as ``torch.accelerator.is_available`` on a CPU-only build.
    """
    return False


def current_accelerator(check_available=False):
    """The accelerator's device: None, as there is none.

    Same as ``torch.accelerator.current_accelerator`` on a CPU-only build.
    """
    return None


def device_count():
    """The number of accelerator devices: 0.

    Same as ``torch.accelerator.device_count`` on a CPU-only build.
    """
    return 0


def current_device_index():
    """The current accelerator device's index: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.current_device_index`` on a CPU-only build.
    """
    _no_device()


def current_device_idx(*args, **kwargs):
    """Deprecated name of ``current_device_index``: warns, then calls it (which raises).

    Same as ``torch.accelerator.current_device_idx`` on a CPU-only build.
    """
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index(*args, **kwargs)


def set_device_index(device, /):
    """Select an accelerator device: raises torch's RuntimeError (a negative index is a no-op).

    Same as ``torch.accelerator.set_device_index`` on a CPU-only build.
    """
    if _device_index(device, optional=False) >= 0:
        _no_device()


def set_device_idx(*args, **kwargs):
    """Deprecated name of ``set_device_index``: warns, then calls it.

    Same as ``torch.accelerator.set_device_idx`` on a CPU-only build.
    """
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(*args, **kwargs)


def get_device_capability(device=None, /):
    """An accelerator device's capabilities: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.get_device_capability`` on a CPU-only build.
    """
    _device_index(device, optional=True)
    _no_device()


def current_stream(device=None, /):
    """An accelerator device's current stream: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.current_stream`` on a CPU-only build.
    """
    _device_index(device, optional=True)
    _no_device()


def set_stream(stream):
    """Select an accelerator stream: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.set_stream`` on a CPU-only build.
    """
    _no_device()


def synchronize(device=None, /):
    """Wait for an accelerator device's kernels: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.synchronize`` on a CPU-only build (where it raises too: guard
    it with ``is_available()``, as torch's own benchmark timer does).
    """
    _device_index(device, optional=True)
    _no_device()


class device_index:  # noqa: N801 - named as torch's
    """Context manager selecting an accelerator device: ``device_index(None)`` does nothing,
    any index raises torch's RuntimeError on entry.

    Same as ``torch.accelerator.device_index`` on a CPU-only build.
    """

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            _no_device()

    def __exit__(self, *exc_info):
        return None


class Graph:
    """An accelerator graph (capture and replay): constructing one raises torch's RuntimeError.

    Same as ``torch.accelerator.Graph`` on a CPU-only build.
    """

    def __init__(self, keep_graph=False, *, pool=None, capture_error_mode="default"):
        _no_device()


# ---- memory: torch asks the accelerator's allocator first, which a CPU build lacks ---------
def empty_cache():
    """Release the accelerator allocator's cache: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.empty_cache`` on a CPU-only build.
    """
    _no_device()


def empty_host_cache():
    """Release the pinned host memory cache: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.empty_host_cache`` on a CPU-only build.
    """
    _no_device()


def memory_stats(device_index=None, /):
    """The accelerator allocator's statistics: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.memory_stats`` on a CPU-only build.
    """
    _no_device()


def memory_allocated(device_index=None, /):
    """Accelerator memory held by tensors: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.memory_allocated`` on a CPU-only build.
    """
    _no_device()


def max_memory_allocated(device_index=None, /):
    """Peak accelerator memory held by tensors: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.max_memory_allocated`` on a CPU-only build.
    """
    _no_device()


def memory_reserved(device_index=None, /):
    """Accelerator memory the allocator holds: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.memory_reserved`` on a CPU-only build.
    """
    _no_device()


def max_memory_reserved(device_index=None, /):
    """Peak accelerator memory the allocator held: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.max_memory_reserved`` on a CPU-only build.
    """
    _no_device()


def reset_accumulated_memory_stats(device_index=None, /):
    """Reset the allocator's accumulated statistics: raises torch's RuntimeError.

    Same as ``torch.accelerator.reset_accumulated_memory_stats`` on a CPU-only build.
    """
    _no_device()


def reset_peak_memory_stats(device_index=None, /):
    """Reset the allocator's peak statistics: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.reset_peak_memory_stats`` on a CPU-only build.
    """
    _no_device()


def get_memory_info(device_index=None, /):
    """Free and total accelerator memory: raises torch's RuntimeError, there is none.

    Same as ``torch.accelerator.get_memory_info`` on a CPU-only build.
    """
    _device_index(device_index, optional=True)
    _no_device()
