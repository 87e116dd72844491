"""numbagrad.linalg: torch.linalg."""

from .ops.linalg import matmul
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
from .ops.linalg_extras import cholesky_ex, inv_ex, solve_ex, solve_triangular
from .ops.linalg_node import LinAlgError
from .ops.linalg_norms import matrix_norm, norm, vector_norm
from .ops.linalg_products import linalg_cross as cross
from .ops.linalg_products import matrix_power, multi_dot, vecdot
from .ops.linalg_solvers import cholesky, det, inv, solve
from .ops.linalg_solvers import linalg_slogdet as slogdet

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "eigh", "eigvalsh", "inv",
           "inv_ex", "lstsq", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
           "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm"]
