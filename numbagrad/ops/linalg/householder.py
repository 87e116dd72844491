"""LAPACK's Householder QR in its compact form, through SciPy: geqrf (the reflectors and
their scales; no derivative, as in torch), orgqr (torch.linalg.householder_product under its
LAPACK name) and ormqr (Q, or its transpose, times a matrix, without forming Q)."""

from types import SimpleNamespace

import numpy as np

from ..shape.join import cat
from ..shape.movement import narrow
from .common import return_type
from .extras import _householder_rule, householder_product
from .node import record_node

GeqrfResult = return_type("geqrf", ["a", "tau"])


def _lapack(name, a):
    from scipy.linalg import lapack  # lazily: SciPy's import cost

    return lapack.get_lapack_funcs(name, (a,))


# ---- geqrf ------------------------------------------------------------------------------------
def geqrf(input):  # noqa: A002 - torch's keyword names
    """LAPACK's QR of (each) matrix: R on and above the diagonal, the Householder vectors below
    it, and their scales ``tau``.

    Same as ``torch.geqrf``: it has no derivative (backward raises torch's error).
    """
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"geqrf_cpu" not implemented for '
                                  f"'{input.dtype.scalar_name}'")
    a = input._array()
    rows, cols = a.shape[-2:]
    k = min(rows, cols)
    qr = np.array(a, copy=True)
    tau = np.zeros((*a.shape[:-2], k), a.dtype)
    if qr.size and k:
        fn = _lapack("geqrf", a)
        flat_a, flat_t = qr.reshape(-1, rows, cols), tau.reshape(-1, k)
        for i in range(flat_a.shape[0]):
            flat_a[i], flat_t[i] = fn(flat_a[i])[:2]
    return GeqrfResult(*record_node("GeqrfBackward0", [qr, tau], [input], _geqrf_rule))


def _geqrf_rule(ctx, grads):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def orgqr(input, input2):  # noqa: A002 - torch's keyword names
    """The first n columns of the Q whose reflectors ``input`` and scales ``input2`` (tau)
    hold (geqrf's).

    Same as ``torch.orgqr``: torch.linalg.householder_product.

    Args:
        input: a (batch of) (m, n) tensor holding the Householder reflectors below its
            diagonal (the tensor itself, as a method).
        input2: the (batch of) k scales tau of the reflectors, k <= n.

    Returns:
        A (batch of) (m, n) tensor, the first n columns of Q.
    """
    return householder_product(input, input2)


# ---- ormqr ------------------------------------------------------------------------------------
def _check_ormqr(a, tau, c, left):
    name = "torch.ormqr"
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if c.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if c.shape[side] != a.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.ndim and tau.shape[-1] != min(c.shape[side], a.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    if a.ndim - tau.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {a.ndim}")
    if a.ndim != c.ndim:
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {c.ndim} and input.ndim is equal "
                           f"to {a.ndim}")
    if tuple(tau.shape[:-1]) != tuple(a.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tuple(c.shape[:-2]) != tuple(a.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of other to be equal to "
                           f"input.shape[:-2], but got {list(c.shape[:-2])}")
    for arg, t in (("tau", tau), ("other", c)):
        if t.dtype is not a.dtype:
            raise RuntimeError(f"{name}: Expected input and {arg} to have the same dtype, but "
                               f"input has dtype{a.dtype.scalar_name} and {arg} has dtype "
                               f"{t.dtype.scalar_name}")
    if not a.dtype.is_floating_point:
        raise NotImplementedError(f'"ormqr_cpu" not implemented for \'{a.dtype.scalar_name}\'')


def ormqr(input, input2, input3, left=True, transpose=False):  # noqa: A002 - torch's names
    """``Q @ other`` (``other @ Q`` with ``left=False``; Q transposed with ``transpose``) for
    the Q that geqrf's ``input`` and ``tau`` hold, without forming Q; ``input2`` is tau and
    ``input3`` other (torch's keyword names).

    Same as ``torch.ormqr``.
    """
    tau, other = input2, input3
    _check_ormqr(input, tau, other, left)
    a, t, c = input._array(), tau._array(), other._array()
    out = np.array(c, copy=True)
    k = t.shape[-1]
    if out.size and k:
        fn = _lapack("ormqr", a)
        rows = a.shape[-2]
        flat_a = a.reshape(-1, rows, a.shape[-1])[..., :k]
        flat_t, flat_o = t.reshape(-1, k), out.reshape(-1, *c.shape[-2:])
        lwork = max(1, *c.shape[-2:]) * 64
        for i in range(flat_a.shape[0]):
            flat_o[i] = fn("L" if left else "R", "T" if transpose else "N", flat_a[i], flat_t[i],
                           flat_o[i], lwork)[0]
    return record_node("OrmqrBackward0", [out], [input, tau, other], _ormqr_rule,
                       options=(left, transpose))[0]


def _ormqr_rule(ctx, grads):
    # out = op(Q) C or C op(Q) with Q = householder_product of input widened to a square:
    # the gradient of Q goes through householder_product's rule
    (g,) = grads
    a, tau, c = ctx.inputs
    left, transpose = ctx.options
    rows, cols = a.shape[-2:]
    square = a if cols == rows else (narrow(a, -1, 0, rows) if cols > rows else cat(
        [a, a.new_zeros((*a.shape[:-1], rows - cols))], -1))
    q = householder_product(square, tau)
    if left:
        gq = c @ g.mT if transpose else g @ c.mT
        gc = q @ g if transpose else q.mT @ g
    else:
        gq = g.mT @ c if transpose else c.mT @ g
        gc = g @ q if transpose else g @ q.mT
    g_square, g_tau = _householder_rule(SimpleNamespace(inputs=[square, tau]), [gq])
    g_a = narrow(g_square, -1, 0, min(rows, cols))
    if cols > rows:
        g_a = cat([g_a, a.new_zeros((*a.shape[:-1], cols - rows))], -1)
    return [g_a, g_tau, gc]

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"orgqr": "one", "ormqr": "one", "geqrf": "several"}
