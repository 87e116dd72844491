"""Products beyond mm/bmm: vdot, addmv, addbmm, baddbmm, addr, cross and cdist as their own nodes
(torch's grad_fn names); inner, tensordot, kron, vecdot, multi_dot and matrix_power as torch's
composites of products and views."""

import warnings

import numpy as np

from ... import dtypes
from ...engine.record import shape_error_broadcast
from ..elementwise.pointwise import where
from ..reduce.reductions import sum as _sum
from ..shape.movement import expand, permute, reshape
from ..vjp import unbroadcast
from .common import const
from .matmul import _unsafe_view, mm
from .node import record_node
from .solvers import inv


def _same_dtype(tensors, message):
    if len({t.dtype for t in tensors}) > 1:
        raise RuntimeError(message)


# ---- vdot -------------------------------------------------------------------------------------
def vdot(input, other):  # noqa: A002 - torch's keyword names
    """The dot product of two 1-D tensors (the first conjugated: tensors are real).

    Same as ``torch.vdot``.
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{other.shape[0]}] to have the same number of elements, but "
                           f"got {input.shape[0]} and {other.shape[0]} elements respectively")
    _same_dtype((input, other), f"vdot : expected both vectors to have same dtype, but found "
                                f"{input.dtype.scalar_name} and {other.dtype.scalar_name}")
    value = np.asarray(np.dot(input._array(), other._array()))
    return record_node("VdotBackward0", [value], [input, other], _vdot_rule)[0]


def _vdot_rule(ctx, grads):
    (g,) = grads
    a, b = ctx.inputs
    return [g * b, g * a]


# ---- products with an added term --------------------------------------------------------------
def addmv(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002 - torch's keyword names
    """``beta * input + alpha * (mat @ vec)`` for a matrix and a vector.

    Same as ``torch.addmv``.
    """
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if mat.shape[1] != vec.shape[0] or (input.ndim and input.shape[0] not in (1, mat.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), "
                           f"mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    _same_dtype((input, mat, vec), f"addmv input tensors must have the same dtype, but got "
                                   f"{input.dtype.scalar_name}, {mat.dtype.scalar_name}, and "
                                   f"{vec.dtype.scalar_name}")
    shape = (mat.shape[0],)
    value = _added(input._array(), mat._array() @ vec._array(), beta, alpha, shape)
    return record_node("AddmvBackward0", [value], [input, mat, vec], _addmv_rule,
                       options=(beta, alpha))[0]


def _added(c, product, beta, alpha, shape):
    """beta * c + alpha * product, c ignored (NaN included) where beta is 0, as torch."""
    out = alpha * product if alpha != 1 else product
    if beta != 0:
        out = out + (beta * c if beta != 1 else c)
    return np.ascontiguousarray(np.broadcast_to(out, shape)).astype(product.dtype)


def _scaled(t, factor):
    return t if factor == 1 else t * factor


def _addmv_rule(ctx, grads):
    (g,) = grads
    c, mat, vec = ctx.inputs
    beta, alpha = ctx.options
    return [unbroadcast(_scaled(g, beta), c.shape),
            _scaled(g.unsqueeze(-1) * vec.unsqueeze(0), alpha), _scaled(mat.mT @ g, alpha)]


def _expand_error(input, shape):  # noqa: A002
    """torch's message when ``input`` does not expand to the result's ``shape``."""
    if input.ndim > len(shape):
        return RuntimeError(f"The expanded size of the tensor ({len(shape)}) must be greater or "
                            f"equal to the number of dimensions in the tensor ({input.ndim})")
    lead = len(shape) - input.ndim
    for d, s in enumerate(input.shape):
        if s != 1 and s != shape[lead + d]:
            return RuntimeError(
                f"The expanded size of the tensor ({shape[lead + d]}) must match the existing "
                f"size ({s}) at non-singleton dimension {lead + d}.  Target sizes: "
                f"{list(shape)}.  Tensor sizes: {list(input.shape)}")
    return None


def _check_batches(b1, b2, summed=False):
    if b1.ndim != 3 or b2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if b1.ndim != 3 else
                           "batch2 must be a 3D tensor")
    if summed and b1.shape[0] != b2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{b1.shape[0]} and {b2.shape[0]}")
    if summed and b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({b1.shape[1]}x{b1.shape[2]} and "
                           f"{b2.shape[1]}x{b2.shape[2]})")
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b1.shape[0]}, {b1.shape[2]}] but got: [{b2.shape[0]}, "
                           f"{b2.shape[1]}].")


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002 - torch's keyword names
    """``beta * input + alpha * (batch1 @ batch2)``, batch by batch.

    Same as ``torch.baddbmm``.
    """
    _check_batches(batch1, batch2)
    _same_dtype((input, batch1, batch2), f"expected scalar type {input.dtype.scalar_name} but "
                                         f"found {batch1.dtype.scalar_name}")
    shape = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    err = _expand_error(input, shape)
    if err is not None:
        raise err
    value = _added(input._array(), batch1._array() @ batch2._array(), beta, alpha, shape)
    return record_node("BaddbmmBackward0", [value], [input, batch1, batch2], _baddbmm_rule,
                       options=(beta, alpha))[0]


def _baddbmm_rule(ctx, grads):
    (g,) = grads
    c, b1, b2 = ctx.inputs
    beta, alpha = ctx.options
    return [unbroadcast(_scaled(g, beta), c.shape), _scaled(g @ b2.mT, alpha),
            _scaled(b1.mT @ g, alpha)]


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002 - torch's keyword names
    """``beta * input + alpha * (the sum of the products batch1[i] @ batch2[i])``.

    Same as ``torch.addbmm``.
    """
    _check_batches(batch1, batch2, summed=True)
    _same_dtype((input, batch1, batch2), f"expected scalar type {input.dtype.scalar_name} but "
                                         f"found {batch1.dtype.scalar_name}")
    shape = (batch1.shape[1], batch2.shape[2])
    err = _expand_error(input, shape)
    if err is not None:
        raise err
    product = (batch1._array() @ batch2._array()).sum(0)
    value = _added(input._array(), product, beta, alpha, shape)
    return record_node("AddbmmBackward0", [value], [input, batch1, batch2], _addbmm_rule,
                       options=(beta, alpha))[0]


def _addbmm_rule(ctx, grads):
    (g,) = grads
    c, b1, b2 = ctx.inputs
    beta, alpha = ctx.options
    return [unbroadcast(_scaled(g, beta), c.shape), _scaled(g.unsqueeze(0) @ b2.mT, alpha),
            _scaled(b1.mT @ g.unsqueeze(0), alpha)]


def addr(input, vec1, vec2, *, beta=1, alpha=1):  # noqa: A002 - torch's keyword names
    """``beta * input + alpha * outer(vec1, vec2)``, the three promoted to one dtype.

    Same as ``torch.addr``.
    """
    for arg, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {arg}, but got {v.ndim}-D")
    dt = dtypes.result_type((input.dtype, input.ndim), (vec1.dtype, 1), (vec2.dtype, 1))
    if not (dt.is_floating_point or dt is dtypes.bool_) and any(
            isinstance(s, float) for s in (beta, alpha)):
        name = "beta" if isinstance(beta, float) else "alpha"
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating "
                           "point number.")
    shape = (vec1.shape[0], vec2.shape[0])
    err = _expand_error(input, shape)
    if err is not None:
        raise err
    input, vec1, vec2 = (t if t.dtype is dt else t.to(dt) for t in (input, vec1, vec2))
    product = np.multiply.outer(vec1._array(), vec2._array())
    value = _added(input._array(), product, beta, alpha, shape)
    return record_node("AddrBackward0", [value], [input, vec1, vec2], _addr_rule,
                       options=(beta, alpha))[0]


def _addr_rule(ctx, grads):
    (g,) = grads
    c, v1, v2 = ctx.inputs
    beta, alpha = ctx.options
    return [unbroadcast(_scaled(g, beta), c.shape), _scaled(g @ v2, alpha),
            _scaled(g.mT @ v1, alpha)]


# ---- cross ------------------------------------------------------------------------------------
def linalg_cross(input, other, *, dim=-1):  # noqa: A002 - torch's keyword names
    """The cross product of 3-element vectors along ``dim``, broadcast.

    Same as ``torch.linalg.cross``.
    """
    return _cross(input, other, dim, "linalg.cross")


def cross(input, other, dim=None):  # noqa: A002 - torch's keyword names
    """torch.cross: without ``dim``, the first dimension of size 3 (torch warns)."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                      "The default value of dim will change to agree with that of "
                      "linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        sizes3 = [d for d, s in enumerate(shape) if s == 3]
        if not sizes3:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes3[0]
    return _cross(input, other, dim, "linalg.cross")


def _cross(a, b, dim, name):
    if a.ndim != b.ndim:
        raise RuntimeError(f"{name}: inputs must have the same number of dimensions.")
    err = shape_error_broadcast(a.shape, b.shape)
    if err is not None:
        raise err
    nd = max(a.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {dim})")
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError(f"{name}: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[dim]} and {b.shape[dim]}")
    _same_dtype((a, b), f"{name}: expected both inputs to have same dtype, but input has dtype "
                        f"{a.dtype.scalar_name} and other has dtype {b.dtype.scalar_name}")
    value = np.cross(a._array(), b._array(), axis=dim)
    return record_node("LinalgCrossBackward0", [np.ascontiguousarray(value)], [a, b],
                       _cross_rule, options=dim)[0]


def _cross_rule(ctx, grads):
    (g,) = grads
    a, b = ctx.inputs
    dim = ctx.options
    return [unbroadcast(_cross(b, g, dim, "linalg.cross"), a.shape),
            unbroadcast(_cross(g, a, dim, "linalg.cross"), b.shape)]


# ---- cdist ------------------------------------------------------------------------------------
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between each row of ``x1`` and each row of ``x2`` (batched).

    Same as ``torch.cdist``.
    """
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X{1 if x1.ndim < 2 else 2}"
                           f" got: {min(x1.ndim, x2.ndim)}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if not x1.dtype.is_floating_point or not x2.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{x1.dtype.scalar_name}" if not x1.dtype.is_floating_point else
                           f"cdist only supports floating-point dtypes, X2 got: "
                           f"{x2.dtype.scalar_name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    err = shape_error_broadcast(x1.shape[:-2], x2.shape[:-2])
    if err is not None:
        raise err
    diff = np.abs(x1._array()[..., :, None, :] - x2._array()[..., None, :, :])
    if p == 0:
        value = (diff != 0).sum(-1).astype(diff.dtype)
    elif p == np.inf:
        value = diff.max(-1, initial=0.0)
    elif p == 1:
        value = diff.sum(-1)
    elif p == 2:
        value = np.sqrt((diff * diff).sum(-1))
    else:
        value = (diff ** p).sum(-1) ** (1.0 / p)
    return record_node("CdistBackward0", [np.asarray(value, diff.dtype)], [x1, x2],
                       _cdist_rule, options=float(p))[0]


def _cdist_rule(ctx, grads):
    (g,) = grads
    x1, x2 = ctx.inputs
    dist = ctx.outputs[0]
    p = ctx.options
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
    dt = diff._data.dtype
    zero = const(0.0, dt)
    d = dist.unsqueeze(-1)
    if p == 0:  # piecewise constant
        return [const(np.zeros(x1.shape), dt), const(np.zeros(x2.shape), dt)]
    if p == 1:
        local = diff.sign()
    elif p == np.inf:
        local = diff.sign() * (diff.abs() == d)
    else:
        # d/dx ||x||_p = x |x|^(p-2) / d^(p-1), 0 where the distance is 0 (torch's subgradient)
        at_zero = d == 0
        safe = where(at_zero, const(1.0, dt), d)
        local = diff * diff.abs() ** (p - 2) if p != 2 else diff
        local = where(at_zero, zero, local / (safe ** (p - 1) if p != 2 else safe))
    weighted = g.unsqueeze(-1) * local
    g1 = unbroadcast(_sum(weighted, -2), x1.shape)
    g2 = unbroadcast(-_sum(weighted, -3), x2.shape)
    return [g1, g2]


# ---- composites -------------------------------------------------------------------------------
def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` (a count: a's last and b's first; or two lists) as torch: permute,
    fold to matrices, one mm, view back (ViewBackward0)."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(-dims, 0)), list(range(dims))
    else:
        da, db = dims
        if hasattr(da, "tolist"):
            da, db = da.tolist(), db.tolist()
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} in "
                               f"dim {j}")
    da = [d % a.ndim if a.ndim else d for d in da]
    db = [d % b.ndim if b.ndim else d for d in db]
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da], dtype=np.int64))
    rows = [a.shape[d] for d in free_a]
    cols = [b.shape[d] for d in free_b]
    am = reshape(permute(a, *free_a, *da), int(np.prod(rows, dtype=np.int64)), k)
    bm = reshape(permute(b, *db, *free_b), k, int(np.prod(cols, dtype=np.int64)))
    return reshape(mm(am, bm), *rows, *cols)


def inner(input, other):  # noqa: A002 - torch's keyword names
    """The sum of the products over the last dimension of each (the dot product of 1-D tensors).

    Same as ``torch.inner``.
    """
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def kron(input, other):  # noqa: A002 - torch's keyword names
    """The Kronecker product of two tensors.

    Same as ``torch.kron``.

    Args:
        input: a tensor (the tensor itself, as a method).
        other: a tensor; the one with fewer dimensions gets leading size-1 dimensions.

    Returns:
        A tensor whose size along each dimension is the product of the two sizes there.
    """
    nd = max(input.ndim, other.ndim)
    a = reshape(input, *([1] * (nd - input.ndim)), *input.shape)
    b = reshape(other, *([1] * (nd - other.ndim)), *other.shape)
    # a's dims interleaved with b's: out[i * n + j] = a[i] b[j] along each dim
    sa = [s for d in range(nd) for s in (a.shape[d], 1)]
    sb = [s for d in range(nd) for s in (1, b.shape[d])]
    prod = reshape(a, *sa) * reshape(b, *sb)
    return _unsafe_view(prod, tuple(a.shape[d] * b.shape[d] for d in range(nd)))


def vecdot(x, y, *, dim=-1):
    """sum(x * y, dim) (SumBackward1, as torch's)."""
    if not x.dtype.is_floating_point and x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {x.dtype.scalar_name} and y of type "
                           f"{y.dtype.scalar_name} instead")
    return _sum(x * y, dim)


def multi_dot(tensors):
    """The chain product of 2-d matrices (the first and last may be vectors), left to right;
    torch picks the cheapest order, the values agree to rounding."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, n - 1) else (2,)
        if t.ndim not in allowed:
            which = "first" if i == 0 else "last" if i == n - 1 else None
            raise RuntimeError(
                f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.ndim}D" if which
                else f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    mats = list(tensors)
    if first.ndim == 1:
        mats[0] = reshape(first, 1, first.shape[0])
    if last.ndim == 1:
        mats[-1] = reshape(last, last.shape[0], 1)
    out = mats[0]
    for i, m in enumerate(mats[1:], 1):
        if out.shape[1] != m.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(tensors[i - 1].shape)} and {list(tensors[i].shape)} "
                               "cannot be multiplied")
        out = mm(out, m)
    shape = [s for s, keep in ((out.shape[0], first.ndim == 2), (out.shape[1], last.ndim == 2))
             if keep]
    return out.view(*shape)


def matrix_power(input, n):
    """(Each) square matrix to the integer power ``n`` (negative: of the inverse).

    Same as ``torch.linalg.matrix_power`` (also ``torch.matrix_power``).
    """
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {input.shape[-2] if input.ndim > 1 else input.shape} by "
                           f"{input.shape[-1] if input.ndim else ''} matrices")
    if n == 0:
        # identities still connected to A (a zero gradient, CloneBackward0, as torch's)
        eye = expand(const(np.eye(input.shape[-1]), input._data.dtype), *input.shape)
        return where(const(np.zeros(input.shape, bool), bool), input, eye).clone()
    if n == 1:
        return input.clone()
    base = inv(input) if n < 0 else input
    n = abs(n)
    result = None
    while n:  # binary powering, as torch's
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"addbmm": "one", "addmv": "one", "baddbmm": "one", "cross": "one", "inner": "one",
             "kron": "one", "matrix_power": "one", "vdot": "one", "addr": "one"}
