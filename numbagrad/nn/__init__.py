"""numbagrad.nn: Module, Parameter, layers, containers and torch.nn.functional."""

from . import (
    functional,  # noqa: F401
    init,  # noqa: F401
    modules,  # noqa: F401 - torch.nn.modules's paths
    utils,  # noqa: F401
)
from .activation import *  # noqa: F401,F403
from .activation import __all__ as _activation
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .attention import *  # noqa: F401,F403
from .attention import __all__ as _attention
from .conv import *  # noqa: F401,F403
from .conv import __all__ as _conv
from .cross_map_lrn import CrossMapLRN2d
from .ctc import CTCLoss
from .layers import *  # noqa: F401,F403
from .layers import __all__ as _layers
from .lazy import *  # noqa: F401,F403
from .lazy import __all__ as _lazy
from .linear_cross_entropy import LinearCrossEntropyLoss
from .loss import *  # noqa: F401,F403
from .loss import __all__ as _losses
from .loss_more import *  # noqa: F401,F403
from .loss_more import __all__ as _loss_more
from .module import Buffer, Module, Parameter
from .more_layers import *  # noqa: F401,F403
from .more_layers import __all__ as _more_layers
from .normalization import *  # noqa: F401,F403
from .normalization import __all__ as _normalization
from .param_containers import *  # noqa: F401,F403
from .param_containers import __all__ as _param_containers
from .recurrent import *  # noqa: F401,F403
from .recurrent import __all__ as _recurrent
from .spatial import *  # noqa: F401,F403
from .spatial import __all__ as _spatial
from .transformer import *  # noqa: F401,F403
from .transformer import __all__ as _transformer

__all__ = ["AdaptiveLogSoftmaxWithLoss", "Buffer", "CTCLoss", "CrossMapLRN2d",
           "LinearCrossEntropyLoss", "Module", "Parameter", "functional", "init", "modules",
           *_param_containers, *_conv,
           *_layers, *_losses, *_normalization, *_recurrent, *_activation, *_attention,
           *_loss_more, *_spatial, *_transformer, *_more_layers, *_lazy, "utils"]
