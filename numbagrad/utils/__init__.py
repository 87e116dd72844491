"""numbagrad.utils: torch.utils's data loading (``numbagrad.utils.data``)."""

from . import data  # noqa: F401

__all__ = ["data"]
