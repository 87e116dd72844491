"""numbagrad.nn.modules: torch.nn.modules's package paths (``nn.modules.linear.Linear``,
``nn.modules.loss._Loss``), each submodule named as torch's and holding the same classes as
numbagrad.nn (defined in numbagrad/nn's own modules)."""

from . import (
    activation,
    adaptive,
    batchnorm,
    channelshuffle,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    linear,
    loss,
    module,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
)
from .activation import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403

# torch.nn.modules's __all__ is its submodules' public classes, as this one
__all__ = [name for sub in (activation, adaptive, batchnorm, channelshuffle, container, conv,
                            distance, dropout, flatten, fold, instancenorm, linear, loss, module,
                            normalization, padding, pixelshuffle, pooling, rnn, sparse,
                            transformer, upsampling)
           for name in sub.__all__]
