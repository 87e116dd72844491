"""torch.functional: the functions torch defines there, each numbagrad's function of the same
name (``numbagrad.functional.einsum is numbagrad.einsum``).

torch.functional also has ``chain_matmul``, ``lu``, ``stft``, ``istft``, ``pca_lowrank`` and
``svd_lowrank``, which numbagrad lacks: they are left out rather than named and raising.
"""

from .creation import meshgrid
from .ops.linalg.api import cdist, einsum, tensordot
from .ops.linalg.lu import lu_deprecated as lu
from .ops.reduce.reductions import norm
from .ops.scan.api import unique, unique_consecutive
from .ops.shape.api import (
           atleast_1d,
           atleast_2d,
           atleast_3d,
           block_diag,
           broadcast_shapes,
           broadcast_tensors,
           cartesian_prod,
           unravel_index,
)
from .ops.shape.join import split

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "block_diag", "cdist", "einsum", "lu", "norm", "meshgrid", "split",
           "tensordot", "unique", "unique_consecutive", "unravel_index"]
