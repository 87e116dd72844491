"""torch.nn.modules.linear: linear layers, the same classes as numbagrad.nn's."""

from ..layers import Identity, Linear
from ..recurrent import Bilinear
from ..spatial_norm import LazyLinear

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
