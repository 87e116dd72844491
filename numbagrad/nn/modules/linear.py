"""torch.nn.modules.linear: linear layers, the same classes as numbagrad.nn's."""

from ..layers import Identity, Linear
from ..lazy import LazyLinear
from ..recurrent import Bilinear

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
