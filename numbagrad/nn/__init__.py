"""numbagrad.nn: Module, Parameter, layers, containers and torch.nn.functional."""

from . import functional  # noqa: F401
from .layers import *  # noqa: F401,F403
from .layers import __all__ as _layers
from .module import Module, Parameter

__all__ = ["Module", "Parameter", "functional", *_layers]
