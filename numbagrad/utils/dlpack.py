"""numbagrad.utils.dlpack, as torch.utils.dlpack: ``from_dlpack`` and ``to_dlpack``."""

from ..interop import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
