"""torch.nn.modules.batchnorm: batch norm layers, the same classes as numbagrad.nn's."""

from ..lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d
from ..normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    _BatchNorm,  # noqa: F401 - torch's base class, not in __all__
    _NormBase,  # noqa: F401 - torch's base class, not in __all__
)

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d",
           "LazyBatchNorm3d"]
