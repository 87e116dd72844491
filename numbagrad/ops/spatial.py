"""torch.nn.functional's padding, pooling, interpolation, normalization and distance functions
beyond the basics (the ops/spatial_*.py modules; one list of names here)."""

from .spatial_conv3d import *  # noqa: F401,F403
from .spatial_conv3d import __all__ as _conv3d
from .spatial_embed import *  # noqa: F401,F403
from .spatial_embed import __all__ as _embed
from .spatial_grid import *  # noqa: F401,F403
from .spatial_grid import __all__ as _grid
from .spatial_interp import *  # noqa: F401,F403
from .spatial_interp import __all__ as _interp
from .spatial_misc import *  # noqa: F401,F403
from .spatial_misc import __all__ as _misc
from .spatial_norm import *  # noqa: F401,F403
from .spatial_norm import __all__ as _norm
from .spatial_pad import *  # noqa: F401,F403
from .spatial_pad import __all__ as _pad
from .spatial_pool import *  # noqa: F401,F403
from .spatial_pool import __all__ as _pool

__all__ = [*_pad, *_interp, *_pool, *_norm, *_misc, *_embed, *_conv3d, *_grid]
