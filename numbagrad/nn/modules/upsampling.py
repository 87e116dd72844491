"""torch.nn.modules.upsampling: upsampling layers, the same classes as numbagrad.nn's."""

from ..spatial_layers import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
