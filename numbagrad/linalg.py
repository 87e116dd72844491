"""numbagrad.linalg: torch.linalg."""

from .ops.linalg.decomp import (
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
from .ops.linalg.extras import (
           cholesky_ex,
           cond,
           diagonal,
           householder_product,
           inv_ex,
           solve_ex,
           solve_triangular,
           tensorinv,
           tensorsolve,
           vander,
)
from .ops.linalg.lu import (
           ldl_factor,
           ldl_factor_ex,
           ldl_solve,
           lu,
           lu_factor,
           lu_factor_ex,
           lu_solve,
)
from .ops.linalg.matmul import matmul
from .ops.linalg.node import LinAlgError
from .ops.linalg.norms import matrix_norm, norm, vector_norm
from .ops.linalg.products import linalg_cross as cross
from .ops.linalg.products import matrix_power, multi_dot, vecdot
from .ops.linalg.solvers import cholesky, det, inv, solve
from .ops.linalg.solvers import linalg_slogdet as slogdet

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh",
           "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex",
           "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul",
           "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv",
           "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv",
           "tensorsolve", "vander", "vecdot", "vector_norm"]
