"""torch.device and the checks of the ``device=`` arguments: numbagrad computes on the CPU
only, so every other device is refused with torch's own error for a CPU-only build."""

import re

_DEVICE_STRING = re.compile(r"[a-zA-Z_]+(:([1-9][0-9]*|0))?")
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")


class device:  # noqa: N801 - named as torch.device
    """A device description, as torch's: ``device("cpu")``, ``device("cpu", 0)``,
    ``device("cuda:1")`` (describing a CUDA device is allowed; putting data on it is not).

    Args:
        type: a string naming the device type, maybe with an index (``"cpu"``,
            ``"cuda:1"``), or a device to copy; a bare int raises RuntimeError (no
            accelerator).
        index: the device index, not negative, when ``type`` has none (default None).
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):  # noqa: A002 - torch's keyword name
        if isinstance(type, device):
            self._type, self._index = type._type, type._index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            # a bare index names the current accelerator, which a CPU build lacks
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if not isinstance(type, str):
            raise TypeError(
                f"device() received an invalid combination of arguments - got "
                f"({_type_name(type)}), but expected one of:\n * (torch.device device)\n"
                f"      didn't match because some of the arguments have invalid types: "
                f"(!{_type_name(type)}!)\n * (str type, int index = -1)\n")
        kind, parsed = _parse(type)
        if index is not None:
            if parsed is not None:
                raise RuntimeError("type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            if index < 0:
                raise RuntimeError("Device index must not be negative")
            parsed = int(index)
        self._type, self._index = kind, parsed

    @property
    def type(self):
        """The device type: ``'cpu'``."""
        return self._type

    @property
    def index(self):
        """The device index (None: numbagrad has one CPU device)."""
        return self._index

    def __repr__(self):
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __eq__(self, other):
        # as torch: a device never equals a string ("cpu" == device("cpu") is False)
        return isinstance(other, device) and (other._type, other._index) == \
            (self._type, self._index)

    def __hash__(self):
        return hash((self._type, self._index))

    def __reduce__(self):
        return (device, (self._type, self._index))

    def __enter__(self):
        # as torch's default-device context; only the CPU can be the default here
        check_device(self)
        return self

    def __exit__(self, *exc):
        return False


def _type_name(x):
    return "NoneType" if x is None else type(x).__name__


def _parse(text):
    if not text:
        raise RuntimeError("Device string must not be empty")
    if not _DEVICE_STRING.fullmatch(text):
        raise RuntimeError(f"Invalid device string: '{text}'")
    kind, sep, idx = text.partition(":")
    if kind not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of "
                           f"device string: {text}")
    return kind, (int(idx) if sep else None)


CPU = device("cpu")


def is_device_like(x):
    """A value ``Tensor.to`` reads as a device (a string naming one, a device, an index)."""
    if isinstance(x, device):
        return True
    return isinstance(x, str) and x.partition(":")[0] in DEVICE_TYPES


def check_device(d):
    """The device a ``device=`` argument names, if numbagrad can hold data there (the CPU);
    torch's error of a CPU-only build otherwise. None means the CPU."""
    if d is None:
        return CPU
    dev = d if isinstance(d, device) else device(d)
    if dev._type == "cpu":
        return dev
    if dev._type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    raise RuntimeError(f"PyTorch is not linked with support for {dev._type} devices")
