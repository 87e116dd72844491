"""numbagrad.nn: Module, Parameter, layers, containers and torch.nn.functional."""

from . import (
    functional,  # noqa: F401
    init,  # noqa: F401
)
from .conv import *  # noqa: F401,F403
from .conv import __all__ as _conv
from .layers import *  # noqa: F401,F403
from .layers import __all__ as _layers
from .loss import *  # noqa: F401,F403
from .loss import __all__ as _losses
from .module import Module, Parameter
from .normalization import *  # noqa: F401,F403
from .normalization import __all__ as _normalization
from .recurrent import *  # noqa: F401,F403
from .recurrent import __all__ as _recurrent

__all__ = ["Module", "Parameter", "functional", "init", *_conv, *_layers, *_losses, *_normalization,
           *_recurrent]
