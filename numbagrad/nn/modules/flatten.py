"""torch.nn.modules.flatten: Flatten and Unflatten, the same classes as numbagrad.nn's."""

from ..layers import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
