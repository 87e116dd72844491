"""The shape and indexing API against torch: values, dtypes, grad_fn names, gradients (float64)
and errors of stacking, splits, flips, rolls, triangles, diagonals, views, scatters, takes."""

import numpy as np
import pytest

import numbagrad as ng
from tests.torch_oracle import rounded, same_as_torch

torch = pytest.importorskip("torch")

A34 = np.arange(12.0).reshape(3, 4) / 7 - 0.6
A234 = np.arange(24.0).reshape(2, 3, 4) / 11 - 1.0


def _with_grads(fn, *arrays):
    """fn(lib, *inputs) on float64 inputs requiring grad: the output(s), grad_fn names and
    the gradients of sum(out * w) for a fixed w."""
    def run(lib):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *xs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        names = [o.grad_fn.name() if o.grad_fn is not None else None for o in outs]
        for o in outs:  # the gradients of sum(o * w) over the outputs, accumulated
            if o.requires_grad:
                w = lib.tensor(np.cos(np.arange(o.numel())).reshape(tuple(o.shape)))
                o.backward(w, retain_graph=True)
        return outs, names, [x.grad for x in xs]
    return same_as_torch(run)


# ---- values, names, gradients ----------------------------------------------------------------
GRAD_CASES = {
    "flip": (lambda lib, x: x.flip(0, 1), A34),
    "flip_fn": (lambda lib, x: lib.flip(x, dims=(-1,)), A234),
    "fliplr": (lambda lib, x: lib.fliplr(x), A34),
    "flipud": (lambda lib, x: lib.flipud(x), A234),
    "roll_flat": (lambda lib, x: lib.roll(x, 5), A34),
    "roll_dims": (lambda lib, x: x.roll((1, -1), (0, 2)), A234),
    "rot90": (lambda lib, x: lib.rot90(x, 1, (1, 2)), A234),
    "rot90_k": (lambda lib, x: lib.rot90(x, -1), A34),
    "tril": (lambda lib, x: x.tril(), A34),
    "triu_batch": (lambda lib, x: lib.triu(x, -1), A234),
    "diag_vec": (lambda lib, x: lib.diag(x[0], -2), A34),
    "diag_mat": (lambda lib, x: x.diag(1), A34),
    "diag_embed": (lambda lib, x: lib.diag_embed(x, 1, 0, 2), A34),
    "diagflat": (lambda lib, x: lib.diagflat(x, -1), A34),
    "diagonal": (lambda lib, x: lib.diagonal(x, offset=-1, dim1=2, dim2=1), A234),
    "diagonal_method": (lambda lib, x: x.diagonal(2), A34),
    "select": (lambda lib, x: lib.select(x, 1, -1), A234),
    "unfold": (lambda lib, x: x.unfold(1, 2, 1), A34),
    "unfold_step": (lambda lib, x: x.unfold(-1, 2, 2), A234),
    "swapaxes": (lambda lib, x: lib.swapaxes(x, 0, 2), A234),
    "swapdims": (lambda lib, x: x.swapdims(0, 1), A34),
    "movedim": (lambda lib, x: lib.movedim(x, (0, 1), (2, 0)), A234),
    "moveaxis": (lambda lib, x: x.moveaxis(-1, 0), A234),
    "take": (lambda lib, x: lib.take(x, lib.tensor([[0, 11], [-1, 0]])), A34),
    "masked_select": (lambda lib, x: x.masked_select(x > 0), A34),
    "masked_select_bcast": (lambda lib, x: lib.masked_select(x, lib.tensor([[True], [False],
                                                                            [True]])), A34),
    "take_along_dim": (lambda lib, x: lib.take_along_dim(x, lib.tensor([[0, 2, 1, 1]]), 0), A34),
    "take_along_flat": (lambda lib, x: x.take_along_dim(lib.tensor([3, 3, 0])), A34),
    "take_along_bcast": (lambda lib, x: lib.take_along_dim(x, lib.tensor([[[1], [0]]]), 2),
                         A234[:, :2]),
    "tile": (lambda lib, x: lib.tile(x, (2,)), A34),
    "tile_more": (lambda lib, x: x.tile((2, 1, 2)), A34),
    "tile_varargs": (lambda lib, x: x.tile(2, 2), A34),
    "repeat_interleave": (lambda lib, x: lib.repeat_interleave(x, 2), A34),
    "repeat_interleave_dim": (lambda lib, x: x.repeat_interleave(3, dim=1), A34),
    "repeat_interleave_tensor": (lambda lib, x: lib.repeat_interleave(
        x, lib.tensor([1, 0, 2]), dim=0), A34),
    "hstack": (lambda lib, x, y: lib.hstack([x, y]), A34, A34[:, :2]),
    "vstack": (lambda lib, x, y: lib.vstack((x, y)), A34[0], A34[1]),
    "row_stack": (lambda lib, x, y: lib.row_stack([x, y]), A34, A34[:1]),
    "dstack": (lambda lib, x, y: lib.dstack([x, y]), A34, A34),
    "column_stack": (lambda lib, x, y: lib.column_stack([x, y]), A34[0], A34.T),
    "tensor_split": (lambda lib, x: lib.tensor_split(x, 3, dim=1), A34),
    "tensor_split_idx": (lambda lib, x: x.tensor_split([1, -1, 9]), A34),
    "tensor_split_tensor": (lambda lib, x: lib.tensor_split(x, lib.tensor([2]), 1), A34),
    "hsplit": (lambda lib, x: lib.hsplit(x, 2), A34),
    "vsplit": (lambda lib, x: x.vsplit([1]), A34),
    "dsplit": (lambda lib, x: lib.dsplit(x, 2), A234),
    "broadcast_tensors": (lambda lib, x, y: lib.broadcast_tensors(x, y), A34, A34[:1].T),
    "atleast_3d": (lambda lib, x, y: lib.atleast_3d(x, y), A34[0, 0], A34[0]),
    "atleast_2d": (lambda lib, x: lib.atleast_2d([x, x[0]]), A34),
    "atleast_1d": (lambda lib, x: lib.atleast_1d(x[0, 0]), A34),
    "clone": (lambda lib, x: lib.clone(x), A34),
    "sum_to_size": (lambda lib, x: x.sum_to_size(4), A34),
    "sum_to_size_keep": (lambda lib, x: x.sum_to_size((3, 1)), A34),
    "sum_to_size_kw": (lambda lib, x: x.sum_to_size(size=(1, 4)), A34),
    "scatter": (lambda lib, x, s: x.scatter(0, lib.tensor([[2, 0, 1, 0]]), s), A34, A34[:1]),
    "scatter_value": (lambda lib, x: lib.scatter(x, 1, lib.tensor([[3], [0], [1]]), 2.5), A34),
    "scatter_add": (lambda lib, x, s: lib.scatter_add(x, 1, lib.tensor([[0, 0], [3, 3], [1, 2]]),
                                                      s), A34, A34[:, :2]),
    "scatter_reduce_sum": (lambda lib, x, s: x.scatter_reduce(
        0, lib.tensor([[0, 0, 2, 2]]), s, "sum", include_self=False), A34, A34[1:2]),
    "scatter_reduce_mean": (lambda lib, x, s: lib.scatter_reduce(
        x, 0, lib.tensor([[0, 0, 2, 2], [0, 1, 2, 2]]), s, "mean"), A34, A34[1:]),
    "scatter_reduce_amax": (lambda lib, x, s: x.scatter_reduce(
        1, lib.tensor([[0, 0], [3, 3], [1, 2]]), s, "amax"), A34, A34[:, 2:] * 0 + 0.2),
    "scatter_reduce_amin": (lambda lib, x, s: lib.scatter_reduce(
        x, 1, lib.tensor([[0, 0], [3, 3], [1, 2]]), s, "amin", include_self=False), A34,
                            A34[:, :2] * -1),
    "index_add": (lambda lib, x, s: x.index_add(0, lib.tensor([2, 2]), s, alpha=0.5),
                  A34, A34[:2]),
    "index_copy": (lambda lib, x, s: lib.index_copy(x, 1, lib.tensor([3, 0]), s), A34,
                   A34[:, :2]),
    "index_fill": (lambda lib, x: x.index_fill(1, lib.tensor([-1, 0]), -2.0), A34),
    "index_fill_tensor": (lambda lib, x, v: x.index_fill(1, lib.tensor([0, 0, 2]), v), A34,
                          A34[0, 0]),
    "masked_scatter": (lambda lib, x, s: x.masked_scatter(x < 0, s), A34, A234),
    "put": (lambda lib, x, s: x.put(lib.tensor([1, -1, 4]), s), A34, A34[0, :3]),
    "put_accumulate": (lambda lib, x, s: lib.Tensor.put(x, lib.tensor([1, 1, 4]), s,
                                                        accumulate=True), A34, A34[0, :3]),
    "index_put": (lambda lib, x, v: lib.index_put(x, (lib.tensor([0, 2]),), v), A34, A34[0]),
    "index_put_acc": (lambda lib, x, v: x.index_put((lib.tensor([0, 0]), lib.tensor([1, 1])), v,
                                                    accumulate=True), A34, A34[0, :1]),
    "index_put_mask": (lambda lib, x, v: x.index_put((x > 0,), v), A34, A34[0, 0]),
    "index_put_": (lambda lib, x, v: (x * 1).index_put_((lib.tensor([1]),), v), A34, A34[0]),
    "select_scatter": (lambda lib, x, v: lib.select_scatter(x, v, 0, -1), A34, A34[0]),
    "slice_scatter": (lambda lib, x, v: x.slice_scatter(v, 1, 1, None, 2), A34, A34[:, :2]),
    "diagonal_scatter": (lambda lib, x, v: lib.diagonal_scatter(x, v, -1), A34, A34[0, :2]),
    "narrow_copy": (lambda lib, x: lib.narrow_copy(x, 1, 1, 2), A34),
    "block_diag": (lambda lib, x, y: lib.block_diag(x, y[0], y[1, 1]), A34, A34),
    "ravel": (lambda lib, x: x.t().ravel(), A34),
    "adjoint": (lambda lib, x: lib.adjoint(x), A34),
    "cartesian_prod": (lambda lib, x, y: lib.cartesian_prod(x[0], y[1, :2], x[2, :1]), A34, A34),
    "combinations": (lambda lib, x: lib.combinations(x[0], 3, with_replacement=True), A34),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_values_names_and_gradients(name):
    fn, *arrays = GRAD_CASES[name]
    _with_grads(fn, *arrays)


INT_CASES = {
    "flip_int": lambda lib: lib.arange(6).reshape(2, 3).flip(1),
    "tril_int": lambda lib: lib.ones(2, 3, 3, dtype=lib.int32).tril(-1),
    "diag_int": lambda lib: lib.diag(lib.arange(3), 1),
    "nonzero": lambda lib: lib.nonzero(lib.tensor([[0.0, 1.5], [2.0, 0.0]])),
    "nonzero_tuple": lambda lib: lib.tensor([[0, 1], [2, 0]]).nonzero(as_tuple=True),
    "argwhere": lambda lib: lib.argwhere(lib.tensor([True, False, True])),
    "repeat_counts": lambda lib: lib.repeat_interleave(lib.tensor([2, 0, 1])),
    "broadcast_shapes": lambda lib: list(lib.broadcast_shapes((3, 1), (4,), 1)),
    "scatter_int": lambda lib: lib.zeros(2, 3, dtype=lib.int64).scatter_add(
        1, lib.tensor([[0, 0, 2]]), lib.tensor([[1, 2, 3]])),
    "scatter_reduce_amax": lambda lib: lib.zeros(4).scatter_reduce(
        0, lib.tensor([0, 0, 3]), lib.tensor([1.0, 5.0, -2.0]), "max", include_self=False),
    "scatter_reduce_prod": lambda lib: lib.full((3,), 2.0).scatter_reduce(
        0, lib.tensor([0, 0, 2]), lib.tensor([3.0, 4.0, 5.0]), "prod"),
    "scatter_reduce_mean_int": lambda lib: lib.ones(3, dtype=lib.int64).scatter_reduce(
        0, lib.tensor([0, 0]), lib.tensor([2, 3]), "mean"),
    "unravel_index": lambda lib: lib.unravel_index(lib.tensor([[5, -1], [13, 0]]), (3, 4)),
    "block_diag_int": lambda lib: lib.block_diag(lib.ones(2, dtype=lib.int64), lib.ones(1, 1)),
    "block_diag_none": lambda lib: lib.block_diag(),
    "detach": lambda lib: lib.detach(lib.ones(2, requires_grad=True) * 2),
}


@pytest.mark.parametrize("name", list(INT_CASES))
def test_values_without_gradients(name):
    same_as_torch(INT_CASES[name])


# ---- errors ----------------------------------------------------------------------------------
def _x(lib):
    return lib.tensor(A34, dtype=lib.float32)


ERRORS = {
    "flip_dim": lambda lib: _x(lib).flip(5),
    "flip_repeat": lambda lib: _x(lib).flip(0, -2),
    "roll_align": lambda lib: lib.roll(_x(lib), (1, 2), (0,)),
    "roll_empty": lambda lib: _x(lib).roll([], []),
    "rot90_same": lambda lib: lib.rot90(_x(lib), 1, (0, 0)),
    "rot90_1d": lambda lib: lib.rot90(lib.ones(3)),
    "tril_1d": lambda lib: lib.ones(3).tril(),
    "diag_3d": lambda lib: lib.ones(2, 2, 2).diag(),
    "diagonal_same": lambda lib: _x(lib).diagonal(0, 1, -1),
    "diag_embed_same": lambda lib: lib.diag_embed(lib.ones(3), 0, 0, -2),
    "select_range": lambda lib: _x(lib).select(0, 3),
    "select_dim": lambda lib: lib.select(_x(lib), 2, 0),
    "unfold_size": lambda lib: _x(lib).unfold(0, 5, 1),
    "unfold_step": lambda lib: _x(lib).unfold(0, 2, 0),
    "take_range": lambda lib: _x(lib).take(lib.tensor([12])),
    "take_dtype": lambda lib: _x(lib).take(lib.tensor([1], dtype=lib.int32)),
    "masked_select_dtype": lambda lib: _x(lib).masked_select(lib.ones(3, 4)),
    "masked_select_shape": lambda lib: _x(lib).masked_select(lib.ones(5) > 0),
    "movedim_repeat": lambda lib: lib.movedim(_x(lib), (0, 0), (1, 0)),
    "movedim_count": lambda lib: lib.movedim(_x(lib), (0, 1), (1,)),
    "hsplit_divisible": lambda lib: lib.hsplit(_x(lib), 3),
    "vsplit_1d": lambda lib: lib.vsplit(lib.ones(4), 2),
    "tensor_split_zero": lambda lib: lib.tensor_split(_x(lib), 0),
    "repeat_negative": lambda lib: lib.repeat_interleave(_x(lib), -1),
    "repeat_size": lambda lib: _x(lib).repeat_interleave(lib.tensor([1, 2]), dim=0),
    "sum_to_size": lambda lib: _x(lib).sum_to_size(5),
    "broadcast_tensors": lambda lib: lib.broadcast_tensors(lib.ones(3), lib.ones(4)),
    "take_along_ndim": lambda lib: lib.take_along_dim(_x(lib), lib.tensor([0]), 0),
    "scatter_index_dtype": lambda lib: _x(lib).scatter(0, lib.tensor([[0.0]]), 1.0),
    "scatter_src_dtype": lambda lib: _x(lib).scatter(0, lib.tensor([[0]]), lib.ones(1, 1,
                                                                                  dtype=lib.int64)),
    "scatter_range": lambda lib: _x(lib).scatter(0, lib.tensor([[3]]), 1.0),
    "scatter_ndim": lambda lib: _x(lib).scatter(0, lib.tensor([0]), 1.0),
    "scatter_size": lambda lib: _x(lib).scatter_add(0, lib.tensor([[0, 0, 0, 0, 0]]),
                                                    lib.ones(1, 5)),
    "scatter_src_small": lambda lib: _x(lib).scatter(0, lib.tensor([[0, 1, 2, 0]]),
                                                     lib.ones(1, 2)),
    "scatter_reduce_name": lambda lib: _x(lib).scatter_reduce(0, lib.tensor([[0]]),
                                                              lib.ones(1, 1), "maximum"),
    "index_add_range": lambda lib: _x(lib).index_add(0, lib.tensor([-1]), lib.ones(1, 4)),
    "index_add_count": lambda lib: _x(lib).index_add(0, lib.tensor([0]), lib.ones(2, 4)),
    "index_add_shape": lambda lib: _x(lib).index_add(0, lib.tensor([0]), lib.ones(1, 5)),
    "index_add_dtype": lambda lib: _x(lib).index_add(0, lib.tensor([0.0]), lib.ones(1, 4)),
    "index_copy_range": lambda lib: _x(lib).index_copy(0, lib.tensor([5]), lib.ones(1, 4)),
    "index_copy_count": lambda lib: _x(lib).index_copy(0, lib.tensor([0]), lib.ones(2, 4)),
    "index_copy_dtype": lambda lib: _x(lib).index_copy(0, lib.tensor([0], dtype=lib.int32),
                                                       lib.ones(1, 4)),
    "index_fill_range": lambda lib: _x(lib).index_fill(0, lib.tensor([5]), 1.0),
    "index_fill_dtype": lambda lib: _x(lib).index_fill(0, lib.tensor([0], dtype=lib.int32), 1.0),
    "index_fill_value_dims": lambda lib: lib.ones(3).index_fill(0, lib.tensor([0]), lib.ones(2)),
    "masked_scatter_few": lambda lib: _x(lib).masked_scatter(lib.ones(3, 4) > 0, lib.ones(5)),
    "masked_scatter_mask": lambda lib: _x(lib).masked_scatter(lib.ones(3, 4), lib.ones(15)),
    "put_range": lambda lib: _x(lib).put(lib.tensor([0, 13]), lib.ones(2)),
    "put_count": lambda lib: _x(lib).put(lib.tensor([0, 1]), lib.ones(3)),
    "put_dtype": lambda lib: _x(lib).put(lib.tensor([0], dtype=lib.int32), lib.ones(1)),
    "select_scatter_size": lambda lib: lib.select_scatter(lib.ones(3, 4), lib.ones(3), 0, 1),
    "diagonal_scatter_size": lambda lib: lib.diagonal_scatter(lib.ones(3, 4), lib.ones(2), 1),
    "index_put_dtype": lambda lib: lib.index_put(lib.ones(3), (lib.tensor([0]),),
                                                 lib.ones(1, dtype=lib.float64)),
    "index_put_shape": lambda lib: lib.index_put(lib.ones(3), (lib.tensor([0, 1]),),
                                                 lib.ones(3)),
    "narrow_copy_range": lambda lib: lib.narrow_copy(lib.ones(3), 0, 2, 2),
    "combinations_1d": lambda lib: lib.combinations(lib.ones(2, 2)),
    "adjoint_1d": lambda lib: lib.adjoint(lib.ones(2)),
    "unravel_dtype": lambda lib: lib.unravel_index(lib.tensor([1.0]), (3,)),
    "block_diag_3d": lambda lib: lib.block_diag(lib.ones(2, 2, 2)),
    "squeeze_leaf": lambda lib: lib.ones(1, 2, requires_grad=True).squeeze_(),
    "t_3d": lambda lib: lib.ones(1, 2, 3).t_(),
    "fill_diagonal_1d": lambda lib: lib.ones(3).fill_diagonal_(0.0),
    "fill_diagonal_shape": lambda lib: lib.ones(2, 2, 3).fill_diagonal_(0.0),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    out = same_as_torch(ERRORS[name])
    assert isinstance(out, tuple) and isinstance(out[0], str), "the case raised nothing"


# ---- views: writes through them, and in-place view ops ---------------------------------------
def test_views_share_memory_as_torch():
    def fn(lib):
        x = lib.arange(24.0).reshape(2, 3, 4)
        x.diagonal(1, 1, 2).mul_(10)
        x.select(2, 0).fill_(-1)
        lib.movedim(x, 0, -1)[0, 0].add_(100)
        x.swapaxes(0, 1)[1].sub_(0.5)
        x.unfold(2, 2, 2)[..., 1].neg_()
        return x
    same_as_torch(fn)


def test_view_of_the_new_views_as_torch():
    def fn(lib):
        x = lib.arange(24.0).reshape(2, 3, 4)
        out = [x.diagonal(0, 1, 2).view(-1), x.select(1, 1).view(2, 2, 2),
               x.movedim(0, 1).reshape(-1), x.swapaxes(1, 2).is_contiguous()]
        for bad in (lambda: x.unfold(2, 2, 1).view(-1), lambda: x.movedim(0, 2).view(-1)):
            try:
                bad()
            except RuntimeError as e:
                out.append(str(e))
        return out
    same_as_torch(fn)


def test_a_view_after_its_base_changed_in_place():
    def fn(lib):
        x = lib.ones(3, 3, requires_grad=True) * 1
        d = x.diagonal()
        x.mul_(2)
        return d.grad_fn.name(), rounded(d * 1)
    same_as_torch(fn)


def test_in_place_view_ops_change_the_tensor_itself():
    def fn(lib):
        x = lib.tensor(A234, requires_grad=True)
        y = x * 1
        y.transpose_(0, 2)
        y.unsqueeze_(1)
        y.squeeze_(1)
        z = y[0]
        z.t_()
        w = (z * 2).sum() + (y * y).sum()
        w.backward()
        return (y.shape, y.grad_fn.name(), z.grad_fn.name(), rounded(x.grad),
                y.is_contiguous())
    same_as_torch(fn)


def test_in_place_view_op_keeps_saved_values_and_earlier_views():
    """torch bumps the version (a saver of y then refuses to backward); numbagrad's saver
    keeps y's array, whose values the view op did not change: the gradient is torch's for
    the same computation with the out-of-place t(), and a view taken before keeps its map."""
    def fn(lib, inplace):
        x = lib.tensor(A34, requires_grad=True)
        y = x * 1
        z = y * y
        v = y[1]
        if inplace:
            y.t_()
            w = y
        else:
            w = y.t()
        (z.sum() + (v * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum() + w[0].sum()).backward()
        return rounded(x.grad), w.grad_fn.name(), list(w.shape)
    ours, theirs = fn(ng, True), fn(torch, False)
    assert ours[0] == theirs[0] and ours[2] == theirs[2] and ours[1] == "TBackward1"


def test_in_place_forms():
    def fn(lib):
        x = lib.tensor(A34, requires_grad=True)
        y = x * 1
        y.scatter_(0, lib.tensor([[1, 2]]), 3.0)
        y.scatter_add_(1, lib.tensor([[0], [0], [3]]), x[:, :1])
        y.index_add_(0, lib.tensor([0]), x[1:2], alpha=2)
        y.index_copy_(1, lib.tensor([2]), x[:, :1])
        y.index_fill_(0, lib.tensor([2]), -1.0)
        y.masked_scatter_(y > 1, x)
        y.put_(lib.tensor([5]), x[0, :1], accumulate=True)
        y.tril_(1)
        y.triu_(-1)
        y.fill_diagonal_(0.25)
        # (last: torch's node saves self and the result, which a later in-place op changes)
        y.scatter_reduce_(0, lib.tensor([[0, 0, 0, 0]]), x[2:], "mean")
        names = y.grad_fn.name()
        y.sum().backward()
        return rounded(y), names, rounded(x.grad)
    same_as_torch(fn)


def test_gradcheck_and_gradgradcheck_of_the_new_records():
    x = ng.tensor(A34, requires_grad=True)
    s = ng.tensor(A34[:2] + 0.1, requires_grad=True)
    idx = ng.tensor([[2, 0, 1, 0], [0, 2, 2, 1]])

    def f(a, b):
        parts = [a.flip(1), a.roll(1, 0), ng.rot90(a), a.tril(), a.diagonal(1),
                 ng.diag_embed(a[0]), a.unfold(1, 2, 1), a.take(ng.tensor([3, 3])),
                 a.masked_select(a > 0), a.scatter(0, idx, b), a.scatter_add(0, idx, b),
                 a.index_add(0, ng.tensor([1, 1]), b), a.index_fill(1, ng.tensor([0]), 1.0),
                 a.scatter_reduce(0, idx, b, "mean")]
        return ng.cat([p.reshape(-1) for p in parts])
    assert ng.autograd.gradcheck(f, (x, s))
    assert ng.autograd.gradgradcheck(f, (x, s))
