"""torch.nn.modules.dropout: dropout layers, the same classes as numbagrad.nn's."""

from ..layers import Dropout
from ..spatial_norm import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
