"""numbagrad.utils: torch.utils's data loading (``numbagrad.utils.data``)."""

from . import checkpoint, data  # noqa: F401

__all__ = ["checkpoint", "data"]
