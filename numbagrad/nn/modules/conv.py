"""torch.nn.modules.conv: convolutions, the same classes as numbagrad.nn's."""

from ..conv import (
    Conv1d,
    Conv2d,
    _ConvNd,  # noqa: F401 - torch's base class, not in __all__
)
from ..lazy import (
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
)
from ..spatial_layers import (
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    _ConvTransposeNd,  # noqa: F401 - torch's base class, not in __all__
)

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d"]
