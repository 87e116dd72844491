"""Modules for convolution in 1-3 dims, pooling, padding, upsampling, group and instance norm,
distances and dropout variants beyond the basics (nn/spatial_*.py; one list of names here)."""

from .spatial_layers import *  # noqa: F401,F403
from .spatial_layers import __all__ as _layers
from .spatial_norm import *  # noqa: F401,F403
from .spatial_norm import __all__ as _norm

__all__ = [*_layers, *_norm]
