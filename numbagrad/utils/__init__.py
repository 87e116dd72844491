"""numbagrad.utils: torch.utils's data loading (``numbagrad.utils.data``), checkpointing and
DLPack, and the conversion of state_dicts to and from PyTorch (``numbagrad.utils.convert``)."""

from . import checkpoint, convert, data, dlpack  # noqa: F401

__all__ = ["checkpoint", "convert", "data", "dlpack"]
