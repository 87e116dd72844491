"""Wrong answers and spurious or unclear errors, each held to torch 2.13 as the oracle: the
same values and gradients, or the same exception type with torch's message (or one naming
the op, the shapes and what was expected)."""

import numpy as np
import pytest
from torch_oracle import same_as_torch

import numbagrad as ng

torch = pytest.importorskip("torch")

NAN = float("nan")


def close(a, b):
    return np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=1e-6,
                       atol=1e-12, equal_nan=True)


# ---- 1. narrow ---------------------------------------------------------------------------
@pytest.mark.parametrize("dim, start, length", [
    (0, -2, 2), (0, 2, 5), (0, 4, 0), (0, -4, 1), (0, -3, 3), (0, 0, -1)])
def test_narrow_wraps_a_negative_start_and_checks_the_bounds(dim, start, length):
    same_as_torch(lambda lib: lib.arange(3.0).narrow(dim, start, length))


def test_narrow_of_a_0d_tensor_and_a_wrapped_start_on_a_matrix():
    same_as_torch(lambda lib: lib.ones(()).narrow(0, 0, 1))
    same_as_torch(lambda lib: lib.arange(12.0).reshape(3, 4).narrow(1, -3, 2))
    for dim, start, length in [(0, 3, 0), (-1, 1, 2), (2, 0, 1)]:  # as before
        same_as_torch(lambda lib: lib.arange(3.0).narrow(dim, start, length))


# ---- 2. gradients at NaN ---------------------------------------------------------------------
# at most 6 elements: torch's vectorized loops of hardtanh and elu (8 float64 or 16 float32
# elements and more) disagree with its scalar ones at NaN; numbagrad follows the scalar ones
_TIES = [[1.0, NAN, 3.0], [-2.0, 0.5, 0.5]]
_NANS = [[1.0, NAN, 3.0], [-2.0, 0.5, NAN]]
_ZERO = [[2.0, NAN, 0.0], [1.0, NAN, 3.0]]
_INF0 = [[2.0, float("inf"), 4.0], [1.0, 0.0, 3.0]]


def _other(lib, x):
    return lib.tensor([[1.0, 1.0, NAN], [0.5, 0.5, -3.0]], dtype=x.dtype, requires_grad=True)


_NAN_CASES = {
    "max": (lambda lib, x: lib.max(x) + lib.max(x, 1)[0].sum(),
            [_TIES, _NANS, [[NAN, 1.0], [NAN, 1.0]]]),
    "min": (lambda lib, x: lib.min(x), [_TIES, _NANS]),
    "amax": (lambda lib, x: lib.amax(x, 0).sum() + 2 * lib.amax(x, 1).sum(), [_TIES, _NANS]),
    "amin": (lambda lib, x: lib.amin(x, 0).sum() + 2 * lib.amin(x, 1).sum(), [_TIES, _NANS]),
    "amax_all": (lambda lib, x: lib.amax(x), [_TIES, _NANS]),
    "maximum": (lambda lib, x: (lib.maximum(x, _other(lib, x))
                                + 2 * lib.maximum(_other(lib, x), x)).sum(), [_TIES, _NANS]),
    "minimum": (lambda lib, x: (lib.minimum(x, _other(lib, x))
                                + 2 * lib.minimum(_other(lib, x), x)).sum(), [_TIES, _NANS]),
    "abs": (lambda lib, x: lib.abs(x).sum(), [_NANS]),
    "sign": (lambda lib, x: (lib.sign(x) * x).sum(), [_NANS]),
    "relu": (lambda lib, x: lib.relu(x).sum(), [_NANS]),
    "elu": (lambda lib, x: lib.nn.functional.elu(x).sum(), [_NANS]),
    # (clamp, unlike hardtanh, drops the gradient at NaN)
    "hardtanh": (lambda lib, x: (lib.nn.functional.hardtanh(x) + 2 * lib.clamp(x, -1.0, 1.0)).sum(),
                 [_NANS]),
    "prod": (lambda lib, x: lib.prod(x), [_ZERO, [[2.0, NAN, 0.0], [0.0, 1.0, 3.0]]]),
    "prod_dim": (lambda lib, x: lib.prod(x, 1).sum() + lib.prod(x, 0).sum(), [_ZERO, _NANS, _INF0]),
    "var": (lambda lib, x: lib.var(x), [_NANS, [[NAN]], [[1.0]]]),
    "var_dim": (lambda lib, x: lib.var(x, 1).sum() + lib.var(x, 0, correction=2).sum(), [_NANS]),
    "softmax_0d": (lambda lib, x: lib.softmax(x[0, 1], 0) + lib.log_softmax(x[0, 1], 0), [_NANS]),
}


def _value_and_grads(lib, f, data, dtype):
    """f's value, its gradient, and its gradient by the differentiable backward."""
    x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
    y = f(lib, x)
    (g,) = lib.autograd.grad(f(lib, x), x, create_graph=True)
    y.backward()
    return y.item(), x.grad.numpy().copy(), g.detach().numpy()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(_NAN_CASES))
def test_gradients_at_nan_follow_torch_eager_and_compiled(name, dtype):
    f, inputs = _NAN_CASES[name]
    compiled = ng.compile(ng.func.grad(lambda x: f(ng, x)))
    for data in inputs:
        ours, theirs = (_value_and_grads(lib, f, data, dtype) for lib in (ng, torch))
        for k, what in enumerate(("value", "gradient", "create_graph gradient")):
            assert close(ours[k], theirs[k]), (data, what, ours[k], theirs[k])
        replayed = compiled(np.asarray(data, dtype))
        np.testing.assert_array_equal(np.asarray(replayed), ours[1])


def test_maximum_and_minimum_replay_propagate_nan_from_either_side():
    a = np.array([NAN, 1.0, 0.0, NAN])
    b = np.array([1.0, NAN, -0.0, NAN])
    for fn in (ng.maximum, ng.minimum):
        eager = fn(ng.tensor(a), ng.tensor(b)).numpy()
        assert np.isnan(eager).tolist() == [True, True, False, True]
        np.testing.assert_array_equal(np.asarray(ng.compile(fn)(a, b)), eager)


# ---- 3. errors torch raises ------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib: lib.addmm(lib.ones(2, 2, 2), lib.ones(2, 3), lib.ones(3, 2)),
    lambda lib: lib.addmm(lib.ones(1, 2, 2, dtype=lib.float64), lib.ones(2, 3, dtype=lib.float64),
                          lib.ones(3, 2, dtype=lib.float64)),
    lambda lib: lib.ones(()).transpose(2, 0),
    lambda lib: lib.ones(()).transpose(0, -2),
    lambda lib: lib.ones(()).squeeze(2),
    lambda lib: lib.ones(()).squeeze((0, 2)),
    lambda lib: lib.gather(lib.arange(3.0), 0, lib.tensor([0, -1])),
    lambda lib: lib.gather(lib.arange(6.0).reshape(2, 3), 1, lib.tensor([[0], [-3]])),
    lambda lib: lib.index_select(lib.arange(3.0), 0, lib.tensor([-1])),
    lambda lib: lib.index_select(lib.arange(3.0), 0, lib.tensor([3])),
    lambda lib: lib.tensor([1, 2]) // 0,
    lambda lib: lib.tensor([1, 2]) // lib.tensor([1, 0]),
    lambda lib: lib.tensor([1, 2]) % 0,
    lambda lib: lib.ones(0, 3).chunk(0),
    lambda lib: lib.ones(4).chunk(-1),
])
def test_errors_torch_raises(call):
    assert isinstance(same_as_torch(call)[0], str)


def test_the_neighbouring_cases_still_compute():
    for call in [lambda lib: lib.ones(()).transpose(0, -1),
                 lambda lib: lib.ones(()).squeeze(-1),
                 lambda lib: lib.tensor([1.0, 2.0]) // 0,
                 lambda lib: lib.tensor([7, -7]) // lib.tensor([2, 2]),
                 lambda lib: lib.tensor([7, -7]) % 3,
                 lambda lib: lib.ones(5).chunk(3),
                 lambda lib: lib.ones(0, 3).chunk(2)]:  # torch: 2 empty parts
        same_as_torch(call)


def _t(lib):
    return lib.arange(12.0).reshape(4, 3).t()


def _square_t(lib):
    return lib.arange(9.0).reshape(3, 3).t()


def _expanded(lib):  # strides (0, 1, 0)
    return lib.arange(6.0).reshape(2, 3, 1)[::2].expand(2, 3, 2)


_LAYOUT_CASES = {
    "exp": lambda lib: lib.exp(_t(lib)),
    "sigmoid": lambda lib: lib.sigmoid(lib.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)),
    "pow": lambda lib: _t(lib) ** 3,
    "contiguous": lambda lib: _t(lib).contiguous(),
    "masked_fill": lambda lib: _t(lib).masked_fill(_t(lib) > 5, 0.0),
    "clone": lambda lib: _expanded(lib).clone(),
    "double": lambda lib: _expanded(lib).double(),
    # mixed layouts: torch follows the first operand's
    "mul": lambda lib: _square_t(lib) * lib.arange(9.0).reshape(3, 3),
    "where": lambda lib: lib.where(_square_t(lib) > 3, _square_t(lib),
                                   lib.arange(9.0).reshape(3, 3)),
}


@pytest.mark.parametrize("name", sorted(_LAYOUT_CASES))
def test_results_are_laid_out_as_torch_lays_them_so_view_agrees(name):
    # a view of a result works, or fails with torch's "Use .reshape(...) instead.", as in
    # torch: the result has torch's strides (its elementwise ops keep the input's layout,
    # contiguous() and masked_fill give C order)
    same_as_torch(lambda lib: _LAYOUT_CASES[name](lib).view(-1))


# ---- 5. computes where torch computes --------------------------------------------------------
def _grads(lib, fn, *shapes):
    xs = [lib.arange(float(np.prod(s))).reshape(tuple(s)).requires_grad_(True) for s in shapes]
    y = fn(lib, *xs)
    (y * lib.arange(float(y.numel())).reshape(tuple(y.shape))).sum().backward()
    return y, [x.grad for x in xs]


@pytest.mark.parametrize("fn, shapes", [
    (lambda lib, x, w: lib.nn.functional.linear(x, w), [(2, 3, 0), (4, 0)]),
    (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [(2, 3, 0), (4, 0), (4,)]),
    (lambda lib, a, b: lib.matmul(a, b), [(2, 3, 0), (0, 4)]),
])
def test_linear_and_matmul_with_an_inner_dim_of_zero(fn, shapes):
    same_as_torch(lambda lib: _grads(lib, fn, *shapes))


def test_masked_fill_broadcasts_self_to_the_masks_shape():
    mask = [[True, False, True], [False, False, True]]
    same_as_torch(lambda lib: _grads(lib, lambda lib, x: x.masked_fill(lib.tensor(mask), -1.0),
                                     (3,)))
    same_as_torch(lambda lib: _grads(lib, lambda lib, x: x.masked_fill(lib.tensor(True), 2.0),
                                     ()))
    same_as_torch(lambda lib: lib.ones(3).masked_fill_(lib.tensor(mask), 0.0))
    same_as_torch(lambda lib: lib.ones(3).masked_fill(lib.tensor([True]), lib.tensor([2.0])))
    m = np.array(mask)
    g = ng.compile(ng.func.grad(lambda x: (x.masked_fill(ng.tensor(m), 0.0) * 3).sum()))
    np.testing.assert_array_equal(np.asarray(g(np.ones(3))), [3.0, 6.0, 0.0])


def _cat_with_empty_leaves(lib):
    z = lib.zeros(0, requires_grad=True)
    y = lib.cat([lib.ones(3), z])
    flag = y.requires_grad
    y.sum().backward()
    return flag, z.grad


def _big_empty_slice(lib):
    # a big leaf's empty slice (big nodes keep their own buffers) beside an empty leaf, which
    # then sits at the very end of the adjoint arena
    w = lib.ones(3, requires_grad=True)
    s = (w * 2).sum()
    a = lib.ones(40000, requires_grad=True)
    z = lib.zeros(0, requires_grad=True)
    (lib.cat([a[5:5], z]).sum() + s).backward()
    return a.grad.sum(), z.grad, w.grad


@pytest.mark.parametrize("run", [
    _cat_with_empty_leaves,
    _big_empty_slice,
    lambda lib: lib.cat([lib.zeros(0), lib.ones(())]),
    lambda lib: lib.cat([lib.ones(2, 3), lib.zeros(0, dtype=lib.float64)], 1),
    lambda lib: lib.autograd.grad(lib.cat([lib.ones(2, 3, requires_grad=True),
                                           x := lib.zeros(0, requires_grad=True)]).sum(), x),
])
def test_cat_keeps_legacy_empty_inputs_in_the_graph(run):
    same_as_torch(run)


# ---- 6. clear errors -------------------------------------------------------------------------
def _hooked(lib, make_hook, leaf=False, create_graph=False):
    x = lib.ones(3, requires_grad=True)
    y = x * 2

    def hook(g):
        return make_hook(lib)

    (x if leaf else y).register_hook(hook)
    if create_graph:
        return lib.autograd.grad(y.sum(), x, create_graph=True)
    y.sum().backward()
    return x.grad


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(4).split(0),
    lambda lib: lib.ones(4).split(-1),
    lambda lib: lib.ones(3).split([4, -1]),
    lambda lib: lib.ones(()).split(1),
    lambda lib: lib.ones(4).chunk(0),
    lambda lib: lib.ones(()).chunk(1),
    lambda lib: lib.arange(0, 5, 0),
    lambda lib: lib.arange(0.0, 5.0, 0.0),
    lambda lib: lib.arange(0, 5, -1),
    lambda lib: lib.arange(0, float("inf")),
    lambda lib: _hooked(lib, lambda lib: lib.ones(4)),
    lambda lib: _hooked(lib, lambda lib: lib.ones(2, 3), leaf=True),
    lambda lib: _hooked(lib, lambda lib: lib.ones(3, dtype=lib.float64)),
    lambda lib: _hooked(lib, lambda lib: lib.ones(4), create_graph=True),
    lambda lib: _hooked(lib, lambda lib: 1.0),
    lambda lib: lib.tensor(np.arange(3, dtype=">f8")),
    lambda lib: lib.from_numpy(np.arange(3, dtype=">i4")),
    lambda lib: lib.as_tensor(np.arange(3.0).astype(">f4")),
    lambda lib: (lib.ones(3, requires_grad=True) * 2).backward([1.0, 1.0, 1.0]),
    lambda lib: (lib.ones((), requires_grad=True) * 2).backward([1.0]),
    lambda lib: (lib.ones(3, requires_grad=True) * 2).backward([]),
    lambda lib: lib.autograd.backward([lib.ones(3, requires_grad=True) * 2], [[1.0, 1.0, 1.0]]),
    lambda lib: lib.autograd.grad(x := lib.ones(3, requires_grad=True), x, [1.0, 1.0, 1.0]),
])
def test_errors_read_as_torchs(call):
    assert isinstance(same_as_torch(call)[0], str)


def test_extra_gradients_are_ignored_as_torch_pairs_them_up():
    same_as_torch(lambda lib: lib.autograd.grad(
        (x := lib.ones(3, requires_grad=True)) * 2, x, [lib.ones(3), lib.ones(3)]))


def _npz(path, **arrays):
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    return str(path)


def _structure(text):
    return {"__numbagrad_structure__": np.frombuffer(text.encode(), np.uint8)}


def test_load_names_the_file_and_what_is_wrong_with_it(tmp_path):
    import io
    import json

    def entry(obj):
        return _structure(json.dumps(obj))

    deep = '{"t": "list", "items": [' * 2000 + '{"t": "py", "v": 1}' + "]}" * 2000
    (tmp_path / "random.pt").write_bytes(bytes(range(256)) * 4)
    np.save(tmp_path / "one.npy", np.ones(3))
    ng.save({"w": ng.ones(3)}, str(tmp_path / "good.npz"))
    truncated = (tmp_path / "good.npz").read_bytes()
    (tmp_path / "truncated.npz").write_bytes(truncated[:len(truncated) // 2])
    cases = {
        str(tmp_path / "random.pt"): "not a NumPy .npz archive",
        str(tmp_path / "one.npy"): "single NumPy array",
        str(tmp_path / "truncated.npz"): "damaged or truncated",
        _npz(tmp_path / "plain.npz", a0=np.ones(3)): "no __numbagrad_structure__ entry",
        _npz(tmp_path / "json.npz", **_structure('{"t": ')): "not valid JSON",
        _npz(tmp_path / "deep.npz", **_structure(deep)): "nested too deeply",
        _npz(tmp_path / "index.npz", a0=np.ones(3), **entry({"t": "tensor", "i": 3})):
            "array a3 the archive does not hold",
        _npz(tmp_path / "str.npz", a0=np.array(["ab"]), **entry({"t": "tensor", "i": 0})):
            "dtype <U2, which no tensor holds",
        _npz(tmp_path / "kind.npz", **entry({"t": "what"})): "unknown kind",
        _npz(tmp_path / "key.npz", **entry({"t": "dict", "items": [
            [{"t": "list", "items": []}, {"t": "py", "v": 1}]]})): "dict key",
    }
    for path, why in cases.items():
        with pytest.raises(RuntimeError, match=f"numbagrad.load: {path} is not a file "
                                               f"numbagrad.save wrote: .*{why}"):
            ng.load(path)
    with pytest.raises(RuntimeError, match="not a NumPy .npz archive"):
        ng.load(io.BytesIO(bytes(range(256)) * 4))
    assert ng.load(str(tmp_path / "good.npz"))["w"].tolist() == [1.0, 1.0, 1.0]


# ---- 4. a view after its base changed in place --------------------------------------------
def _view_cases():
    def brief(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[1:]
        y.mul_(2)
        v.sum().backward()
        return v.grad_fn.name(), x.grad

    def view_of_view(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
        y = x * 1
        v = y[1:][::2]
        y.mul_(2)
        (v * 3).sum().backward()
        return x.grad

    def base_without_grad_until_copy(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.zeros(3)
        v = y[1:]
        before = v.requires_grad
        y.copy_(x)
        (v * v).sum().backward()
        return before, v.requires_grad, x.grad

    def leaf_changed_without_grad(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = x[1:]
        with lib.no_grad():
            x.mul_(2)
        v.backward(lib.tensor([1.0, 10.0]))
        return v.grad_fn.name(), x.grad

    def setitem_and_expand(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 1
        v = y.expand(2, 2, 2)
        t = y.t()
        y[0, 0] = 5.0
        (v.sum() + (t * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum()).backward()
        return x.grad

    def twice_and_create_graph(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[1:]
        y.mul_(2)
        v0 = v[0]
        y.add_(1)
        (g,) = lib.autograd.grad((v * v).sum() + v0, x, create_graph=True)
        return g, g.sum().grad_fn.name()

    return [brief, view_of_view, base_without_grad_until_copy, leaf_changed_without_grad,
            setitem_and_expand, twice_and_create_graph]


@pytest.mark.parametrize("run", _view_cases(), ids=lambda f: f.__name__)
def test_a_view_follows_its_base_changed_in_place(run):
    # torch regenerates the view's grad_fn (AsStridedBackward0 over the base's new node)
    same_as_torch(run)


def test_a_compiled_function_returning_a_view_of_a_changed_base():
    def f(x):
        y = x * 1
        v = y[1:]
        y.mul_(2)
        return v

    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(ng.compile(f)(x)), [4.0, 6.0])
    g = ng.compile(ng.func.grad(lambda x: (f(x) * ng.tensor([1.0, 10.0])).sum()))
    np.testing.assert_array_equal(np.asarray(g(x)), [0.0, 2.0, 20.0])


@pytest.mark.parametrize("big", [False, True], ids=["small", "big"])
@pytest.mark.parametrize("bias", [(1,), (3,), (1, 3), (2, 1), (2, 3), ()])
def test_addmm_bias_gradient_for_every_broadcast_shape(bias, big, monkeypatch):
    """addmm's bias gradient sums over the dims it was broadcast along, also on the big-node
    path (its NumPy backward took a (1,) bias for a column of an (m, n) product)."""
    if big:
        monkeypatch.setattr(ng.core.tape, "BIG", 1)
    a, b = np.arange(1.0, 5.0).reshape(2, 2), np.arange(1.0, 7.0).reshape(2, 3)
    c = np.linspace(-1.0, 1.0, int(np.prod(bias))).reshape(bias)

    def grads(lib):
        x = lib.tensor(c, requires_grad=True)
        (lib.addmm(x, lib.tensor(a), lib.tensor(b), beta=0.5) * lib.tensor(b[:1] + 1)).sum() \
            .backward()
        return x.grad

    same_as_torch(grads)


@pytest.mark.parametrize("fn", ["add", "sub"])
@pytest.mark.parametrize("alpha", [1, 3, -0.5, 2.5])
def test_add_and_sub_take_alpha(fn, alpha):
    def grads(lib):
        x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = lib.tensor([3.0, 0.25, -1.0], requires_grad=True)
        z = getattr(lib, fn)(x, y, alpha=alpha)
        w = getattr(x, fn)(2.0, alpha=alpha)
        (z * z * w).sum().backward()
        inplace = lib.tensor([1.0, 2.0, 3.0])
        getattr(inplace, fn + "_")(lib.tensor([1.0, 1.0, 1.0]), alpha=alpha)
        ints = lib.tensor([1, 2])
        if isinstance(alpha, int):
            getattr(ints, fn + "_")(lib.tensor([5, 7]), alpha=alpha)
        return z, w, x.grad, y.grad, inplace, ints

    same_as_torch(grads)


@pytest.mark.parametrize("call", [
    lambda lib: lib.add(lib.tensor([1]), lib.tensor([1]), alpha=0.5),
    lambda lib: lib.tensor([1, 2]).sub_(1, alpha=1.5),
    lambda lib: lib.add(lib.tensor([1.0]), lib.tensor([1.0]), alpha=True),
    lambda lib: lib.add(lib.tensor([1, 2]), lib.tensor([0.5, 1.0]), alpha=2),
])
def test_alpha_checked_as_torch_checks_it(call):
    same_as_torch(call)


def test_integers_to_negative_integer_tensor_powers():
    same_as_torch(lambda lib: lib.tensor([2, 1, -1, 0, -1, 3, -2]).pow(
        lib.tensor([-1, -2, -3, -1, -2, 2, 3])))
    same_as_torch(lambda lib: lib.tensor([[2], [1], [-1]], dtype=lib.int32) **
                  lib.tensor([-1, -2], dtype=lib.int32))
    same_as_torch(lambda lib: lib.tensor(-1) ** lib.tensor(-3))
    same_as_torch(lambda lib: lib.tensor([2, 3]) ** -1)  # a Python number: torch raises


@pytest.mark.parametrize("index", [
    (Ellipsis, Ellipsis), (Ellipsis, 0, Ellipsis), (Ellipsis, None, Ellipsis),
    (1, Ellipsis, Ellipsis), (Ellipsis, [0, 2], Ellipsis), (Ellipsis, slice(1, 3), Ellipsis)])
def test_ellipses_after_the_first(index):
    def run(lib):
        x = lib.arange(24.0).reshape(2, 3, 4).requires_grad_()
        y = x[index]
        (y * y).sum().backward()
        return y, x.grad
    same_as_torch(run)


@pytest.mark.parametrize("big", [False, True], ids=["small", "big"])
@pytest.mark.parametrize("op", ["mul", "div", "dropout", "add", "rsub", "mean"])
def test_second_backward_through_a_saved_number_fails_as_in_torch(op, big, monkeypatch):
    """torch saves ``x * 2``'s number as a tensor, freed by the first backward; ``x + 2``
    saves nothing, so its graph may be differentiated again."""
    if big:
        monkeypatch.setattr(ng.core.tape, "BIG", 1)
    make = {"mul": lambda lib, x: x * 2, "div": lambda lib, x: x / 4,
            "dropout": lambda lib, x: lib.nn.functional.dropout(x, 0.0),
            "add": lambda lib, x: x + 2, "rsub": lambda lib, x: 2 - x,
            "mean": lambda lib, x: x.mean()}[op]

    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = make(lib, x).sum()
        y.backward()
        y.backward()
        return x.grad
    same_as_torch(run)
