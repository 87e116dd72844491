"""torch.nn.modules.normalization: normalization layers, the same classes as numbagrad.nn's."""

from ..cross_map_lrn import CrossMapLRN2d
from ..normalization import LayerNorm
from ..spatial_norm import GroupNorm, LocalResponseNorm, RMSNorm

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]
