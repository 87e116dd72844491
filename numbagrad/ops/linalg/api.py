"""Linear algebra beyond products: einsum, tensordot, decompositions and solvers (torch.linalg's
front ends)."""

from .decomp import matrix_exp, pinverse, qr_deprecated, svd_deprecated
from .einsum import einsum
from .householder import geqrf, orgqr, ormqr
from .lu import lu_deprecated, lu_solve_deprecated, lu_unpack, triangular_solve
from .norms import matrix_norm, vector_norm  # noqa: F401 - numbagrad.linalg's
from .products import (
    addbmm,
    addmv,
    addr,
    baddbmm,
    cdist,
    cross,
    inner,
    kron,
    matrix_power,
    tensordot,
    vdot,
)
from .solvers import cholesky_deprecated, cholesky_inverse, cholesky_solve, inverse, logdet, slogdet
from .solvers import det as _linalg_det

cholesky, qr, svd = cholesky_deprecated, qr_deprecated, svd_deprecated
lu, lu_solve = lu_deprecated, lu_solve_deprecated


def det(input):
    """The determinant of (each) square matrix.

    Same as ``torch.det``: torch.linalg.det is the same but takes its argument as ``A``.

    Args:
        input: a (batch of) square matrix, (*, n, n).

    Returns:
        The determinant(s), (*).
    """
    return _linalg_det(input)

__all__ = ["addbmm", "addmv", "addr", "baddbmm", "cdist", "cholesky", "cholesky_inverse",
           "cholesky_solve", "cross", "det", "einsum", "geqrf", "inner", "inverse", "kron",
           "logdet", "lu", "lu_solve", "lu_unpack", "matrix_exp", "matrix_power", "orgqr", "ormqr",
           "pinverse", "qr",
           "slogdet", "svd", "tensordot", "triangular_solve", "vdot"]

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {"addbmm": addbmm, "addmv": addmv, "addr": addr, "baddbmm": baddbmm,
                  "cholesky": cholesky_deprecated, "cholesky_inverse": cholesky_inverse,
                  "cholesky_solve": cholesky_solve, "cross": cross, "det": _linalg_det,
                  "geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr,
                  "inner": inner, "inverse": inverse, "kron": kron, "logdet": logdet,
                  "lu": lu_deprecated, "lu_solve": lu_solve_deprecated,
                  "matrix_exp": matrix_exp, "matrix_power": matrix_power,
                  "pinverse": pinverse, "qr": qr_deprecated, "slogdet": slogdet,
                  "svd": svd_deprecated, "triangular_solve": triangular_solve, "vdot": vdot}
