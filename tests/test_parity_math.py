"""Math ops held to torch 2.13 at their edges (NaN, infinities, signed zeros, empty dims, bad
arguments): the same values, dtypes, requires_grad and gradients, eager, through the big-node
path and in compiled replay, or the same exception type with torch's message."""

import math

import numpy as np
import pytest
from torch_oracle import outcome

import numbagrad as ng
from numbagrad.core import tape as tape_mod

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf


def _plain(v):
    if isinstance(v, (tuple, list)):
        return [_plain(u) for u in v]
    if hasattr(v, "detach"):
        # (force: torch's second derivative of a sign is a ZeroTensor)
        values = v.detach().numpy(force=True) if isinstance(v, torch.Tensor) else \
            v.detach().numpy()
        return ("tensor", list(v.shape), str(v.dtype).replace("torch.", ""),
                bool(v.requires_grad), np.asarray(values, np.float64))
    return v


def _agree(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_agree(u, w) for u, w in zip(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple) and a[:1] == b[:1] == ("tensor",):
        return a[:4] == b[:4] and np.allclose(a[4], b[4], rtol=1e-6, atol=1e-12, equal_nan=True)
    return a == b


def same_as_torch(fn):
    ours, theirs = outcome(ng, fn, _plain), outcome(torch, fn, _plain)
    assert _agree(ours, theirs), f"numbagrad: {ours}\ntorch:     {theirs}"
    return ours


@pytest.fixture(params=["small", "big"])
def path(request, monkeypatch):
    """Every case twice: nodes differentiated in the sweep, and every node a big one."""
    if request.param == "big":
        monkeypatch.setattr(tape_mod, "BIG", 0)
    return request.param


def grads(f, *data, dtype="float64", cot=None):
    """``fn(lib)`` for same_as_torch: f's value and the gradients of its inputs (None where
    torch leaves None), the value's sum differentiated, or ``cot`` given as its gradient."""
    def fn(lib):
        xs = [lib.tensor(d, dtype=getattr(lib, dtype), requires_grad=True) for d in data]
        y = f(lib, *xs)
        if cot is None:
            y.sum().backward()
        else:
            y.backward(lib.full(y.shape, cot, dtype=y.dtype))
        return [y] + [x.grad for x in xs]
    return fn


def replayed_grad(f, x):
    """f's gradient at ``x`` by compiled replay (traced on other values), with torch's."""
    compiled = ng.compile(ng.func.grad(lambda t: f(ng, t).sum()))
    compiled(x + 0.25)
    ours = np.asarray(compiled(x))
    xt = torch.tensor(x, requires_grad=True)
    f(torch, xt).sum().backward()
    return ours, xt.grad.numpy()


def finite_difference_check(f, x, eps=1e-6):
    """<grad f(x), v> against the central difference of f along a random v (float64)."""
    v = np.random.default_rng(0).standard_normal(x.shape)
    t = ng.tensor(x, requires_grad=True)
    f(ng, t).sum().backward()
    analytic = float(np.sum(t.grad.numpy() * v))

    def at(s):
        return float(f(ng, ng.tensor(x + s * v)).sum())
    numeric = (at(eps) - at(-eps)) / (2 * eps)
    assert abs(analytic - numeric) <= 1e-6 * (1 + abs(numeric)), (analytic, numeric)


def assert_same_array(ours, theirs):
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0, equal_nan=True)


# ---- floor, round: recorded, with a zero derivative ------------------------------------------
_ROUNDING = [2.5, 3.5, -0.5, -1.7, 0.0, NAN, INF, -INF, 1e300]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["floor", "round"])
def test_floor_and_round_require_grad_with_a_zero_gradient(name, dtype, path):
    same_as_torch(grads(lambda lib, x: getattr(x, name)() * x, _ROUNDING, dtype=dtype))
    same_as_torch(grads(lambda lib, x: getattr(lib, name)(x), _ROUNDING, dtype=dtype, cot=NAN))
    same_as_torch(grads(lambda lib, x: getattr(x, name)(), 2.5, dtype=dtype))
    same_as_torch(grads(lambda lib, x: getattr(x, name)(), np.zeros((2, 0)), dtype=dtype))
    same_as_torch(lambda lib: getattr(lib.tensor(2.5, requires_grad=True), name)().grad_fn.name())


@pytest.mark.parametrize("name", ["floor", "round"])
def test_floor_and_round_of_integers_and_bools(name):
    same_as_torch(lambda lib: getattr(lib.tensor([-3, 2], dtype=lib.int32), name)())
    same_as_torch(lambda lib: getattr(lib.tensor([True]), name)())


@pytest.mark.parametrize("name", ["floor", "round"])
def test_floor_and_round_in_compiled_replay_and_create_graph(name):
    def f(lib, x):
        return getattr(x, name)() * x + getattr(lib, name)(x * 3.0)
    x = np.array([2.4, 3.3, -0.4, 1.2, -1.7])  # no tie nearby: smooth for the difference
    ours, theirs = replayed_grad(f, x)
    assert_same_array(ours, theirs)
    finite_difference_check(f, x)
    same_as_torch(lambda lib: _double_grad(lib, f, x))


def _double_grad(lib, f, x):
    """f's gradient by a differentiable backward, and the gradient of its sum."""
    t = lib.tensor(x, requires_grad=True)
    (g,) = lib.autograd.grad(f(lib, t).sum(), t, create_graph=True)
    (h,) = lib.autograd.grad((g * g).sum(), t, allow_unused=True) if g.requires_grad else (None,)
    return g, h


# ---- pow ---------------------------------------------------------------------------------------
_BASES = [-INF, -0.0, 0.0, INF, NAN, -2.0, 4.0, 0.3, -1.0]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("e", [0.5, -0.5, -1.0, 2.0, 3.0, -2.0, 0.0, 1.0, 1.5, -1.5, 4.0])
def test_pow_by_a_number_is_torch_s_sqrt_rsqrt_products_or_pow(e, dtype, path):
    """x ** e: torch computes 0.5 and -0.5 as sqrt and rsqrt (-inf -> nan, -0. -> -0., -inf),
    3 and -2 as products, and the gradient's x ** (e - 1) the same way."""
    same_as_torch(grads(lambda lib, x: x ** e, _BASES, dtype=dtype))
    same_as_torch(grads(lambda lib, x: lib.pow(x, e), _BASES, dtype=dtype, cot=INF))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("e", [0.5, -0.5, 2.0, 0.0, 1.0, 1.5, -1.5, 2.5])
def test_pow_of_two_tensors_is_c_pow_and_its_gradients_carry_nan(e, dtype, path):
    """x ** t: C's pow, also in the base's gradient x ** (t - 1) (pow(-inf, 0.5) = inf); the
    exponent's gradient is the upstream gradient times 0 at a base of 0, so a NaN upstream
    stays NaN."""
    exps = [e] * len(_BASES)
    same_as_torch(grads(lambda lib, x, t: x ** t, _BASES, exps, dtype=dtype))
    for cot in (NAN, INF):
        same_as_torch(grads(lambda lib, x, t: lib.pow(x, t), _BASES, exps, dtype=dtype,
                            cot=cot))


def test_pow_reproducers():
    def exponent_grad_at_base_0(lib):
        x = lib.tensor(0.0, requires_grad=True)
        e = lib.tensor(1.0, requires_grad=True)
        (x ** e * NAN).backward()
        return x.grad, e.grad

    def base_grad_at_minus_inf(lib):
        x = lib.tensor([-INF], requires_grad=True)
        (x ** lib.tensor([1.5])).sum().backward()
        return x.grad

    same_as_torch(exponent_grad_at_base_0)
    same_as_torch(base_grad_at_minus_inf)
    same_as_torch(lambda lib: lib.tensor([-INF, -0.0]) ** -0.5)
    same_as_torch(grads(lambda lib, x: x ** 0.5, [-INF, -0.0]))


def test_number_to_a_tensor_power_exponent_gradient_carries_nan(path):
    same_as_torch(grads(lambda lib, t: 0.0 ** t, [0.5, 0.0, -1.0, NAN], cot=NAN))
    same_as_torch(grads(lambda lib, t: 2.0 ** t, [0.5, 0.0, -1.0, NAN, INF], cot=NAN))


@pytest.mark.parametrize("e", [0.5, 1.5, -0.5, 3.0, 4.0, -1.0])
def test_pow_replay_second_derivative_and_finite_differences(e):
    def f(lib, x):
        return x ** e + x ** lib.tensor(e - 0.5, dtype=x.dtype) + (e + 1.0) ** x

    x = np.array([0.5, 2.0, 3.0, 1.25])
    ours, theirs = replayed_grad(f, x)
    assert_same_array(ours, theirs)
    finite_difference_check(f, x)
    same_as_torch(lambda lib: _double_grad(lib, f, x))
    edge = np.array([-INF, -0.0, 0.0, INF, 4.0])
    ours, theirs = replayed_grad(lambda lib, x: x ** e, edge)
    assert_same_array(ours, theirs)


# ---- max/min/amax/amin over no elements ------------------------------------------------------
@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0,), (2, 0, 3)])
@pytest.mark.parametrize("dim", [None, 0, 1, -1, -2, 5])
def test_max_min_amax_amin_of_an_empty_dim_raise_torch_s_error(name, shape, dim):
    def fn(lib):
        x = lib.zeros(shape, requires_grad=True)
        out = getattr(x, name)() if dim is None else getattr(lib, name)(x, dim, keepdim=True)
        return list(out) if isinstance(out, tuple) else out
    same_as_torch(fn)


@pytest.mark.parametrize("name", ["amax", "amin"])
@pytest.mark.parametrize("dims", [(0, 1), (-1, 0), (1, 1), (0, 0), (1, -2), (), (1,), (5, 0)])
def test_amax_amin_check_an_empty_input_s_dims_in_order_as_given(name, dims):
    """One by one, before repeats are refused, each named as given (-1, not 0)."""
    for shape in [(0,), (0, 3), (3, 0)]:
        same_as_torch(lambda lib: getattr(lib, name)(lib.zeros(shape), dims))


# ---- norm ---------------------------------------------------------------------------------------
_NORM_DATA = [
    [[NAN, 1.0, -2.0], [0.0, 0.0, 0.0]],
    [[0.0, -0.0, 0.0], [3.0, -4.0, 0.5]],
    [[INF, 1.0, -INF], [2.0, -2.0, 1.0]],
    [[1.5, -0.25, 3.0], [-1.0, 2.0, 0.5]],
]
_NORM_PS = [1, 2, INF, -INF, 0.5, 1.5, 3.0, 2.5, -1.0, -0.5]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("p", _NORM_PS)
def test_norm_gradient_is_torch_s_at_nan_inf_and_a_zero_norm(p, dtype, path):
    """torch's norm_backward: sign(NaN) = 0 for p = 1, a zero norm zeroes g / norm ** (p - 1)
    (not g: an upstream NaN or inf stays), inf/-inf share the gradient among the extremes
    and the NaNs; -inf is min |x|."""
    for data in _NORM_DATA:
        for dim in (None, 1, (0, 1)):
            for cot in (1.0, NAN, INF):
                same_as_torch(grads(lambda lib, x: x.norm(p=p, dim=dim), data, dtype=dtype,
                                    cot=cot))


def test_norm_reproducers():
    def p1_at_nan(lib):
        x = lib.tensor([NAN, 1.0], requires_grad=True)
        x.norm(p=1).backward()
        return x.grad

    def zero_norm(lib):
        x = lib.zeros(2, requires_grad=True)
        x.norm().backward(lib.tensor(INF))
        return x.grad

    same_as_torch(lambda lib: lib.ones(1, 1, 1).norm(dim=(0, 1, 2)))
    same_as_torch(p1_at_nan)
    same_as_torch(zero_norm)


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(1, 1, 1).norm(p=2, dim=(0, 1, 2)),
    lambda lib: lib.ones(1, 1, 1).norm(p=None, dim=(0, 1, 2)),
    lambda lib: lib.ones(2, 2, 2).norm(dim=(0, 2)),
    lambda lib: lib.ones(2, 2, 2).norm(p="fro", dim=(0, 1, 1)),
    lambda lib: lib.ones(2, 2, 2).norm(p="nuc"),
    lambda lib: lib.ones(2).norm(p="nuc"),
    lambda lib: lib.ones(2, 2).norm(p="nuc", dim=(1, -1)),
    lambda lib: lib.ones(2, 2).norm(p="nuc", dim=(0, 5)),
    lambda lib: lib.ones(2, 2).norm(p="nuc", dim=0),
    lambda lib: lib.tensor([[1, 2], [3, 4]]).norm(p="nuc"),
    lambda lib: lib.ones(2, 2, dtype=lib.float64).norm(p="nuc", dtype=lib.float32),
    lambda lib: lib.ones(2, 2).norm(p="abc"),
    lambda lib: lib.ones(2, 3).norm(dim=()),
    lambda lib: lib.ones(2, 3).norm(p=1, dim=[]),
    lambda lib: lib.ones(2, 3).norm(dtype=lib.float64),
    lambda lib: lib.ones(2, 3, dtype=lib.float64).norm(dtype=lib.float32),
    lambda lib: lib.ones(2, 3).norm(dtype=lib.int64),
    lambda lib: lib.tensor([3, 4]).norm(dtype=lib.float64),
    lambda lib: lib.tensor([0.0, -1.0, 2.0]).norm(p=-INF),
    lambda lib: lib.tensor([0.0, 1.0, 2.0]).norm(p=0),
    lambda lib: lib.zeros(0).norm(p=INF),
    lambda lib: lib.zeros(0).norm(p=-1.5),
    lambda lib: lib.zeros(0).norm(p=0.5),
    lambda lib: lib.zeros(0, 3).norm(p=INF, dim=(1, -2)),
    lambda lib: lib.zeros(0, 3).norm(p=-INF, dim=1),
    lambda lib: lib.zeros(0, 3).norm(p=-1, dim=()),
])
def test_norm_front_end_follows_torch_norm(call):
    """torch.norm's dispatch: "fro" over at most 2 dims and numbers are vector norms (over
    every dim for None or ()), other strings matrix norms with their checks; dtype= computes
    in that dtype; p < 0 and inf have no value over an empty dim."""
    try:
        same_as_torch(call)
    except AssertionError:
        with pytest.raises(NotImplementedError, match="nuclear norm"):
            call(ng)  # the nuclear norm, past torch's checks: numbagrad does not compute it


@pytest.mark.parametrize("p", [1, 2, INF, -INF, 0.5, 1.5, 3.0, -1.0, 4.0])
def test_norm_second_derivative_replay_and_finite_differences(p):
    data = np.array([[1.5, -1.5, 3.0], [-1.0, 2.0, -0.5]])
    for dim in (None, 1, (0, 1)):
        def f(lib, x):
            return x.norm(p=p, dim=dim) * 1.5
        same_as_torch(lambda lib: _double_grad(lib, f, data))
        for edge in [data] + [np.array(d) for d in _NORM_DATA]:
            ours, theirs = replayed_grad(f, edge)
            assert_same_array(ours, theirs)
        if abs(p) != INF:  # smooth away from ties and zeros
            finite_difference_check(f, data)


def test_norm_p0_has_a_zero_gradient():
    """torch has no gradient for p = 0 (x.grad None); numbagrad gives zeros, not the NaN of a
    p-norm formula at p = 0."""
    x = ng.tensor([1.0, 0.0, -2.0], requires_grad=True)
    (x.norm(p=0) + x.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])


# ---- masked_fill -----------------------------------------------------------------------------
def _masked_fill_grads(xs, ms, value, tensor_value):
    def fn(lib):
        x = lib.tensor(xs, requires_grad=True)
        v = lib.tensor(value, dtype=lib.float64, requires_grad=True) if tensor_value else value
        y = x.masked_fill(lib.tensor(ms), v)
        (y * (lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape) + 1)).sum().backward()
        return [y, y.grad_fn.name(), x.grad] + ([v.grad] if tensor_value else [])
    return fn


@pytest.mark.parametrize("tensor_value", [False, True], ids=["number", "tensor"])
def test_masked_fill_broadcasts_to_the_mask_and_a_tensor_value_gets_a_gradient(
        tensor_value, path):
    """The out-of-place form broadcasts self to a bigger mask; a 0-d tensor value is an
    input (MaskedFillBackward1): its gradient is the sum over the filled positions."""
    for xs, ms in [([1.0, 2.0, 3.0], [True, False, True]), ([1.0, 2.0], [[True], [False]]),
                   (3.0, [[True], [False]]), ([[1.0, 2.0]], [True, True]), (2.0, True)]:
        same_as_torch(_masked_fill_grads(xs, ms, 2.5, tensor_value))
    same_as_torch(lambda lib: lib.ones(2).masked_fill(lib.tensor([True, False, True]), 0.0))
    same_as_torch(lambda lib: lib.ones(2).masked_fill_(lib.tensor([[True], [False]]), 0.0))


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor([1, 2]).masked_fill(lib.tensor([True, False]), NAN),
    lambda lib: lib.tensor([1, 2]).masked_fill(lib.tensor([True, False]), INF),
    lambda lib: lib.tensor([1, 2]).masked_fill(lib.tensor([True, False]), 2.7),
    lambda lib: lib.tensor([1, 2], dtype=lib.int32).masked_fill(lib.tensor([True, False]), 2**40),
    lambda lib: lib.tensor([1, 2], dtype=lib.int32).masked_fill(lib.tensor([True, False]),
                                                                lib.tensor(NAN)),
    lambda lib: lib.ones(2).masked_fill(lib.tensor([True, False]), 1e300),
    lambda lib: lib.ones(2).masked_fill(lib.tensor([True, False]), NAN),
    lambda lib: lib.tensor([True, False]).masked_fill(lib.tensor([True, False]), 1e300),
    lambda lib: lib.ones(2).masked_fill(lib.tensor([1, 0]), 0.0),
    lambda lib: lib.ones(2).masked_fill(lib.tensor([True, False]), lib.tensor([1.0])),
    lambda lib: lib.zeros(2, dtype=lib.int64).fill_(NAN),
])
def test_masked_fill_value_and_mask_checks(call):
    same_as_torch(call)


def test_masked_fill_of_a_string_is_a_type_error():
    for lib in (ng, torch):
        with pytest.raises(TypeError, match="masked_fill"):
            lib.ones(2).masked_fill(lib.tensor([True, False]), "a")


def test_masked_fill_tensor_value_in_compiled_replay_and_create_graph():
    def f(lib, x, v):
        y = x.masked_fill(lib.tensor([True, False, True]), v * 2.0)
        return (y * y * lib.tensor([1.0, 2.0, 3.0], dtype=x.dtype)).sum()

    x, v = np.array([1.0, 2.0, 3.0]), np.array(0.5)
    compiled = ng.compile(ng.func.grad(lambda a, b: f(ng, a, b), argnums=(0, 1)))
    compiled(x + 1.0, v + 1.0)
    ours = compiled(x, v)
    xt, vt = (torch.tensor(a, requires_grad=True) for a in (x, v))
    f(torch, xt, vt).backward()
    assert_same_array(ours[0], xt.grad.numpy())
    assert_same_array(ours[1], vt.grad.numpy())

    def second(lib):
        xs, vs = (lib.tensor(a, requires_grad=True) for a in (x, v))
        gx, gv = lib.autograd.grad(f(lib, xs, vs), (xs, vs), create_graph=True)
        return [gx, gv] + list(lib.autograd.grad((gx * gx).sum() + gv, (xs, vs)))
    same_as_torch(second)


# ---- where ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib: lib.where(lib.tensor([1.0, 0.0]), lib.ones(2), lib.zeros(2)),
    lambda lib: lib.where(lib.tensor(1.0, dtype=lib.float64), lib.ones(2), lib.zeros(2)),
    lambda lib: lib.where(lib.tensor([1, 0], dtype=lib.int32), lib.ones(2), lib.zeros(2)),
    lambda lib: lib.ones(2).where(lib.tensor([1.0, 0.0]), lib.zeros(2)),
    lambda lib: lib.where(lib.tensor([True, False]), 1, 0),
    lambda lib: lib.where(lib.tensor([True, False]), 1, 0.5),
    lambda lib: lib.where(lib.tensor([True, False]), True, False),
    lambda lib: lib.where(lib.tensor([True, False]), 1, True),
    lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1, 2], dtype=lib.int32), 2.5),
    lambda lib: lib.where(lib.tensor([True, False]), lib.tensor(1.5, dtype=lib.float64),
                          lib.ones(2)),
    lambda lib: lib.where(lib.tensor([True, False, True]), lib.ones(2), lib.zeros(2)),
    lambda lib: list(lib.where(lib.tensor([[1.0, 0.0], [0.0, 2.0]]))),
    lambda lib: list(lib.where(lib.tensor(True))),
    lambda lib: list(lib.where(lib.tensor(False))),
    lambda lib: list(lib.where(lib.zeros(0, 2))),
])
def test_where_condition_dtype_number_operands_and_the_one_argument_form(call):
    same_as_torch(call)


@pytest.mark.parametrize("condition", [[True, False], True], ids=["list", "bool"])
def test_where_of_a_condition_that_is_no_tensor_is_a_type_error(condition):
    for lib in (ng, torch):
        with pytest.raises(TypeError, match="where"):
            lib.where(condition, lib.ones(2), lib.zeros(2))
    with pytest.raises(TypeError, match="where"):
        ng.where(ng.tensor([True, False]), ng.ones(2))
