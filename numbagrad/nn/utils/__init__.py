"""numbagrad.nn.utils: gradient clipping, parameter vectors, weight and spectral norm,
parametrizations, pruning, and rnn's padding and packing."""

from . import parametrize, prune, rnn  # noqa: F401
from .clip_grad import *  # noqa: F401,F403
from .clip_grad import __all__ as _clip_grad
from .weight_norm import *  # noqa: F401,F403
from .weight_norm import __all__ as _weight_norm

__all__ = ["parametrize", "prune", "rnn", *_clip_grad, *_weight_norm]
