"""torch.nn.functional's padding, pooling, interpolation, normalization and distance functions
beyond the basics (the ops/spatial_*.py modules; one list of names here)."""

from .conv3d import *  # noqa: F401,F403
from .conv3d import __all__ as _conv3d
from .embedding_bag import *  # noqa: F401,F403
from .embedding_bag import __all__ as _embed
from .grid import *  # noqa: F401,F403
from .grid import __all__ as _grid
from .interpolate import *  # noqa: F401,F403
from .interpolate import __all__ as _interp
from .pad import *  # noqa: F401,F403
from .pad import __all__ as _pad
from .pool import *  # noqa: F401,F403
from .pool import __all__ as _pool
from .spatial_misc import *  # noqa: F401,F403
from .spatial_misc import __all__ as _misc
from .spatial_norm import *  # noqa: F401,F403
from .spatial_norm import __all__ as _norm

__all__ = [*_pad, *_interp, *_pool, *_norm, *_misc, *_embed, *_conv3d, *_grid]
