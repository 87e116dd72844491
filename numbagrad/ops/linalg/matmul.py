"""Matrix products: mm, mv, dot, bmm, addmm, and matmul composed from them as torch does."""

import numpy as np

from ...core import grad_mode
from ...core.tape import current_tape
from ...engine import gemm
from ...engine import record as record_module
from ...engine.record import note_view, push_node, record, record_array, shape_error_broadcast
from ...engine.registry import Sample, Unwritten, defop, vjp_rule
from ...tensor import Tensor, _make  # noqa: F401
from ..elementwise.logic import need_tensor
from ..elementwise.pointwise import binary, to_dtype
from ..shape.movement import (
    TRANSPOSE,
    UNSAFE_VIEW,
    T,
    _transposed,
    as_view,
    contiguous,
    expand,
    expanded_shape,
    reshape,
    squeeze,
    transpose,
    unsqueeze,
)
from ..shape.movement import t as _t
from ..vjp import unbroadcast, unbroadcast_array

# the package's functions (numbagrad star-imports them); each is a Tensor method too
__all__ = ["mm", "mv", "dot", "bmm", "addmm", "matmul", "outer"]

# The products compute in their dtype through gemm.product, eager and replay alike
# (replay_f32): the same routine on the same float32 data gives the same bits.
MM = defop("mm", "MmBackward0", 2, replay="mm_fw", replay_f32="mm_fw32", kernel="mm_bw",
           saves=("x0", "x1"), value=lambda xs, iat, fat: _product(*xs),
           samples=[Sample(((3, 4), (4, 2))), Sample(((1, 5), (5, 1))), Sample(((2, 0), (0, 3)))],
           torch="mm", blas_inner=0)
MV = defop("mv", "MvBackward0", 2, replay="mv_fw", replay_f32=True, kernel="mv_bw",
           saves=("x0", "x1"),
           samples=[Sample(((3, 4), (4,))), Sample(((1, 2), (2,)))], torch="mv", blas_inner=0)
DOT = defop("dot", "DotBackward0", 2, replay="dot_fw", replay_f32=True, kernel="dot_bw",
            saves=("x0", "x1"),
            samples=[Sample(((5,), (5,))), Sample(((1,), (1,)))], torch="dot", blas_inner=0)
BMM = defop("bmm", "BmmBackward0", 2, replay="bmm_fw", replay_f32=True, kernel="bmm_bw",
            saves=("x0", "x1"),
            samples=[Sample(((2, 3, 4), (2, 4, 5)))], torch="bmm", blas_inner=0)
ADDMM = defop("addmm", "AddmmBackward0", 3, replay="addmm_fw", replay_f32=True,
              kernel="addmm_bw", saves=("x1", "x2"),
              value=lambda xs, iat, fat: _addmm_value(*xs, fat[0], fat[1]),
              samples=[Sample(((3, 2), (3, 4), (4, 2))), Sample(((2,), (3, 4), (4, 2))),
                       Sample(((3, 2), (3, 4), (4, 2)), {"beta": 0.5, "alpha": 2.0},
                              "lib.addmm(x0, x1, x2, **kw)")], torch="addmm", blas_inner=1)
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
    gc = gxs[0]
    if gc is not None:
        gb = g if beta == 1.0 else g * g.dtype.type(beta)
        # F.linear's (n,) bias on (m, n) rows, the common case, is a column sum
        if gc.ndim == 1 and gb.ndim == 2 and gc.shape[0] == gb.shape[1]:
            if type(gc) is Unwritten:  # its first gradient: summed straight into it
                np.add.reduce(gb, 0, None, gc.view(np.ndarray))
            else:
                gc += gb.sum(axis=0)
        elif type(gc) is Unwritten:
            gc.view(np.ndarray)[...] = unbroadcast_array(gb, gc.shape)
        else:
            gc += unbroadcast_array(gb, gc.shape)
    if gxs[1] is not None:
        _add_product(gxs[1], g, b.T, alpha)
    if gxs[2] is not None:
        _add_product(gxs[2], a.T, g, alpha)


MM.numpy_bw, MV.numpy_bw = _mm_numpy, _mv_numpy
MM.numpy_bw_any_layout = (0, 1)  # both go through _add_product
ADDMM.numpy_bw = _addmm_numpy
ADDMM.numpy_bw_any_layout = (0, 1, 2)  # the two products and the bias (stored)


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


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _dims_of(x):
    return "x".join(str(s) for s in x.shape)


def _common(a, b, message=None):
    if a.dtype is not b.dtype:
        raise RuntimeError(message or f"expected m1 and m2 to have the same dtype, but got: "
                                      f"{a.dtype.c_name} != {b.dtype.c_name}")
    if not a.dtype.is_floating_point:
        return a, b  # integer products are computed by NumPy and never recorded
    return to_dtype(a, a.dtype), to_dtype(b, b.dtype)


def mm(input, mat2):
    """The matrix product of two 2-D tensors.

    Same as ``torch.mm``.
    """
    need_tensor(input, "mm", "input", 1)
    need_tensor(mat2, "mm", "mat2", 2)
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims_of(input)} and "
                           f"{_dims_of(mat2)})")
    input, mat2 = _common(input, mat2)
    return record(MM, _product(input._array(), mat2._array()), (input, mat2))


def mv(input, vec):
    """The product of a matrix and a vector.

    Same as ``torch.mv``.
    """
    need_tensor(input, "mv", "input", 1)
    need_tensor(vec, "mv", "vec", 2)
    if input.ndim != 2 or vec.ndim != 1 or input.shape[1] != vec.shape[0]:
        if input.ndim == 2 and vec.ndim == 1:
            raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), "
                               f"mat ({_dims_of(input)}), vec ({vec.shape[0]})")
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    # (torch's mv is addmv into a result of the vector's dtype)
    input, vec = _common(input, vec, f"addmv input tensors must have the same dtype, but got "
                         f"{vec.dtype.scalar_name}, {input.dtype.scalar_name}, and "
                         f"{vec.dtype.scalar_name}")
    return record(MV, _product(input._array(), vec._array()[:, None]).reshape(-1), (input, vec))


def dot(input, b):
    """The dot product of two 1-D tensors.

    Same as ``torch.dot``.

    Args:
        input: a 1-D tensor (the tensor itself, as a method).
        b: a 1-D tensor of the same length and dtype.

    Returns:
        A 0-d tensor, the sum of the elementwise products.
    """
    need_tensor(input, "dot", "input", 1)
    need_tensor(b, "dot", "tensor", 2)
    if input.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {b.ndim}D tensors")
    if input.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{b.shape[0]}] to have the same number of elements, but got "
                           f"{input.shape[0]} and {b.shape[0]} elements respectively")
    input, b = _common(input, b, f"dot : expected both vectors to have same dtype, but found "
                         f"{input.dtype.scalar_name} and {b.dtype.scalar_name}")
    return record(DOT, _product(input._array()[None, :], b._array()[:, None])[0, 0], (input, b))


def bmm(input, mat2):
    """The batched matrix product of two 3-D tensors: ``a[i] @ b[i]`` for each ``i``.

    Same as ``torch.bmm``.
    """
    need_tensor(input, "bmm", "input", 1)
    need_tensor(mat2, "bmm", "mat2", 2)
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: "
                           f"[{mat2.shape[0]}, {mat2.shape[1]}].")
    if input.dtype is not mat2.dtype and not (
            input.shape[0] * input.shape[1] * input.shape[2] * mat2.shape[2]):
        # torch's result takes batch2's dtype, and its kernel, which checks the dtypes, does
        # not run for an empty result or an empty sum (zeros)
        input = to_dtype(input, mat2.dtype)
    input, mat2 = _common(input, mat2, f"expected scalar type {input.dtype.scalar_name} but found "
                         f"{mat2.dtype.scalar_name}")
    x, w = input._array(), mat2._array()
    if x.dtype.kind != "f":
        return record(BMM, np.matmul(x, w), (input, mat2))
    value = np.empty((x.shape[0], x.shape[1], w.shape[2]), x.dtype)
    gemm.batched_product_into(value, x, w)
    return record(BMM, value, (input, mat2))


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    # torch's order: the dtypes (no promotion), the ranks, the inner sizes, then self
    # expanded to the product's shape (even with beta = 0, where its values are ignored)
    """``beta * c + alpha * (a @ b)`` for matrices ``a`` and ``b``.

    Same as ``torch.addmm``.
    """
    need_tensor(input, "addmm", "input", 1)
    need_tensor(mat1, "addmm", "mat1", 2)
    need_tensor(mat2, "addmm", "mat2", 3)
    for first, name in ((input, "self"), (mat1, "mat1")):
        if first.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{first.dtype.scalar_name} and {mat2.dtype.scalar_name}")
    for m, name in ((mat1, "mat1"), (mat2, "mat2")):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims_of(mat1)} and "
                           f"{_dims_of(mat2)})")
    expanded_shape(input, (mat1.shape[0], mat2.shape[1]))
    mat1, mat2 = _common(mat1, mat2)
    return record(ADDMM, _addmm_value(input._array(), mat1._array(), mat2._array(), beta, alpha),
                  (input, mat1, mat2), (), (float(beta), float(alpha)))


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
    try:
        xd, wd, bd = x._data, w._data, bias._data
    except AttributeError:  # an argument that is no Tensor: check_linear_arguments raises
        return None
    if type(xd) is not np.ndarray or type(wd) is not np.ndarray or \
            type(bd) is not np.ndarray or xd.ndim != 2 or wd.ndim != 2 or bd.ndim != 1:
        return None
    dt = xd.dtype
    if dt.kind != "f" or wd.dtype != dt or bd.dtype != dt or xd.shape[1] != wd.shape[1] or \
            bd.shape[0] != wd.shape[0]:
        return None
    value = _addmm_value(bd, xd, wd.T, 1.0, 1.0)
    if (not grad_mode.state.enabled or not (x._requires_grad or w._requires_grad or
                                            bias._requires_grad)) and \
            record_module.forward_hook is None:  # forward AD: tangents go through record
        return _make(value)
    out = _record_linear(value, x, w, bias)
    if out is not None:
        return out
    return record(ADDMM, value, (bias, x, weight_t(w, x, bias)), (), (1.0, 1.0))


def check_linear_arguments(input, weight, bias):  # noqa: A002 - torch's names
    """torch's TypeError for an argument of F.linear that is no Tensor (bias may be None)."""
    for pos, (name, x) in enumerate((("input", input), ("weight", weight), ("bias", bias)), 1):
        if x is not None or name != "bias":
            need_tensor(x, "linear", name, pos)


def _is_big(tape, t):
    """Whether ``t`` is (or will be: a source or bridge new to ``tape``, from ``tape.big``
    elements) a big node of ``tape``."""
    node = t._node if t._tape is tape else tape.sources.get(id(t))
    return t._data.size >= tape.big if node is None else tape.is_big(node)


def _big_operands(tape, x, w, bias, out_size):
    """F.linear's operands new to ``tape`` (its weight, bias and input, leaves or constants)
    become big nodes when its product (``out_size`` elements) is big: in the float64 arena
    they would be copied in, differentiated in float64 and rounded back for ``.grad``.
    Only F.linear's: a leaf met first by another big node stays in the arena, as the small
    ops a parameter often feeds next would otherwise all become big nodes too.
    compiler/eager_nodes.eager_big follows the same rule."""
    big = out_size >= tape.big or _is_big(tape, x)
    if big and w._tape is None and w._data.size > 1:
        tape.source(w, True)
    if big or _is_big(tape, w):
        for t in (bias, x if x.ndim == 2 else None):  # (the product's own operands)
            if t is not None and t._tape is None and t._data.size > 1:
                tape.source(t, True)


def _record_linear(value, x, w, bias):
    """linear()'s two nodes, t(w) and the addmm, pushed as record() would push them, in the
    common case of a training step: weight and bias leaves new to the tape of ``x`` (or of
    a new graph), nothing watching (no forward hook or anomaly mode, no backward holding the
    tape, no value changed in place). None otherwise, pushing nothing: record() takes it.
    Its sources are big nodes when the product is (``_big_operands``)."""
    if w._tape is not None or bias._tape is not None or w._base is not None or \
            bias._base is not None or x._base is not None or not w._requires_grad or \
            not grad_mode.state.enabled or record_module.forward_hook is not None or \
            record_module._anomaly.enabled:
        return None
    tape = x._tape
    if tape is None:
        tape = current_tape()
    sources = tape.sources
    if tape.sweeps or tape.dirty or tape.pinned or id(w) in sources or id(bias) in sources:
        return None
    wd = w._data
    try:
        _big_operands(tape, x, w, bias, value.size)
        nw = tape.source(w)
        wt = push_node(tape, T, wd.T, wd.size, wd.T.shape, (w,), (nw,), (0, 1, wd.shape[1]), ())
        note_view(wt, w, _transposed)
        tape.transposes[wt._node] = nw
        tape.linear_t[nw] = (wt._node, w._vc[0])
        nb = tape.source(bias)
        nx = x._node if x._tape is tape else tape.source(x)
        return push_node(tape, ADDMM, value, value.size, value.shape, (bias, x, wt),
                         (nb, nx, wt._node), (), (1.0, 1.0))
    except BufferError:  # a backward began holding the tape: record() goes to a new one
        tape.close()
        return None


def weight_t(w, x, bias=None):
    """``t(w)`` for F.linear, whose one matrix product (of ``x``, its left operand, plus
    ``bias``) is the only consumer of the result: noted in Tape.transposes, so that
    product's backward writes w's gradient in w's own layout (engine.py) instead of the t()
    node scattering it through a strided view. A leaf weight applied again on the same
    tape, unchanged since, takes the same t() node (an RNN cell's weights at every step):
    the node is internal, no hook can tell. Operands new to the tape are big nodes when the
    product is (``_big_operands``)."""
    if w._tape is None and w._requires_grad and grad_mode.state.enabled and \
            record_module.forward_hook is None and not record_module._anomaly.enabled:
        tape = current_tape()
        node = tape.sources.get(id(w))
        shared = None if node is None else tape.linear_t.get(node)
        if shared is not None and shared[1] == w._vc[0] and not tape.any_freed and \
                not tape.pinned:
            wt = _make(w._data.T, tape, shared[0])
            note_view(wt, w, _transposed)
            return wt
    if w.ndim == 2 and grad_mode.state.enabled and (w._requires_grad or x._requires_grad or
                                                    bias is not None and bias._requires_grad):
        _big_operands(current_tape(), x, w, bias,
                      x._data.size // max(x.shape[-1], 1) * w.shape[0])
    wt = _t(w)
    if wt._tape is not None and w.ndim == 2:
        tape = wt._tape
        src = tape.transposes[wt._node] = tape.arg_nodes(wt._node)[0]
        if w._tape is None:
            tape.linear_t[src] = (wt._node, w._vc[0])
    return wt


def matmul(input, other):
    """torch.matmul's dispatch, recording the same primitive ops torch does.

    Examples:
        >>> import numbagrad as torch
        >>> a = torch.ones(2, 3, requires_grad=True)
        >>> torch.matmul(a, torch.ones(3, 4)).shape
        torch.Size([2, 4])
        >>> torch.matmul(a, torch.ones(3)).grad_fn
        <MvBackward0 object at 0x...>
    """
    if isinstance(other, Tensor) and isinstance(input, Tensor):
        da, db = input._data, other._data
        if da.ndim == 2 and db.ndim == 2:  # the common case first
            dt = da.dtype
            if dt is db.dtype and (dt is _F32 or dt is _F64) and da.shape[1] == db.shape[0]:
                return record_array(MM, gemm.matmul(da, db), input, other)  # mm, in fewer steps
            return mm(input, other)
    need_tensor(input, "matmul", "input", 1)
    need_tensor(other, "matmul", "other", 2)
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{input.ndim}D and {other.ndim}D")
    if input.ndim == 1 and other.ndim == 1:
        return dot(input, other)
    if input.ndim == 2 and other.ndim == 1:
        return mv(input, other)
    if input.ndim == 1 and other.ndim == 2:
        prod = mm(unsqueeze(input, 0), other)
        return record(MATMUL_SQUEEZE, prod._array().reshape(other.shape[1:]), (prod,))
    if input.ndim == 2 and other.ndim == 2:
        return mm(input, other)
    if _should_fold(input, other):
        return _folded(input, other)
    if input.ndim == 3 and other.ndim == 3 and input.shape[0] != other.shape[0]:
        # torch folds a batch of one that requires grad rather than expand it for bmm
        if input.shape[0] == 1 and input.requires_grad:
            return matmul(squeeze(input, 0), other)
        if other.shape[0] == 1 and other.requires_grad:
            return matmul(input, squeeze(other, 0))
    # batched: broadcast the batch dims, fold them, bmm, unfold (UnsafeViewBackward0)
    n, k = input.shape[-2:] if input.ndim > 1 else (1, input.shape[0])
    k2, m = other.shape[-2:] if other.ndim > 1 else (other.shape[0], 1)
    batch_a, batch_b = input.shape[:-2], other.shape[:-2]
    try:
        batch = tuple(np.broadcast_shapes(batch_a, batch_b))
    except ValueError:
        raise shape_error_broadcast(batch_a, batch_b) from None
    bsz = int(np.prod(batch)) if batch else 1
    if k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{bsz}, {k}] but got: [{bsz}, {k2}].")
    ea = reshape(input if batch_a == batch and input.ndim >= 3 else expand(input, *batch, n, k),
                 bsz, n, k)
    if other.ndim == 1:  # (torch: the vector expanded and folded, a column for bmm, squeezed back)
        out = squeeze(bmm(ea, unsqueeze(reshape(expand(other, *batch, k), bsz, k), 2)), -1)
    else:
        out = bmm(ea, reshape(other if batch_b == batch and other.ndim >= 3 else
                              expand(other, *batch, k, m), bsz, k, m))
    shape = batch + ((n,) if input.ndim > 1 else ()) + ((m,) if other.ndim > 1 else ())
    return _unsafe_view(out, shape)


def _should_fold(a, b):
    """torch's choice (should_fold) of one mm or mv over the larger operand's rows, folded,
    instead of bmm: it depends on requires_grad and on whether the fold is a view; the
    dtypes (and so the errors) of an empty product differ between the two."""
    flip = b.ndim > a.ndim  # the larger one is then folded as b.mT
    big, small = (b, a) if flip else (a, b)
    if big.ndim < 3 or small.ndim > 2:
        return False
    if small.requires_grad:  # (b, n, k) @ (k, m): a (k, m) gradient, not (b, k, m) summed
        return True
    if a.ndim == 2:
        return False
    data = big._array()
    if not data.size:
        return True
    shape, strides = list(data.shape), [st // data.itemsize for st in data.strides]
    if flip:
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _folded(a, b):
    """``a @ b`` as one mm (or mv) over the rows of the larger operand's batch, folded (the
    row count spelled out: -1 cannot be inferred beside a size-0 last dim)."""
    flip = b.ndim > a.ndim  # then b.mT @ a.T, transposed back (and made contiguous)
    big = transpose(b, -1, -2) if flip else a
    small = (_t(a) if a.ndim == 2 else a) if flip else b
    rows = reshape(big, int(np.prod(big.shape[:-1])), big.shape[-1])
    if small.ndim == 1:
        return _unsafe_view(mv(rows, small), big.shape[:-1])
    out = _unsafe_view(mm(rows, small), big.shape[:-1] + small.shape[1:])
    if not flip:
        return out
    if np.swapaxes(out._array(), -1, -2).flags.c_contiguous:
        # torch returns the transpose itself, a view of a temporary: a copy here, so that
        # in-place ops on the product stay legal (numbagrad has none on views needing grad)
        return as_view(TRANSPOSE, out, _swap_last, copy=True)
    return contiguous(transpose(out, -1, -2))


def _swap_last(a):
    return np.swapaxes(a, -1, -2)


def _unsafe_view(x, shape):
    return record(UNSAFE_VIEW, x._array().reshape(shape), (x,))


def outer(input, vec2):
    """The outer product of two 1-D tensors, a matrix.

    Same as ``torch.outer``.
    """
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D")
    return binary("mul", unsqueeze(input, 1), vec2)


def _addmm(self, a, b, *, beta=1, alpha=1):
    """``beta * self + alpha * (a @ b)`` for matrices ``a`` and ``b``.

    Same as ``torch.Tensor.addmm``.
    """
    return addmm(self, a, b, beta=beta, alpha=alpha)


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


# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py); addmm's
# method form names its first operand self
TENSOR_METHODS = {**{name: globals()[name] for name in __all__}, "addmm": _addmm}

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"addmm": "one", "bmm": "one", "dot": "one", "matmul": "one", "mm": "one", "mv": "one",
             "outer": "one"}
