"""Linear algebra beyond products: einsum, tensordot, decompositions and solvers (torch.linalg's
front ends)."""

from .linalg_decomp import matrix_exp, qr_deprecated, svd_deprecated
from .linalg_solvers import (
    cholesky_deprecated,
    cholesky_inverse,
    cholesky_solve,
    det,
    inverse,
    logdet,
    slogdet,
)

cholesky, qr, svd = cholesky_deprecated, qr_deprecated, svd_deprecated

__all__ = ["cholesky", "cholesky_inverse", "cholesky_solve", "det", "inverse", "logdet",
           "matrix_exp", "qr", "slogdet", "svd"]

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {"cholesky": cholesky_deprecated, "cholesky_inverse": cholesky_inverse,
                  "cholesky_solve": cholesky_solve, "det": det, "inverse": inverse,
                  "logdet": logdet, "matrix_exp": matrix_exp, "qr": qr_deprecated,
                  "slogdet": slogdet, "svd": svd_deprecated}
