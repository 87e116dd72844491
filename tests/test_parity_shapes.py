"""Shape ops and products held to torch 2.13: dim and size argument checks, empty and
mixed-dtype products (torch's dispatch decides which product runs, and so the dtype or the
error), addmm's and F.linear's bias, and the layout of results (whether view() works)."""


import numpy as np
import pytest
import torch_oracle as oracle
from torch_oracle import same_type_as_torch

import numbagrad as ng
import numbagrad.nn.functional as ng_functional
from numbagrad.core import tape

torch = pytest.importorskip("torch")
F = {ng: ng_functional, torch: torch.nn.functional}


def same_as_torch(fn):
    return oracle.same_as_torch(fn, decimals=5)


def _run(lib, fn, arrays, requires_grad):
    """fn's value (shape, dtype, requires_grad, values) and the gradients of its inputs for a
    fixed cotangent, or torch's (type, message)."""
    xs = [lib.tensor(a, requires_grad=rg) for a, rg in zip(arrays, requires_grad)]
    try:
        y = fn(lib, *xs)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    out = [list(y.shape), str(y.dtype).replace("torch.", ""), y.requires_grad,
           np.asarray(y.detach().numpy(), np.float64)]
    if y.requires_grad:
        cot = np.cos(np.arange(y.numel())).reshape(tuple(y.shape))
        (y * lib.tensor(cot.astype(y.detach().numpy().dtype))).sum().backward()
        out.append([None if x.grad is None else
                    (str(x.grad.dtype).replace("torch.", ""), x.grad.numpy().astype(np.float64))
                    for x in xs])
    return out


def _equal(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-5, atol=1e-6,
                                                          equal_nan=True)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_equal(u, v) for u, v in zip(a, b))
    return a == b


def grads_as_torch(fn, shapes, dtypes=None, requires_grad=None):
    """fn(lib, *tensors) on seeded values of these shapes and dtypes: the same value, dtype,
    requires_grad and gradients as torch's, or the same error."""
    rng = np.random.default_rng(0)
    dtypes = dtypes or ["float64"] * len(shapes)
    arrays = [rng.uniform(-1.0, 1.0, s).astype(d) for s, d in zip(shapes, dtypes)]
    requires_grad = requires_grad or [True] * len(shapes)
    ours, theirs = _run(ng, fn, arrays, requires_grad), _run(torch, fn, arrays, requires_grad)
    assert _equal(ours, theirs), f"numbagrad: {ours}\ntorch:     {theirs}"
    return ours


@pytest.fixture(params=["small", "big"])
def nodes(request, monkeypatch):
    """Both derivative paths: every node a big node (NumPy derivatives) or the kernels'."""
    if request.param == "big":
        monkeypatch.setattr(tape, "BIG", 0)
    return request.param


# ---- dim checks -----------------------------------------------------------------------------
@pytest.mark.parametrize("shape, dims", [
    ((1, 1), (1, 1)), ((1, 1), (-1, 1)), ((), (0, -1)), ((3,), (0, 0)), ((2, 1, 3), (1, -2)),
    ((2, 3), (0, 0, 5)),  # the repeat is found before the dim out of range, as in torch
    ((2, 3), (0, 5, 0)), ((2, 1), [1, 1])])
def test_squeeze_of_a_repeated_dim_raises(shape, dims):
    assert same_as_torch(lambda lib: lib.ones(shape).squeeze(dims))[0] in ("RuntimeError",
                                                                           "IndexError")


@pytest.mark.parametrize("start, end", [(1, 0), (0, 1), (-2, -1), (0, -2), (2, 2)])
def test_flatten_of_a_0d_tensor_checks_its_dims(start, end):
    assert same_as_torch(lambda lib: lib.tensor(2.0).flatten(start, end))[0] == "IndexError"
    for start, end in [(0, 0), (-1, 0), (0, -1), (-1, -1)]:  # the dims a 0-d tensor has
        grads_as_torch(lambda lib, x: x.flatten(start, end), [()])


def test_mT_of_a_0d_tensor_is_the_tensor_itself_with_torch_warning():
    x = ng.tensor(1.5, requires_grad=True)
    with pytest.warns(UserWarning, match="Tensor.mT is deprecated on 0-D tensors"):
        assert x.mT is x
    same_as_torch(lambda lib: lib.tensor(1.5).mT)
    same_as_torch(lambda lib: lib.ones(3).mT)  # 1-d: torch's RuntimeError, as before


def test_dim_checks_as_before():
    for call in [lambda lib: lib.tensor(1.0).squeeze(1),
                 lambda lib: lib.tensor(1.0).transpose(-2, 2),
                 lambda lib: lib.tensor(1.0).movedim(0, 0),
                 lambda lib: lib.ones(2, 3).movedim(2, 0),
                 lambda lib: lib.ones(2, 3).flatten(1, 0)]:
        same_as_torch(call)


# ---- repeat / expand / split / chunk arguments ----------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(2).repeat(),
    lambda lib: lib.ones(()).repeat(),
    lambda lib: lib.ones(2).expand(),
    lambda lib: lib.ones(()).expand(),
    lambda lib: lib.ones(2).expand(2, size=(2,)),
])
def test_repeat_and_expand_without_sizes_raise_type_error(call):
    assert same_as_torch(call)[0] == "TypeError"


def test_repeat_and_expand_take_their_sizes_by_keyword():
    same_as_torch(lambda lib: lib.ones(2).repeat(repeats=(2, 3)))
    same_as_torch(lambda lib: lib.ones(2, 1).expand(size=(2, 3)))
    same_as_torch(lambda lib: lib.ones(()).expand(()))
    same_as_torch(lambda lib: lib.broadcast_to(lib.ones(()), ()))


def test_repeat_checks_the_result_sizes_only(nodes):
    # a negative count of an empty dim gives an empty dim; the error names the first negative
    same_as_torch(lambda lib: lib.ones(0, 2).repeat(-1, 2))
    same_as_torch(lambda lib: lib.ones(2, 0).repeat(2, -3, 0))
    same_as_torch(lambda lib: lib.ones(3).repeat(-1, -1, -1))
    same_as_torch(lambda lib: lib.ones(2, 1).repeat(-1, -1, -1))
    grads_as_torch(lambda lib, x: x.repeat(()), [()])  # (stays 0-d)
    grads_as_torch(lambda lib, x: x.T.repeat(1, 2), [(2, 3)])
    # (torch's own backward of such a repeat fails reshaping to a -1 beside a 0; numbagrad's
    # gives the empty gradient)
    x = ng.ones(0, 2, requires_grad=True)
    x.repeat(-1, 2).sum().backward()
    assert x.grad.shape == (0, 2)


@pytest.mark.parametrize("shape, sizes", [
    ((3,), (-1, -2)), ((3,), (-2,)), ((3,), (2, -2)), ((2, 1), (-2, 2)), ((2, 1), (-3, 1)),
    ((1,), (-1, -2))])
def test_expand_checks_the_sizes_in_torch_order(shape, sizes):
    # the sizes against the tensor's, from the last dim, before any negative size
    same_as_torch(lambda lib: lib.ones(shape).expand(*sizes))
    # a negative size that fits: torch's own message is an integer overflow counting the
    # elements, numbagrad's names the size
    for shape, sizes in [((3,), (-2, -1)), ((2, 1), (-1, -2)), ((1,), (2, -2)), ((), (-2,))]:
        same_type_as_torch(lambda lib: lib.ones(shape).expand(*sizes))


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(3).split(-1, 5),  # the size before the dim, as torch
    lambda lib: lib.ones(2, 1).split(-1, 2),
    lambda lib: lib.ones(3).split([1, 1], -1),  # the message names the dim as given
    lambda lib: lib.ones(3).split((0, 3, 1), -1),
    lambda lib: lib.ones(()).unbind(-1),  # the dim wrapped in the message
    lambda lib: lib.ones(()).unbind(1),  # out of range first
])
def test_split_and_unbind_errors(call):
    assert isinstance(same_as_torch(call)[0], str)


def test_split_chunk_repeat_errors_as_before():
    for call in [lambda lib: lib.ones(1).repeat(2, -1), lambda lib: lib.ones(3).split(0),
                 lambda lib: lib.ones(3).chunk(0)]:
        assert isinstance(same_as_torch(call)[0], str)
    same_type_as_torch(lambda lib: lib.tensor(1.0).expand(-2))
    same_type_as_torch(lambda lib: lib.tensor(1.0).expand(-1))


# ---- cat with legacy empty (0,) tensors ---------------------------------------------------------
def test_cat_names_a_tensor_by_its_place_in_the_list():
    same_as_torch(lambda lib: lib.cat([lib.zeros(0), lib.ones(2, 3), lib.ones(1, 2)], 1))
    same_as_torch(lambda lib: lib.cat([lib.ones(2, 3), lib.zeros(0), lib.ones(2, 2, 1)]))


def test_cat_with_an_empty_1d_tensor_as_before(nodes):
    same_as_torch(lambda lib: lib.cat([lib.ones(2), lib.zeros(0, dtype=lib.float64)]))
    for shapes, dtypes in [([(2,), (0,)], ["float32", "float64"]),
                           ([(0,), (2, 3), (0,)], ["float64", "float32", "float32"]),
                           ([(0,), (0,)], ["float32", "float64"])]:
        grads_as_torch(lambda lib, *xs: lib.cat(xs), shapes, dtypes)
        grads_as_torch(lambda lib, *xs: lib.cat(xs), shapes, dtypes,
                       [False] * (len(shapes) - 1) + [True])


# ---- products with empty dims, in two dtypes --------------------------------------------------
@pytest.mark.parametrize("shapes", [((1, 0, 1), (1, 1, 1)), ((1, 1, 1), (1, 1, 0)),
                                    ((0, 2, 2), (0, 2, 2)), ((1, 2, 0), (1, 0, 2)),
                                    ((2, 0, 0), (2, 0, 3)), ((1, 2, 1), (1, 1, 2))])
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32")])
def test_bmm_of_an_empty_product_in_two_dtypes(shapes, dtypes, nodes):
    # torch's result takes batch2's dtype: zeros, or empty; its kernel, which would refuse two
    # dtypes, runs only when there is something to sum
    grads_as_torch(lambda lib, a, b: lib.bmm(a, b), shapes, dtypes)
    grads_as_torch(lambda lib, a, b: lib.bmm(a, b), shapes, dtypes, [False, True])


@pytest.mark.parametrize("shapes", [
    ((2, 0, 1), (1, 1, 2)), ((2, 2, 0), (1, 0, 2)), ((1, 0), (2, 0, 1)), ((2, 2, 1), (2, 1, 0)),
    ((1, 2), (0, 2, 1)), ((0, 0, 0), (0, 0, 2)), ((1, 0, 1), (2, 1, 1, 0)), ((2, 0), (0,)),
    ((0,), (0, 2)), ((0,), (0,)), ((2, 3, 0), (0,)), ((0,), (2, 0, 3))])
@pytest.mark.parametrize("requires_grad", [(True, True), (False, True), (False, False)])
def test_matmul_with_empty_dims_in_two_dtypes(shapes, requires_grad, nodes):
    # torch folds to one mm or mv (which refuse two dtypes even when empty), or runs bmm,
    # depending on the ranks, requires_grad and the layout
    grads_as_torch(lambda lib, a, b: a @ b, shapes, ["float32", "float64"], list(requires_grad))


@pytest.mark.parametrize("shapes", [
    ((2, 3, 4), (1, 4, 5)), ((1, 3, 4), (2, 4, 5)), ((1, 3, 4), (1, 4, 5)), ((3, 4), (2, 4, 5)),
    ((4,), (2, 4, 5)), ((2, 3, 4), (4,)), ((2, 1, 3, 4), (1, 4, 5)), ((2, 3), (2, 3, 4)),
    ((2, 3, 4), (5, 6)), ((2, 3, 4), (1, 5, 6)), ((3, 4), (2, 5, 6)), ((2, 2, 3), (3, 2, 2))])
@pytest.mark.parametrize("requires_grad", [(True, True), (True, False), (False, True)])
def test_matmul_dispatch_errors_and_gradients(shapes, requires_grad, nodes):
    for dtypes in (["float64", "float64"], ["float32", "float64"]):
        grads_as_torch(lambda lib, a, b: a @ b, shapes, dtypes, list(requires_grad))


def test_matmul_folds_what_torch_folds():
    # a batch of one that requires grad is folded into one mm rather than expanded for bmm
    a, b = ng.ones(2, 3, 4), ng.ones(1, 4, 5, requires_grad=True)
    assert (a @ b).grad_fn.next_functions[0][0].name() == "MmBackward0"
    a.requires_grad_()
    assert (a @ b.detach()).grad_fn.next_functions[0][0].name() == "BmmBackward0"


@pytest.mark.parametrize("call", [
    lambda lib: lib.dot(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.mv(lib.ones(2, 2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.ones(2, 2, 2) @ lib.ones(2, dtype=lib.float64),
    lambda lib: lib.bmm(lib.ones(1, 2, 2), lib.ones(1, 2, 2, dtype=lib.float64)),
])
def test_products_name_the_dtypes_as_torch(call):
    assert same_as_torch(call)[0] == "RuntimeError"


@pytest.mark.parametrize("call", [
    lambda lib: lib.mm(lib.ones(2, 2), np.ones((2, 2), np.float32)),
    lambda lib: lib.matmul(lib.ones(2, 2), np.ones((2, 2), np.float32)),
    lambda lib: lib.matmul(np.ones((2, 2), np.float32), lib.ones(2, 2)),
    lambda lib: lib.mv(lib.ones(2, 2), [1.0, 2.0]),
    lambda lib: lib.dot(np.ones(2), lib.ones(2)),
    lambda lib: lib.bmm(lib.ones(1, 2, 2), np.ones((1, 2, 2))),
    lambda lib: lib.addmm(lib.ones(2), lib.ones(2, 2), np.ones((2, 2))),
])
def test_products_of_a_non_tensor_raise_torchs_type_error(call):
    assert same_as_torch(call)[0] == "TypeError"


def test_matmul_and_linear_with_empty_dims_as_before(nodes):
    grads_as_torch(lambda lib, a, b: a @ b, [(3, 2, 0), (0, 0)])
    grads_as_torch(lambda lib, x, w: F[lib].linear(x, w), [(3, 2, 0), (4, 0)])
    grads_as_torch(lambda lib, x, w, b: F[lib].linear(x, w, b), [(3, 2, 0), (4, 0), (4,)])


# ---- addmm's input ------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib: lib.addmm(lib.ones(2), lib.ones(0, 1), lib.ones(1, 1)),
    lambda lib: lib.addmm(lib.ones(2), lib.ones(2, 3), lib.ones(3, 1)),
    lambda lib: lib.addmm(lib.ones(2), lib.ones(2, 3), lib.ones(3, 1), beta=0),
    lambda lib: lib.addmm(lib.ones(2, 2), lib.ones(3, 1), lib.ones(1, 2)),
    lambda lib: lib.addmm(lib.ones(1, 2, 2), lib.ones(2, 1), lib.ones(1, 2)),
    lambda lib: lib.addmm(lib.ones(2), lib.ones(2), lib.ones(2, 2)),
    lambda lib: lib.addmm(lib.ones(2), lib.ones(2, 2), lib.ones(2)),
    lambda lib: lib.addmm(lib.ones(2, dtype=lib.float64), lib.ones(2), lib.ones(2, 2)),
    lambda lib: lib.addmm(lib.ones(2), lib.ones(2, 3, dtype=lib.float64), lib.ones(2, 2)),
    lambda lib: lib.addmm(lib.ones(7), lib.ones(2, 3), lib.ones(2, 2)),
])
def test_addmm_checks_in_torch_order_with_torch_errors(call):
    assert same_as_torch(call)[0] == "RuntimeError"


# ---- F.linear's bias ------------------------------------------------------------------------------
def _strided(lib, x):
    return x.transpose(0, -1).contiguous().transpose(0, -1)  # the same values, not contiguous


@pytest.mark.parametrize("bias", [(3,), (1,), (), (1, 3), (3, 1), (2, 3), (1, 1), (2, 1, 1)])
@pytest.mark.parametrize("dtypes", [("float32", "float32", "float64"),
                                    ("float64", "float64", "float32")])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_linear_with_a_bias_of_another_dtype_or_shape(bias, dtypes, layout, nodes):
    # torch folds the rows into addmm (one dtype, a bias that expands to the rows) for a
    # contiguous input and a 1-d bias, else adds the bias in place to the product (the
    # product's dtype, a bias broadcast to it)
    def linear(lib, x, w, b):
        return F[lib].linear(_strided(lib, x) if layout == "strided" else x, w, b)
    for x in [(2, 2, 4), (2, 1, 2, 4)]:
        grads_as_torch(linear, [x, (3, 4), bias], list(dtypes))
        grads_as_torch(linear, [x, (3, 4), bias], list(dtypes), [False, False, True])


def test_linear_with_a_bias_of_another_dtype_reproducer():
    same_as_torch(lambda lib: F[lib].linear(lib.ones(2, 1, 2)[..., :1], lib.ones(3, 1),
                                            lib.ones(3, dtype=lib.float64)))


# ---- layouts: view() works where torch's does ----------------------------------------------------
def _strides_order(lib, y):
    """Which permutations of y's dims are contiguous: its stride order, through public API
    (size-1 and empty dims aside, as they do not decide whether a view exists)."""
    dims = list(range(y.ndim))
    orders = [dims[:k] + dims[k + 1:] + [k] for k in dims] + [dims[::-1]]
    return [y.is_contiguous()] + [y.permute(*p).is_contiguous() for p in orders]


def _perm(lib):
    return lib.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)


def _channels_last(lib):
    return lib.arange(120.0).reshape(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(
        0, 3, 1, 2)


_LAYOUTS = {
    "index dim 1": lambda lib: lib.arange(6.0).reshape(2, 3)[:, [0, 1, 0]],
    "index dim 1 of 3": lambda lib: lib.arange(24.0).reshape(2, 3, 4)[:, [0, 2]],
    "index last dim": lambda lib: lib.arange(24.0).reshape(2, 3, 4)[..., [0, 2, 1]],
    "index, 2-d index": lambda lib: lib.arange(24.0).reshape(2, 3, 4)[:, [[0, 2], [1, 1]]],
    "index of a permuted": lambda lib: _perm(lib)[:, [0, 1]],
    "split indices": lambda lib: lib.arange(120.0).reshape(2, 3, 4, 5)[:, [0, 1], :, [1, 2]],
    "index then exp": lambda lib: lib.exp(lib.arange(6.0).reshape(2, 3)[:, [0, 1, 0]]),
    "mask of a permuted": lambda lib: _perm(lib)[:, lib.tensor([[True, False, True],
                                                                [False, True, True]])],
    "cat": lambda lib: lib.cat([_perm(lib), _perm(lib)], 1),
    "stack": lambda lib: lib.stack([_perm(lib), _perm(lib)], -1),
    "repeat": lambda lib: _perm(lib).repeat(1, 1, 1),
    "cat channels-last": lambda lib: lib.cat([_channels_last(lib), _channels_last(lib)], 2),
    "cat channels-last and not": lambda lib: lib.cat([_channels_last(lib), lib.zeros(1, 3, 4, 5)]),
    "stack channels-last": lambda lib: lib.stack([_channels_last(lib)] * 2, 1),
    "stack channels-last, new last dim": lambda lib: lib.stack([_channels_last(lib)] * 2, 4),
    "amax": lambda lib: lib.arange(24.0).reshape(2, 3, 4)[..., [0, 2, 1]].amax(0),
    "max": lambda lib: lib.arange(24.0).reshape(2, 3, 4).mT.max(0)[0],
    "dropout": lambda lib: F[lib].dropout(_perm(lib), 0.5),
    "mse none": lambda lib: F[lib].mse_loss(_perm(lib), lib.zeros(4, 2, 3), reduction="none"),
    "bce none": lambda lib: F[lib].binary_cross_entropy(
        _perm(lib) / 30, lib.full((4, 2, 3), 0.5), reduction="none"),
}


@pytest.mark.parametrize("name", sorted(_LAYOUTS))
def test_results_are_laid_out_as_torch_lays_them(name):
    # view() of a result works, or fails with torch's message, as in torch, because the
    # result has torch's stride order: indexing by tensors (TensorIterator's order over the
    # restrided input and the indices), cat, stack, repeat and reductions (C order),
    # dropout and unreduced losses (their input's)
    fn = _LAYOUTS[name]
    torch.manual_seed(0)
    assert _strides_order(ng, fn(ng)) == _strides_order(torch, fn(torch))
    assert oracle.outcome(ng, lambda lib: fn(lib).view(-1), oracle.rounded)[0] == \
        oracle.outcome(torch, lambda lib: fn(lib).view(-1), oracle.rounded)[0]


def test_view_of_an_index_result_reproducer():
    same_as_torch(lambda lib: lib.ones(2, 3)[:, [0, 1, 0]].view(-1))
    same_as_torch(lambda lib: lib.exp(lib.ones(3, 2).T).view(-1))  # as before
    same_as_torch(lambda lib: lib.ones(2, 2, 2).permute(1, 0, 2).masked_fill(
        lib.tensor([True, False]), 0.0).view(-1))


@pytest.mark.parametrize("index", [
    lambda lib: (0, slice(None), [1, 0]),  # an int beside an index tensor selects, as torch
    lambda lib: (slice(None), 0, [1, 0]),
    lambda lib: ([0], slice(1, None), [1, 0]),
    lambda lib: (None, [1], slice(1, None), [0, 1]),
    lambda lib: (Ellipsis, [1, 0], 0),
    lambda lib: (lib.tensor(1), slice(None), [0, 1]),
    lambda lib: (slice(None), [[0], [1]], slice(None), [1, 0]),
    lambda lib: (slice(None), lib.tensor([[True, False, True]] * 3)),
    lambda lib: (1, slice(None), lib.tensor([[True, False, True, False, True]] * 3)),
])
def test_index_mixing_ints_and_tensors(index, nodes):
    grads_as_torch(lambda lib, x: x.permute(0, 2, 1, 3)[index(lib)], [(2, 3, 3, 5)])
    grads_as_torch(lambda lib, x: x[index(lib)], [(2, 3, 3, 5)])


def test_a_0d_integer_tensor_index_selects_a_view():
    x = ng.arange(6.0).reshape(2, 3).requires_grad_(True) * 1
    y = x[:, ng.tensor(1)]
    assert y.grad_fn.name() == "SelectBackward0" and y._base is x
    same_as_torch(lambda lib: lib.ones(2, 3)[lib.tensor(5)])


@pytest.mark.parametrize("other", [(2, 4, 1), (2, 4, 3), (4, 2)])
def test_in_place_on_a_folded_product(other):
    """torch's folded matmul may return a view of a temporary; in-place ops on it work."""
    def run(lib):
        x = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        y = x @ lib.tensor(np.linspace(-1.0, 1.0, int(np.prod(other))).reshape(other))
        y.add_(1.0)
        (y * y).sum().backward()
        return y, x.grad
    same_as_torch(run)
