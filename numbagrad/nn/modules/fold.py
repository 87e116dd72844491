"""torch.nn.modules.fold: Fold and Unfold, the same classes as numbagrad.nn's."""

from ..spatial_layers import Fold, Unfold

__all__ = ["Fold", "Unfold"]
