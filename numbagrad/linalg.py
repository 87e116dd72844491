"""numbagrad.linalg: torch.linalg."""

from .ops.linalg_node import LinAlgError
from .ops.linalg_solvers import cholesky, det, inv, solve
from .ops.linalg_solvers import linalg_slogdet as slogdet

__all__ = ["LinAlgError", "cholesky", "det", "inv", "slogdet", "solve"]
