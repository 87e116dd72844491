"""numbagrad.optimize: scipy.optimize with derivatives from compiled replay.

``minimize`` hands scipy the value and gradient from one compiled ``value_and_grad`` call
(``jac=True``), and, for the methods that use second order, Hessian-vector products from a
compiled trace of the gradient's own graph. ``least_squares`` hands it the residuals and
their Jacobian, both from compiled traces. ``fun`` is written with numbagrad ops on a Tensor
(as for ``numbagrad.func.grad``); scipy sees NumPy arrays only.
"""

import weakref

import numpy as np

from . import func
from .compiler.compiled import compile as _compile
from .factories import tensor

__all__ = ["minimize", "least_squares"]

# the methods of scipy.optimize.minimize that take a Hessian-vector product / a full Hessian
_HESSP_METHODS = {"newton-cg", "trust-ncg", "trust-krylov", "trust-constr"}
_HESS_METHODS = {"dogleg", "trust-exact"}


def _derivatives(use_compile):
    """What wraps each derivative transform: compile, or nothing (eager)."""
    return _compile if use_compile else (lambda transform: transform)


# fun -> {use_compile: value_and_grad}: minimizing the same function again (many starts, many
# problems on one worker) reuses its traces instead of tracing anew
_value_and_grads = weakref.WeakKeyDictionary()


def _value_and_grad_of(fun, use_compile):
    try:
        per_fun = _value_and_grads.setdefault(fun, {})
    except TypeError:  # not weakly referenceable: no reuse
        per_fun = {}
    if use_compile not in per_fun:
        per_fun[use_compile] = _derivatives(use_compile)(func.value_and_grad(fun))
    return per_fun[use_compile]


def minimize(fun, x0, args=(), method=None, *, compile=True, **kwargs):  # noqa: A002
    """``scipy.optimize.minimize(fun, x0, args, method, jac=True, ...)`` with the value and
    gradient of ``fun(x, *args)`` (a scalar Tensor) from one compiled replay per evaluation.

    For Newton-CG, trust-ncg, trust-krylov and trust-constr it also passes ``hessp``, a
    compiled Hessian-vector product; for dogleg and trust-exact, ``hess`` (n such products).
    Other keyword arguments go to scipy unchanged; a ``hess`` or ``hessp`` given there wins.
    ``compile=False`` uses the eager transforms (for functions compile does not support).
    ``jac=True`` (or a ``fun`` with ``returns_value_and_grad``, as ``numbagrad.distributed``'s
    has) means ``fun`` returns ``(value, gradient)`` on NumPy arrays itself: it goes to scipy
    as it is. Returns scipy's ``OptimizeResult``.

    Args:
        fun: the objective, called as ``fun(x, *args)`` with ``x`` a float64 Tensor of
            ``x0``'s shape; returns a scalar Tensor (or, as said above, ``(value,
            gradient)`` on arrays).
        x0: the starting point (an array-like, made float64).
        args: extra arguments of ``fun`` (a tuple, or one value) (default ()).
        method: scipy's method name (default None: scipy's choice).
        compile: whether the derivatives come from ``numbagrad.compile``d transforms
            (default True) or the eager ones (False).
        **kwargs: passed to ``scipy.optimize.minimize`` unchanged (except ``jac``).

    Returns:
        scipy's ``OptimizeResult``.

    Examples:
        >>> import numbagrad as torch
        >>> import numpy as np
        >>> from numbagrad.optimize import minimize
        >>> res = minimize(lambda x: ((x - 3.0) ** 2).sum(), np.zeros(2))
        >>> np.round(res.x, 4)
        array([3., 3.])
    """
    import scipy.optimize  # on first use: it takes ~0.35 s to import

    if kwargs.get("jac") is True or getattr(fun, "returns_value_and_grad", False):
        # fun already gives (value, gradient) on NumPy arrays (distributed.value_and_grad)
        kwargs.pop("jac", None)
        return scipy.optimize.minimize(fun, np.asarray(x0, np.float64), args=args,
                                       method=method, jac=True, **kwargs)
    if "jac" in kwargs:
        raise TypeError("numbagrad.optimize.minimize() computes jac itself; call "
                        "scipy.optimize.minimize directly to pass your own, or pass jac=True "
                        "with a fun that returns (value, gradient)")
    wrap = _derivatives(compile)
    x0 = np.asarray(x0, dtype=np.float64)
    shape = x0.shape
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    value_and_grad = _value_and_grad_of(fun, compile)

    def fun_and_jac(x, *a):
        value, g = value_and_grad(x.reshape(shape), *a)
        return float(value), np.asarray(g, np.float64).reshape(-1)

    name = (method or "").lower() if isinstance(method, str) else ""
    if name in _HESSP_METHODS | _HESS_METHODS and "hess" not in kwargs and \
            "hessp" not in kwargs:
        hvp = _hvp(fun, wrap, shape)
        if name in _HESSP_METHODS:
            kwargs["hessp"] = hvp
        else:
            n = x0.size

            def hess(x, *a):
                eye = np.eye(n)
                h = np.stack([hvp(x, eye[i], *a) for i in range(n)])
                return 0.5 * (h + h.T)  # symmetric to rounding, as the methods assume
            kwargs["hess"] = hess
    return scipy.optimize.minimize(fun_and_jac, x0.reshape(-1), args=args, method=method,
                                   jac=True, **kwargs)


def _hvp(fun, wrap, shape):
    """``hessp(x, p, *args)``: the gradient of ``grad(fun)(x) . p`` with respect to x."""
    inner = func.grad(fun)

    def directional(x, p, *a):
        return (inner(x, *a) * p).sum()
    grad_of_directional = wrap(func.grad(directional))

    def hessp(x, p, *a):
        g = grad_of_directional(x.reshape(shape), np.asarray(p, np.float64).reshape(shape), *a)
        return np.asarray(g, np.float64).reshape(-1)
    return hessp


def least_squares(fun, x0, args=(), *, compile=True, **kwargs):  # noqa: A002
    """``scipy.optimize.least_squares(fun, x0, jac=..., args=args, ...)`` with the residuals
    ``fun(x, *args)`` (a 1-D Tensor) and their Jacobian from compiled replays.

    The Jacobian is built from whichever of its sides is smaller: n Jacobian-vector products
    (columns, each the reverse mode of a reverse mode) when there are fewer parameters than
    residuals, otherwise m vector-Jacobian products (rows). Other keyword arguments go to
    scipy unchanged. Returns scipy's ``OptimizeResult``.

    Args:
        fun: the residuals, called as ``fun(x, *args)`` with ``x`` a float64 Tensor of
            ``x0``'s shape; returns a 1-D Tensor. It may not be given ``jac``.
        x0: the starting point (an array-like, made float64).
        args: extra arguments of ``fun`` (a tuple, or one value) (default ()).
        compile: whether the derivatives come from ``numbagrad.compile``d transforms
            (default True) or the eager ones (False).
        **kwargs: passed to ``scipy.optimize.least_squares`` unchanged.

    Returns:
        scipy's ``OptimizeResult``.
    """
    import scipy.optimize  # on first use: it takes ~0.35 s to import

    if "jac" in kwargs:
        raise TypeError("numbagrad.optimize.least_squares() computes jac itself; call "
                        "scipy.optimize.least_squares directly to pass your own")
    wrap = _derivatives(compile)
    x0 = np.asarray(x0, dtype=np.float64)
    shape = x0.shape
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)

    def weighted(x, w, *a):
        return (fun(x, *a) * w).sum()
    # d(r.w)/dw = r: the residuals; d(r.w)/dx = J^T w: a row of J for w = e_i
    residuals_of = wrap(func.grad(weighted, argnums=1))
    row_of = wrap(func.grad(weighted, argnums=0))

    def column_objective(x, w, u, *a):
        return (func.grad(weighted)(x, w, *a) * u).sum()
    # d/dw (J^T w . u) = J u: a column of J for u = e_j (the value of w does not matter)
    column_of = wrap(func.grad(column_objective, argnums=1))

    m = None

    def residuals(x, *a):
        nonlocal m
        if m is None:  # the residuals' length: one eager call to find it
            r = fun(_as_tensor(x.reshape(shape)), *a)
            if r.dim() != 1:
                raise ValueError(f"numbagrad.optimize.least_squares: fun must return a 1-D "
                                 f"Tensor of residuals, got shape {tuple(r.shape)}")
            m = int(r.shape[0])
        return np.asarray(residuals_of(x.reshape(shape), np.zeros(m), *a),
                          np.float64).reshape(-1)

    def jacobian(x, *a):
        xs = x.reshape(shape)
        n = x.size
        out = np.empty((m, n))
        if n <= m:
            w = np.zeros(m)
            u = np.zeros(shape)
            flat_u = u.reshape(-1)
            for j in range(n):
                flat_u[:] = 0.0
                flat_u[j] = 1.0
                out[:, j] = np.asarray(column_of(xs, w, u, *a)).reshape(-1)
        else:
            w = np.zeros(m)
            for i in range(m):
                w[:] = 0.0
                w[i] = 1.0
                out[i] = np.asarray(row_of(xs, w, *a)).reshape(-1)
        return out

    return scipy.optimize.least_squares(residuals, x0.reshape(-1), jac=jacobian, args=args,
                                        **kwargs)


def _as_tensor(x):
    return tensor(x)
