"""torch.nn.modules.module: the Module base class, the same classes as numbagrad.nn's."""

from ..module import Module

__all__ = ["Module"]
