"""torch.nn.modules.normalization: normalization layers, the same classes as numbagrad.nn's."""

from ..normalization import LayerNorm
from ..spatial_norm import GroupNorm, LocalResponseNorm, RMSNorm

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]
