"""Matrix products: mm, mv, dot, bmm, addmm, and matmul composed from them as torch does."""

import numpy as np

from ..core import grad_mode
from ..tensor import Tensor, _make  # noqa: F401
from . import gemm
from .pointwise import binary, to_dtype
from .record import record, shape_error_broadcast
from .registry import Sample, Unwritten, defop, vjp_rule
from .shape import UNSAFE_VIEW, expand, expanded_shape, reshape, transpose, unsqueeze
from .shape import t as _t
from .vjp import unbroadcast, unbroadcast_array

# The products compute in their dtype through gemm.product, eager and replay alike
# (replay_f32): the same routine on the same float32 data gives the same bits.
MM = defop("mm", "MmBackward0", 2, replay="mm_fw", replay_f32=True, kernel="mm_bw",
           saves=("x0", "x1"),
           samples=[Sample(((3, 4), (4, 2))), Sample(((1, 5), (5, 1))), Sample(((2, 0), (0, 3)))],
           torch="mm")
MV = defop("mv", "MvBackward0", 2, replay="mv_fw", replay_f32=True, kernel="mv_bw",
           saves=("x0", "x1"),
           samples=[Sample(((3, 4), (4,))), Sample(((1, 2), (2,)))], torch="mv")
DOT = defop("dot", "DotBackward0", 2, replay="dot_fw", replay_f32=True, kernel="dot_bw",
            saves=("x0", "x1"),
            samples=[Sample(((5,), (5,))), Sample(((1,), (1,)))], torch="dot")
BMM = defop("bmm", "BmmBackward0", 2, replay="bmm_fw", replay_f32=True, kernel="bmm_bw",
            saves=("x0", "x1"),
            samples=[Sample(((2, 3, 4), (2, 4, 5)))], torch="bmm")
ADDMM = defop("addmm", "AddmmBackward0", 3, replay="addmm_fw", replay_f32=True,
              kernel="addmm_bw", saves=("x1", "x2"),
              samples=[Sample(((3, 2), (3, 4), (4, 2))), Sample(((2,), (3, 4), (4, 2))),
                       Sample(((3, 2), (3, 4), (4, 2)), {"beta": 0.5, "alpha": 2.0},
                              "lib.addmm(x0, x1, x2, **kw)")], torch="addmm")
# ---- big-node derivatives in NumPy: one BLAS call per product, accumulated in place ----------
def _add_product(target, left, right, alpha=1.0):
    """target += alpha * (left @ right), computed in target's own layout: a transposed target
    (the engine hands a t() node's gradient over as a transposed view of its input's, see
    Tape.transposes) gets right.T @ left.T added to its C-ordered transpose, so the product
    lands in place with no strided scatter. The BLAS call accumulates (gemm.add_product)."""
    if not target.flags.c_contiguous and target.T.flags.c_contiguous:
        target, left, right = target.T, right.T, left.T
    if type(target) is Unwritten:
        gemm.add_product(target.view(np.ndarray), left, right, alpha, overwrite=True)
    else:
        gemm.add_product(target, left, right, alpha)


def _mm_numpy(g, xs, gxs, iat, fat):
    a, b = xs
    if gxs[0] is not None:
        _add_product(gxs[0], g, b.T)
    if gxs[1] is not None:
        _add_product(gxs[1], a.T, g)


def _mv_numpy(g, xs, gxs, iat, fat):
    a, v = xs
    if gxs[0] is not None:
        gxs[0] += np.multiply.outer(g, v)
    if gxs[1] is not None:
        _add_product(gxs[1].reshape(-1, 1), a.T, g.reshape(-1, 1))


def _addmm_numpy(g, xs, gxs, iat, fat):
    beta, alpha = fat[0], fat[1]
    _, a, b = xs
    if gxs[0] is not None:
        gb = g if beta == 1.0 else g * g.dtype.type(beta)
        # F.linear's (n,) bias on (m, n) rows, the common case, is a column sum
        column_sum = gxs[0].ndim == 1 and gb.ndim == 2 and gxs[0].shape[0] == gb.shape[1]
        gxs[0] += gb.sum(axis=0) if column_sum else unbroadcast_array(gb, gxs[0].shape)
    if gxs[1] is not None:
        _add_product(gxs[1], g, b.T, alpha)
    if gxs[2] is not None:
        _add_product(gxs[2], a.T, g, alpha)


MM.numpy_bw, MV.numpy_bw = _mm_numpy, _mv_numpy
MM.numpy_bw_any_layout = (0, 1)  # both go through _add_product
ADDMM.numpy_bw = _addmm_numpy
ADDMM.numpy_bw_any_layout = (1, 2)  # the two products (not the broadcast bias)


def _bmm_numpy(g, xs, gxs, iat, fat):
    a, b = xs
    for i in range(g.shape[0]):  # kernels.bmm_bw's products, batch by batch
        if gxs[0] is not None:
            _add_product(gxs[0][i], g[i], b[i].T)
        if gxs[1] is not None:
            _add_product(gxs[1][i], a[i].T, g[i])


BMM.numpy_bw = _bmm_numpy

# matmul itself records the primitives above (and views), so torch's grad_fn names follow
MATMUL_SAMPLES = [Sample(((3,), (3,)), {}, "x0 @ x1"), Sample(((2, 3), (3,)), {}, "x0 @ x1"),
                  Sample(((3,), (3, 2)), {}, "x0 @ x1"), Sample(((2, 3), (3, 4)), {}, "x0 @ x1"),
                  Sample(((2, 2, 3), (3, 4)), {}, "x0 @ x1"),
                  Sample(((2, 1, 2, 3), (4, 3, 2)), {}, "lib.matmul(x0, x1)"),
                  Sample(((3,), (2, 3, 4)), {}, "x0 @ x1"),
                  Sample(((2, 3, 4), (4,)), {}, "x0 @ x1"),
                  Sample(((3,), (4,)), {}, "lib.outer(x0, x1)")]
MATMUL_SQUEEZE = defop("matmul_squeeze", "SqueezeBackward4", 1, replay="reshape_fw",
                       kernel="reshape_bw",
                       samples=MATMUL_SAMPLES)


def _dims_of(x):
    return "x".join(str(s) for s in x.shape)


def _common(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.c_name} != {b.dtype.c_name}")
    if not a.dtype.is_floating_point:
        return a, b  # integer products are computed by NumPy and never recorded
    return to_dtype(a, a.dtype), to_dtype(b, b.dtype)


def mm(a, b):
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims_of(a)} and "
                           f"{_dims_of(b)})")
    a, b = _common(a, b)
    return record(MM, _product(a._array(), b._array()), (a, b))


def mv(a, v):
    if a.ndim != 2 or v.ndim != 1 or a.shape[1] != v.shape[0]:
        if a.ndim == 2 and v.ndim == 1:
            raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({_dims_of(a)}), "
                               f"vec ({v.shape[0]})")
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    a, v = _common(a, v)
    return record(MV, _product(a._array(), v._array()[:, None]).reshape(-1), (a, v))


def dot(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                           f"[{b.shape[0]}] to have the same number of elements, but got "
                           f"{a.shape[0]} and {b.shape[0]} elements respectively")
    a, b = _common(a, b)
    return record(DOT, _product(a._array()[None, :], b._array()[:, None])[0, 0], (a, b))


def bmm(a, b):
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    a, b = _common(a, b)
    x, w = a._array(), b._array()
    if x.dtype.kind != "f":
        return record(BMM, np.matmul(x, w), (a, b))
    value = np.empty((x.shape[0], x.shape[1], w.shape[2]), x.dtype)
    gemm.batched_product(value, x, w)
    return record(BMM, value, (a, b))


def addmm(c, a, b, *, beta=1, alpha=1):
    # torch's order: the dtypes (no promotion), the ranks, the inner sizes, then self
    # expanded to the product's shape (even with beta = 0, where its values are ignored)
    for first, name in ((c, "self"), (a, "mat1")):
        if first.dtype is not b.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{first.dtype.scalar_name} and {b.dtype.scalar_name}")
    for m, name in ((a, "mat1"), (b, "mat2")):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims_of(a)} and "
                           f"{_dims_of(b)})")
    expanded_shape(c, (a.shape[0], b.shape[1]))
    a, b = _common(a, b)
    return record(ADDMM, _addmm_value(c._array(), a._array(), b._array(), beta, alpha),
                  (c, a, b), (), (float(beta), float(alpha)))


def _product(a, b):
    """a @ b of two 2-d arrays: gemm.product for floats (the routine the replay calls too),
    NumPy for integers (never recorded)."""
    if a.dtype.kind != "f":
        return np.matmul(a, b)
    return gemm.matmul(a, b)


def _addmm_value(c, a, b, beta, alpha):
    """beta * c + alpha * (a @ b), c broadcast to the product's shape: one product that
    starts from c (beta = 0 ignores c, NaNs included, as torch), replay's addmm_fw."""
    out_shape = (a.shape[0], b.shape[1])
    if a.dtype.kind != "f":
        return np.ascontiguousarray(np.broadcast_to(beta * c + alpha * np.matmul(a, b),
                                                    out_shape)).astype(a.dtype)
    value = np.empty(out_shape, a.dtype)
    if beta != 0:
        np.copyto(value, c)
    gemm.product_into(value, a, b, alpha, beta)
    return value


def linear(x, w, bias):
    """F.linear's common case: 2-d input, 2-d weight and 1-d bias of one floating dtype with
    matching sizes; records what ``addmm(bias, x, t(w))`` records (TBackward0 under
    AddmmBackward0, as torch), with the argument checks done once on the NumPy arrays.
    Returns None when the case does not apply (the caller takes the general path)."""
    xd, wd, bd = x._data, w._data, bias._data
    if type(xd) is not np.ndarray or type(wd) is not np.ndarray or \
            type(bd) is not np.ndarray or xd.ndim != 2 or wd.ndim != 2 or bd.ndim != 1:
        return None
    dt = xd.dtype
    if dt.kind != "f" or wd.dtype != dt or bd.dtype != dt or xd.shape[1] != wd.shape[1] or \
            bd.shape[0] != wd.shape[0]:
        return None
    value = _addmm_value(bd, xd, wd.T, 1.0, 1.0)
    if not grad_mode.state.enabled or not (x._requires_grad or w._requires_grad or
                                           bias._requires_grad):
        return _make(value)
    return record(ADDMM, value, (bias, x, weight_t(w)), (), (1.0, 1.0))


def weight_t(w):
    """``t(w)`` for F.linear, whose one matrix product is the only consumer of the result:
    noted in Tape.transposes, so that product's backward writes w's gradient in w's own
    layout (engine.py) instead of the t() node scattering it through a strided view."""
    wt = _t(w)
    if wt._tape is not None and w.ndim == 2:
        wt._tape.transposes[wt._node] = wt._tape.arg_nodes(wt._node)[0]
    return wt


def matmul(a, b):
    """torch.matmul's dispatch, recording the same primitive ops torch does."""
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    if a.ndim == 1 and b.ndim == 1:
        return dot(a, b)
    if a.ndim == 2 and b.ndim == 1:
        return mv(a, b)
    if a.ndim == 1 and b.ndim == 2:
        prod = mm(unsqueeze(a, 0), b)
        return record(MATMUL_SQUEEZE, prod._array().reshape(b.shape[1:]), (prod,))
    if a.ndim == 2 and b.ndim == 2:
        return mm(a, b)
    # batched: broadcast the batch dims, fold them, bmm, unfold (UnsafeViewBackward0)
    a2 = unsqueeze(a, 0) if a.ndim == 1 else a
    b2 = unsqueeze(b, -1) if b.ndim == 1 else b
    n, k = a2.shape[-2:]
    k2, m = b2.shape[-2:]
    batch_a, batch_b = a2.shape[:-2], b2.shape[:-2]
    if k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{int(np.prod(batch_b or (1,)))}, {k}] but got: "
                           f"[{int(np.prod(batch_b or (1,)))}, {k2}].")
    try:
        batch = tuple(np.broadcast_shapes(batch_a, batch_b))
    except ValueError:
        raise shape_error_broadcast(batch_a, batch_b) from None
    bsz = int(np.prod(batch)) if batch else 1
    if not batch_b and b.ndim == 2:
        # (..., n, k) @ (k, m): one mm over the folded rows, as torch folds it
        # (the row count spelled out: -1 cannot be inferred beside a size-0 k)
        out = mm(reshape(a2, int(np.prod(a2.shape[:-1])), k), b2)
    else:
        ea = reshape(expand(a2, *batch, n, k), bsz, n, k) if batch_a != batch or a2.ndim < 3 \
            else reshape(a2, bsz, n, k)
        eb = reshape(expand(b2, *batch, k, m), bsz, k, m) if batch_b != batch or b2.ndim < 3 \
            else reshape(b2, bsz, k, m)
        out = bmm(ea, eb)
    shape = batch + ((n,) if a.ndim > 1 else ()) + ((m,) if b.ndim > 1 else ())
    return _unsafe_view(out, shape)


def _unsafe_view(x, shape):
    return record(UNSAFE_VIEW, x._array().reshape(shape), (x,))


def outer(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {a.ndim}-D")
    return binary("mul", unsqueeze(a, 1), b)


# ---- differentiable derivatives (create_graph) ------------------------------------------------
@vjp_rule(MM)
def _mm_vjp(ctx, g):
    return [mm(g, _t(ctx.x(1))) if ctx.needs[0] else None,
            mm(_t(ctx.x(0)), g) if ctx.needs[1] else None]


@vjp_rule(MV)
def _mv_vjp(ctx, g):
    return [outer(g, ctx.x(1)) if ctx.needs[0] else None,
            mv(_t(ctx.x(0)), g) if ctx.needs[1] else None]


@vjp_rule(DOT)
def _dot_vjp(ctx, g):
    return [g * ctx.x(1) if ctx.needs[0] else None, g * ctx.x(0) if ctx.needs[1] else None]


@vjp_rule(BMM)
def _bmm_vjp(ctx, g):
    return [bmm(g, transpose(ctx.x(1), 1, 2)) if ctx.needs[0] else None,
            bmm(transpose(ctx.x(0), 1, 2), g) if ctx.needs[1] else None]


@vjp_rule(ADDMM)
def _addmm_vjp(ctx, g):
    beta, alpha = ctx.fat
    out = [unbroadcast(g if beta == 1.0 else g * beta, ctx.shapes[0]) if ctx.needs[0] else None]
    ga = mm(g, _t(ctx.x(2))) if ctx.needs[1] else None
    gb = mm(_t(ctx.x(1)), g) if ctx.needs[2] else None
    if alpha != 1.0:
        ga = None if ga is None else ga * alpha
        gb = None if gb is None else gb * alpha
    return out + [ga, gb]


@vjp_rule(MATMUL_SQUEEZE)
def _squeeze_vjp(ctx, g):
    return [reshape(g, ctx.shapes[0])]
