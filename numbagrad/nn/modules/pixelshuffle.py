"""torch.nn.modules.pixelshuffle: pixel shuffles, the same classes as numbagrad.nn's."""

from ..spatial_layers import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
