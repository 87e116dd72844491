"""numbagrad.linalg: torch.linalg."""

from .ops.linalg_decomp import (
    eigh,
    eigvalsh,
    lstsq,
    matrix_exp,
    matrix_rank,
    pinv,
    qr,
    svd,
    svdvals,
)
from .ops.linalg_node import LinAlgError
from .ops.linalg_solvers import cholesky, det, inv, solve
from .ops.linalg_solvers import linalg_slogdet as slogdet

__all__ = ["LinAlgError", "cholesky", "det", "eigh", "eigvalsh", "inv", "lstsq", "matrix_exp",
           "matrix_rank", "pinv", "qr", "slogdet", "solve", "svd", "svdvals"]
