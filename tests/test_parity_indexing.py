"""Indexing held to torch 2.13 as the oracle: x[index], x[index] = v, index_select and gather
give torch's values, shapes, dtypes and gradients (through small and big nodes), or torch's
exception type with torch's message."""

import warnings

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.core import tape

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    """``fn(lib)`` as comparable data: a nested list of values, or (type name, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)
    return _plain(out)


def _plain(v):
    if isinstance(v, (tuple, list)):
        return [_plain(u) for u in v]
    if hasattr(v, "detach"):
        return ("tensor", list(v.shape), str(v.dtype).replace("torch.", ""),
                np.asarray(v.detach().numpy(), np.float64).round(12).tolist())
    return v


def same_as_torch(fn):
    ours, theirs = _outcome(ng, fn), _outcome(torch, fn)
    assert ours == theirs, f"numbagrad: {ours}\ntorch:     {theirs}"
    return ours


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
