"""Indexing held to torch 2.13 as the oracle: x[index], x[index] = v, index_select and gather
give torch's values, shapes, dtypes and gradients (through small and big nodes), or torch's
exception type with torch's message."""


import numpy as np
import pytest
from torch_oracle import same_as_torch

import numbagrad as ng
from numbagrad.core import tape

torch = pytest.importorskip("torch")


@pytest.fixture(params=["small", "big"])
def nodes(request, monkeypatch):
    """Every case twice: differentiated as small nodes, and as big nodes (tape.BIG = 0)."""
    if request.param == "big":
        monkeypatch.setattr(tape, "BIG", 0)
    return request.param


def _x(lib):
    return lib.tensor(np.arange(24.0).reshape(2, 3, 4) - 5.0, requires_grad=True)


def value_and_grad(fn):
    """``fn(lib, x)`` of a float64 (2, 3, 4) leaf: its value, grad_fn name and x's gradient
    for a cotangent of cosines, from numbagrad and from torch, compared."""
    def run(lib):
        x = _x(lib)
        y = fn(lib, x)
        w = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        return y, y.grad_fn.name(), x.grad
    return same_as_torch(run)


def raises_as_torch(fn):
    ours = same_as_torch(fn)
    assert isinstance(ours[0], str), ours  # torch raised, and so did numbagrad


# ---- index_select ----------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib, x: x.index_select(1, lib.tensor(0)),  # a 0-d index keeps the dim, as [i]
    lambda lib, x: x.index_select(-1, lib.tensor(3, dtype=lib.int32)),
    lambda lib, x: x[0, 1, 2].index_select(0, lib.tensor([0])),
    lambda lib, x: x[0, 1, 2].index_select(-1, lib.tensor(0)),
    lambda lib, x: x.index_select(2, lib.tensor([3, 0, 3])),
    lambda lib, x: x.index_select(1, lib.tensor([], dtype=lib.int64)),
])
def test_index_select_of_a_0d_index_or_tensor(fn, nodes):
    value_and_grad(fn)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.tensor(1.0).index_select(0, lib.tensor([0, 0])),
    lambda lib: lib.tensor(1.0).index_select(0, lib.tensor([], dtype=lib.int64)),
    lambda lib: lib.tensor(1.0).index_select(0, lib.tensor([0.0, 1.0])),  # before the dtype
    lambda lib: lib.tensor(1.0).index_select(0, lib.tensor([1])),
    lambda lib: lib.tensor(1.0).index_select(0, lib.tensor([[0]])),
])
def test_index_select_of_a_0d_tensor_takes_one_index(fn):
    raises_as_torch(fn)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.ones(3).index_select(0, lib.tensor([0.0])),
    lambda lib: lib.ones(3).index_select(0, lib.tensor([True])),
    lambda lib: lib.ones(3).index_select(0, lib.tensor([-1])),  # no wrapping
    lambda lib: lib.ones(3).index_select(0, lib.tensor(3)),
    lambda lib: lib.ones(2, 3).index_select(0, lib.tensor([2])),
    lambda lib: lib.ones(2, 3, 4).index_select(2, lib.tensor([1, 5, -7])),
    # torch's dim-1 kernel of a matrix, and its empty input, raise RuntimeError
    lambda lib: lib.ones(2, 3).index_select(1, lib.tensor([5])),
    lambda lib: lib.ones(2, 3).index_select(-1, lib.tensor([1, -4])),
    lambda lib: lib.ones(2, 3, 4).index_select(1, lib.tensor([1, 5, -7])),
    lambda lib: lib.ones(0, 3).index_select(1, lib.tensor([5, -1])),
    lambda lib: lib.ones(2, 0, 3).index_select(0, lib.tensor([3])),
    lambda lib: lib.ones(0, 3).index_select(0, lib.tensor([0])),
    lambda lib: lib.ones(2, 0).index_select(1, lib.tensor([0])),
])
def test_index_select_checks_its_index_as_torch(fn):
    raises_as_torch(fn)


def test_index_select_of_empty_inputs_computes():
    for fn in [lambda lib: lib.ones(0, 3).index_select(1, lib.tensor([2, 0])),
               lambda lib: lib.ones(0, 3).index_select(0, lib.tensor([], dtype=lib.int64)),
               lambda lib: lib.ones(0).index_select(0, lib.tensor([], dtype=lib.int32))]:
        same_as_torch(fn)


@pytest.mark.parametrize("op", ["index_select", "gather"])
def test_a_list_index_is_a_type_error(op):
    # (torch's message also names the argument's position: 2 for the method, 3 for torch.*)
    for lib in (ng, torch):
        with pytest.raises(TypeError, match=f"{op}\\(\\): argument 'index' .*must be Tensor, "
                                            "not list"):
            getattr(lib.ones(3), op)(0, [0])


# ---- gather ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib, x: x[0, 1, 2].gather(0, lib.tensor(0)),
    lambda lib, x: x[0, 1, 2].gather(-1, lib.tensor([0, 0])),  # 0-d and 1-d read alike
    lambda lib, x: x[0, 1].gather(0, lib.tensor(3)),
    lambda lib, x: x[0, 1, 2].gather(0, lib.zeros(2, 0, dtype=lib.int64)),
    lambda lib, x: x[0, 1].gather(0, lib.zeros(1, 0, dtype=lib.int64)),
    lambda lib, x: x.gather(1, lib.zeros(0, 5, dtype=lib.int64)),  # an empty index: no checks
    lambda lib, x: x.gather(2, lib.zeros(1, 0, 9, dtype=lib.float32)),
    lambda lib, x: x.gather(2, lib.tensor([[[3, 0], [1, 1]]])),
])
def test_gather_of_a_0d_or_empty_index(fn, nodes):
    value_and_grad(fn)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.ones(2).gather(0, lib.tensor([-1])),
    lambda lib: lib.tensor(1.0).gather(0, lib.tensor(-1)),
    lambda lib: lib.tensor(1.0).gather(0, lib.tensor([[0]])),
    lambda lib: lib.ones(2, 3).gather(0, lib.tensor(0)),
    lambda lib: lib.ones(3, 3).gather(0, lib.tensor([[0, 0, 0], [0, 7, 0], [-5, 0, 0]])),
    lambda lib: lib.ones(2, 3).gather(1, lib.zeros(1, 5, dtype=lib.float32)),
    lambda lib: lib.ones(0, 3).gather(0, lib.zeros(1, 1, dtype=lib.int64)),
])
def test_gather_checks_a_nonempty_index_as_torch(fn):
    raises_as_torch(fn)


# ---- lists as indices ------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib, x: x[[]],
    lambda lib, x: x[[[]]],
    lambda lib, x: x[[[], []]],
    lambda lib, x: x[[0, []]],
    # a short list holding a list, slice, None, Ellipsis or tensor is read as a tuple
    lambda lib, x: x[[[0, 1], [1, 0]]],
    lambda lib, x: x[[[0, 1]]],
    lambda lib, x: x[[[1], [0, 2]]],
    lambda lib, x: x[[0, slice(None), None]],
    lambda lib, x: x[[..., [3, 0]]],
    lambda lib, x: x[[lib.tensor(1), 2]],
    lambda lib, x: x[[lib.tensor([1]), 2]],
    lambda lib, x: x[[0, 1] * 16],  # 32 elements: one index tensor
    lambda lib, x: x[[[0], [1]] * 16],
    # a list is read as an int64 tensor (floats truncated), all bools as a mask
    lambda lib, x: x[[0.0, 1.7]],
    lambda lib, x: x[[-0.5]],
    lambda lib, x: x[[True, 1]],
    lambda lib, x: x[[True, False]],
    lambda lib, x: x[:, [[True, False, True], [True, True, False]]],
])
def test_empty_and_nested_lists_as_indices(fn, nodes):
    value_and_grad(fn)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.ones(2, 3)[[[0, 1], [1, 0], [0, 0]]],
    lambda lib: lib.ones(2, 3)[[[0, 1], [1, 2]]],
    lambda lib: lib.ones(2, 3)[[[True, False, True], [True, True, True]]],
    lambda lib: lib.ones(2, 3)[0, [[0, 1], [1]]],
    lambda lib: lib.ones(2, 3)[0, [[0, 1], 1]],
    lambda lib: lib.ones(2, 3)[0, [0, [1]]],
    lambda lib: lib.ones(2, 3)[0, [1, None]],
    lambda lib: lib.ones(2, 3)[[float("nan")]],
    lambda lib: lib.ones(2, 3)[[0, 1], []],
])
def test_lists_as_indices_raise_as_torch(fn):
    raises_as_torch(fn)


def test_a_short_list_read_as_a_tuple_warns():
    with pytest.warns(UserWarning, match="x\\[tuple\\(seq\\)\\]"):
        ng.ones(2, 3)[[[0, 1], [1, 0]]]


# ---- ints and advanced indices: torch selects first ------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib, x: x[0, :, [0, 1]],  # NumPy: (2, 3); torch selects dim 0 first: (3, 2)
    lambda lib, x: x[lib.tensor(0), :, [1, 2]],  # a 0-d integer tensor selects as an int
    lambda lib, x: x[lib.tensor(1)],
    lambda lib, x: x[[1, 0], 2, [[1], [3]]],
    lambda lib, x: x[True],
    lambda lib, x: x[[0], True, [1]],
    lambda lib, x: x[False, [0]],
    lambda lib, x: x[0, 0, 0, True],
    lambda lib, x: x[None, [1], :, [0, 1]],
    lambda lib, x: x[1:, [1, 0], ::2],
])
def test_ints_select_before_the_advanced_index(fn, nodes):
    value_and_grad(fn)


# ---- out-of-range indices and empty tensors --------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib: lib.ones(0, 1)[:, [0, 1]],  # an empty result: torch checks no index
    lambda lib: lib.ones(0, 2)[:, [5, -9]],
    lambda lib: lib.ones(1, 0, 2)[[0], :, [5]],
    lambda lib: lib.ones(0, 1)[[]],
    lambda lib: lib.ones(2, 0)[[0, 7], :, [0, 7]],
])
def test_out_of_range_indices_into_an_empty_result_compute(fn):
    same_as_torch(fn)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.ones(0, 1)[[0]],
    lambda lib: lib.ones(1, 0)[:, [0]],
    lambda lib: lib.ones(1, 0)[[5], [0]],
    lambda lib: lib.ones(0)[lib.tensor([3])],
    # torch names an index tensor by its place among the index tensors
    lambda lib: lib.ones(2, 3)[:, lib.tensor([-4])],
    lambda lib: lib.ones(2, 3, 4)[0, [1, 3]],
    lambda lib: lib.ones(2, 3, 4)[[1, 0], :, [1, -7]],
    lambda lib: lib.ones(2, 3, 4)[:, [1, 3], [-7, 1]],
    lambda lib: lib.ones(2, 3, 4)[[0, 5], [[0], [9]]],
    lambda lib: lib.ones(2, 3, 4)[[1, 2, 3], [1, -7]],
    # and an int by its place in the index
    lambda lib: lib.ones(2, 3)[None, 5],
    lambda lib: lib.ones(2, 3)[True, 0, 5],
    lambda lib: lib.ones(2, 3, 4)[[1, 0], 7],
    lambda lib: lib.ones(2, 3, 4)[lib.ones(2, 3, dtype=lib.bool), 7],
    lambda lib: lib.tensor(1.0)[0],
    lambda lib: lib.tensor(1.0)[5],
    lambda lib: lib.tensor(1.0)[0:1],
    lambda lib: lib.ones(2, 3)[[0], ::-1],
    lambda lib: lib.ones(2, 3)[::0],
    lambda lib: lib.ones(2, 3)[[0, 1], 2:, [0, 1]],
    lambda lib: lib.ones(2, 3)[1.5],
    lambda lib: lib.ones(2, 3)[np.bool_(True)],
    lambda lib: lib.ones(2, 3)[lib.tensor(0.0)],
])
def test_out_of_range_and_bad_indices_raise_as_torch(fn):
    raises_as_torch(fn)


# ---- boolean masks ---------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib: lib.ones(2)[lib.zeros(0, dtype=lib.bool)],
    lambda lib: lib.ones(2)[lib.ones(3, dtype=lib.bool)],
    lambda lib: lib.ones(2, 3)[lib.ones(2, 2, dtype=lib.bool)],
    lambda lib: lib.ones(2, 3)[lib.ones(1, 3, dtype=lib.bool)],
    lambda lib: lib.ones(2, 3)[:, lib.ones(2, dtype=lib.bool)],
    lambda lib: lib.ones(2, 3, 4)[[0], :, lib.ones(4, 3, dtype=lib.bool)],
    lambda lib: lib.ones(2, 3)[lib.ones(2, 3, 1, dtype=lib.bool)],
    lambda lib: lib.tensor(1.0)[lib.ones(0, dtype=lib.bool)],
    lambda lib: lib.ones(2, 3)[lib.ones(2, dtype=lib.bool), lib.ones(3, dtype=lib.bool)],
    lambda lib: lib.ones(2, 3, 4)[[1, 2, 3], [1], lib.tensor([True, False, True, False])],
])
def test_a_boolean_mask_of_another_shape_raises_as_torch(fn):
    raises_as_torch(fn)


@pytest.mark.parametrize("fn", [
    lambda lib, x: x[x > 0],
    lambda lib, x: x[lib.tensor([[True, False, True], [False, False, True]]), [1, 2, 3]],
    lambda lib, x: x[lib.tensor(True)],
    lambda lib, x: x[0, 0][lib.tensor(False)],
    lambda lib, x: x[lib.tensor([True, False]), None, lib.ones(3, 4, dtype=lib.bool)],
])
def test_boolean_masks_of_the_right_shape(fn, nodes):
    value_and_grad(fn)


# ---- x[index] = v ----------------------------------------------------------------------------
def _f64(lib, *shape):
    return -lib.arange(1.0, 1.0 + np.prod(shape), dtype=lib.float64).reshape(shape)


def _assigned(index, value, grad):
    """x[index] = value on a float64 (2, 3, 4) tensor: the result, and with grad the gradients of
    x (a leaf under it) and of the value."""
    def run(lib):
        leaf = lib.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=grad)
        x = leaf * 1
        v = value(lib)
        if grad and v.dtype == x.dtype:
            v = v.clone().requires_grad_(True)
        x[index(lib)] = v
        if not grad:
            return x
        (x * lib.tensor(np.cos(np.arange(24.0)).reshape(2, 3, 4))).sum().backward()
        return x, leaf.grad, v.grad if v.requires_grad else None
    return same_as_torch(run)


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("index, value", [
    (lambda lib: (0, slice(None), [0, 1]), lambda lib: _f64(lib, 3, 2)),
    (lambda lib: (lib.tensor(0), slice(None), [0, 1]), lambda lib: _f64(lib, 3, 2)),
    (lambda lib: [[0, 1], [1, 0]], lambda lib: _f64(lib, 2)),
    (lambda lib: (slice(None), [1, 5]), lambda lib: _f64(lib)),
    (lambda lib: lib.ones(3, dtype=lib.bool), lambda lib: _f64(lib)),
    (lambda lib: (0, True), lambda lib: _f64(lib, 1, 3, 4)),
    (lambda lib: lib.tensor([True, False]), lambda lib: lib.tensor(2)),  # one mask fills,
    (lambda lib: [True, False], lambda lib: lib.tensor([2.5])),  # converting
    (lambda lib: (0, lib.tensor([True, False, True])), lambda lib: _f64(lib, 1, 1)),
    (lambda lib: True, lambda lib: lib.arange(4)),  # a lone True copies, converting
    (lambda lib: False, lambda lib: lib.arange(5)),  # a lone False writes nothing
    (lambda lib: (True,), lambda lib: lib.tensor(2)),  # index_put_: dtypes must match
    (lambda lib: [0, 1], lambda lib: lib.tensor(2.5)),
    (lambda lib: lib.tensor([0]), lambda lib: lib.ones(3, 4, dtype=lib.int64)),
    (lambda lib: 0, lambda lib: lib.ones(5)),
    (lambda lib: 0, lambda lib: lib.ones(2, 1, 4)),
    (lambda lib: (0, [0, 1]), lambda lib: _f64(lib, 3, 4)),
])
def test_setitem_reads_the_index_as_getitem_does(index, value, grad):
    _assigned(index, value, grad)
