"""Linear algebra beyond products: einsum, tensordot, decompositions and solvers (torch.linalg's
front ends)."""

from .linalg_solvers import (
    cholesky_deprecated,
    cholesky_inverse,
    cholesky_solve,
    det,
    inverse,
    logdet,
    slogdet,
)

cholesky = cholesky_deprecated

__all__ = ["cholesky", "cholesky_inverse", "cholesky_solve", "det", "inverse", "logdet",
           "slogdet"]

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {"cholesky": cholesky_deprecated, "cholesky_inverse": cholesky_inverse,
                  "cholesky_solve": cholesky_solve, "det": det, "inverse": inverse,
                  "logdet": logdet, "slogdet": slogdet}
