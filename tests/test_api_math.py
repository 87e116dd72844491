"""The pointwise math API against torch: values at special points (NaN, inf, 0, the ends of
the domains), dtypes, grad_fn names, gradients, errors, the comparisons and logical
functions, the in-place forms. (tests/test_ops.py runs the table's generic checks.)"""

import functools

import numpy as np
import pytest
import torch_oracle
from torch_oracle import same_type_as_torch

import numbagrad as ng

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -3.5, 1e-300, 700.0]


# torch_oracle's comparison of outcomes (values, or the error's type and message), NaN
# equal to NaN
same_as_torch = functools.partial(torch_oracle.same_as_torch, nan_equal=True)


def _arrays(v):
    return v.detach().numpy() if hasattr(v, "detach") else np.asarray(v)


def _same(ours, theirs, rtol=1e-12):
    if isinstance(theirs, (bool, int, float)):
        assert type(ours) is type(theirs) and (ours == theirs or ours != ours)
        return
    assert str(ours.dtype).replace("numbagrad.", "torch.") == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    a, b = _arrays(ours), _arrays(theirs)
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-300, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


def check(fn, *values, dtype="float64", grad=True, rtol=1e-12, grad_rtol=1e-10):
    """``fn(lib, *tensors)`` on both libraries: value, dtype, grad_fn name, and (float
    inputs, ``grad``) the gradients of sum(out * w)."""
    results = {}
    for lib in (ng, torch):
        xs = [lib.tensor(v, dtype=getattr(lib, dtype)) for v in values]
        if grad:
            for x in xs:
                x.requires_grad_(True)
        out = fn(lib, *xs)
        grads = None
        if grad and out.requires_grad:
            w = np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))
            (out * lib.tensor(w, dtype=out.dtype)).sum().backward()
            grads = [None if x.grad is None else (x.grad + 0).numpy() for x in xs]
        results[lib] = (out, grads)
    (ours, our_grads), (theirs, their_grads) = results[ng], results[torch]
    _same(ours, theirs, rtol)
    name = None if theirs.grad_fn is None else theirs.grad_fn.name()
    assert (None if ours.grad_fn is None else ours.grad_fn.name()) == name
    if their_grads is not None:
        for a, b in zip(our_grads, their_grads):
            np.testing.assert_allclose(a, b, rtol=grad_rtol, atol=1e-300, equal_nan=True)
    return ours


UNARY = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "exp2", "log2",
         "log10", "erfc", "reciprocal", "sgn", "ceil", "trunc", "frac", "arcsin", "arctanh"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_at_special_points(name):
    """Values (float64) at NaN, infinities, signed zeros, the domain edges, and gradients
    where torch's are finite."""
    check(lambda lib, x: getattr(lib, name)(x), SPECIAL)
    check(lambda lib, x: getattr(x, name)(), [0.25, -0.75, 1.5], grad=False)


@pytest.mark.parametrize("name", ["asin", "log10", "sinh", "reciprocal", "ceil", "frac"])
def test_unary_float32_and_integers(name):
    check(lambda lib, x: getattr(lib, name)(x), [0.25, -0.75, 1.5, 3.0], dtype="float32",
          rtol=2e-7, grad_rtol=2e-6)
    same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([1, -2, 3])), decimals=6)


def test_logit_with_and_without_eps():
    pts = [NAN, -0.5, 0.0, 0.1, 0.5, 0.95, 1.0, 1.5]
    check(lambda lib, x: lib.logit(x), pts)
    check(lambda lib, x: lib.logit(x, eps=0.2), pts[1:])
    check(lambda lib, x: x.logit(1e-6), pts[1:])
    # with eps, torch's gradient at NaN is 0 in its vectorized loop and NaN in its scalar
    # one, which takes the elements a vector does not fill (how many depends on the CPU's
    # vector width): numbagrad gives the vectorized loop's 0 everywhere
    x = ng.tensor([NAN] * 3, dtype=ng.float64, requires_grad=True)
    ng.logit(x, 0.2).sum().backward()
    assert x.grad.tolist() == [0.0] * 3


def test_round_with_decimals():
    pts = [1.2345, -2.5, 0.125, 1234.5678, NAN, INF, -0.0]
    for d in (0, 2, -1, -2):
        check(lambda lib, x: lib.round(x, decimals=d), pts)
    check(lambda lib, x: x.round(decimals=1), pts)
    # float32: torch's steps round to float32 each (x * 100 first), and so do ours
    grid = np.round(np.random.default_rng(0).uniform(-100, 100, 2000), 3)
    for d in (1, 2, -1):
        check(lambda lib, x: lib.round(x, decimals=d), grid, dtype="float32", rtol=0)
    check(lambda lib, x: lib.round(x), pts)  # RoundBackward0
    same_as_torch(lambda lib: lib.round(lib.tensor([1, 2]), decimals=1))


def test_nan_to_num():
    pts = [NAN, INF, -INF, 1.5, -2.0]
    check(lambda lib, x: lib.nan_to_num(x), pts)
    check(lambda lib, x: lib.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0), pts)
    check(lambda lib, x: x.nan_to_num(posinf=7.0), pts, dtype="float32")
    same_as_torch(lambda lib: lib.nan_to_num(lib.tensor([1, 2])))


def test_square_sgn_and_integer_rounding_keep_integer_dtypes():
    for name in ("square", "sgn", "ceil", "trunc", "fix"):
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([-3, 0, 4])))
    check(lambda lib, x: lib.square(x), [1.5, -2.0])  # PowBackward0
    same_as_torch(lambda lib: lib.frac(lib.tensor([1, 2])))
    same_as_torch(lambda lib: lib.ceil(lib.tensor([True])))
    same_as_torch(lambda lib: lib.asin(1.0))


BINARY = ["atan2", "arctan2", "hypot", "fmod", "remainder", "logaddexp", "logaddexp2", "xlogy",
          "fmax", "fmin"]
LEFT = [NAN, 1.0, INF, -INF, 0.0, 0.0, -0.0, 2.5, -2.5, 7.0, -7.0, 1.0, 3.0, -INF]
RIGHT = [1.0, NAN, 2.0, 3.0, 0.0, -1.0, 2.0, -1.5, 1.5, 2.0, 2.0, 1.0, 3.0, -INF]


@pytest.mark.parametrize("name", BINARY)
def test_binary_at_special_points(name):
    def grads_finite(lib, a, b):
        return getattr(lib, name)(a, b)
    check(grads_finite, LEFT, RIGHT)


@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcasting_float32_and_integers(name):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.2, 2, (2, 3)), rng.uniform(0.2, 2, (3,))
    if name in ("atan2", "fmod", "xlogy", "fmax"):  # (tests/test_ops.py runs them all)
        check(lambda lib, x, y: getattr(lib, name)(x, y), a, b, dtype="float32", rtol=2e-6,
              grad_rtol=2e-5)
    same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([5, -7, 2]), lib.tensor([3, 2, 2])),
                  decimals=6)
    same_as_torch(lambda lib: getattr(lib, name)(lib.ones(2, 3), lib.ones(4)))


def test_number_operands():
    pts = [2.5, -2.5, 7.0, 0.0, -1.0]
    check(lambda lib, x: lib.fmod(x, 1.5), pts)  # FmodBackward0
    check(lambda lib, x: lib.remainder(x, -1.5), pts)  # RemainderBackward0
    check(lambda lib, x: x.fmod(2), pts, dtype="float32", rtol=1e-7)
    check(lambda lib, x: lib.xlogy(x, 2.0), pts)  # XlogyBackward2
    check(lambda lib, x: lib.xlogy(x, 0.0), pts)
    check(lambda lib, x: lib.xlogy(3.0, x), [0.5, 2.0, 0.0])  # XlogyBackward1
    check(lambda lib, x: lib.remainder(5.0, x), [2.0, -3.0], grad=False)
    for name in ("fmod", "remainder", "floor_divide"):
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([5, -7]), 3))
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([5, -7]), 0))
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([5, -7]), 2.5))
    same_as_torch(lambda lib: lib.atan2(lib.ones(2), 2))
    same_as_torch(lambda lib: lib.fmax(lib.ones(2), 2.0))


def test_float_power():
    check(lambda lib, x, y: lib.float_power(x, y), [1.5, 2.0], [2.0, -0.5], dtype="float32")
    check(lambda lib, x: lib.float_power(x, 2), [1.5, -2.0], dtype="float32")
    check(lambda lib, x: lib.float_power(2, x), [1.5, -2.0])
    check(lambda lib, x: x.float_power(3), [1.5, -2.0])
    same_as_torch(lambda lib: lib.float_power(2, 3))
    same_as_torch(lambda lib: lib.float_power(lib.tensor([1, 2]), 2))


def test_floor_divide_values():
    same_as_torch(lambda lib: lib.floor_divide(lib.tensor([5.0, -7.0, 1.0]),
                                               lib.tensor([2.0, 2.0, 0.0])))
    same_as_torch(lambda lib: lib.tensor([5, -7]).floor_divide(lib.tensor([2, 2])))


def test_lerp_addcmul_addcdiv():
    rng = np.random.default_rng(1)
    a, b, w = rng.normal(size=(2, 3)), rng.normal(size=(3,)), rng.uniform(size=(2, 1))
    for weight in (0.25, 0.75, -1.0, 2.0):
        check(lambda lib, x, y: lib.lerp(x, y, weight), a, b)
    check(lambda lib, x, y, z: lib.lerp(x, y, z), a, b, w)
    check(lambda lib, x, y, z: x.lerp(y, z), a, b, w, dtype="float32", rtol=1e-6,
          grad_rtol=1e-6)
    for value in (1, -0.5):
        check(lambda lib, x, y, z: lib.addcmul(x, y, z, value=value), a, b, w)
        check(lambda lib, x, y, z: x.addcdiv(y, z, value=value), a, b, w + 0.5)
    same_as_torch(lambda lib: lib.addcmul(lib.tensor([1, 2]), lib.tensor([3, 4]),
                                          lib.tensor([5, 6]), value=2))
    same_as_torch(lambda lib: lib.addcdiv(lib.tensor([1, 2]), lib.tensor([3, 4]),
                                          lib.tensor([5, 6])))
    same_as_torch(lambda lib: lib.lerp(lib.ones(2), lib.ones(2, dtype=lib.float64), 0.5))
    same_as_torch(lambda lib: lib.lerp(lib.tensor([1, 2]), lib.tensor([3, 4]), 0.5))


def test_clamps_with_tensor_and_number_bounds():
    x = [NAN, -2.0, -0.5, 0.0, 0.5, 2.0]
    lo = [0.0, 0.0, 0.0, NAN, -1.0, -1.0]
    hi = [1.0, 1.0, 1.0, 1.0, NAN, 1.5]
    check(lambda lib, a, b: lib.clamp_min(a, b), x, lo)  # ClampMinBackward1
    check(lambda lib, a, b: a.clamp_max(b), x, hi)  # ClampMaxBackward1
    check(lambda lib, a: lib.clamp_min(a, 0.25), x)  # ClampMinBackward0
    check(lambda lib, a: a.clamp_max(-0.25), x)
    check(lambda lib, a, b: lib.clamp(a, min=b), x, lo)  # ClampBackward0
    check(lambda lib, a, b: lib.clamp(a, max=b), x, hi)
    check(lambda lib, a, b, c: lib.clamp(a, b, c), x[1:], lo[1:3] + [-1.0, -1.0, 0.0],
          hi[1:4] + [2.0, 1.0])
    same_type_as_torch(lambda lib: lib.ones(2).clamp(lib.zeros(2), 1.0))
    same_as_torch(lambda lib: lib.tensor([1.0, 2.0]).clamp_(lib.tensor([1.5, 0.0]),
                                                            lib.tensor([3.0, 1.0])))
    same_as_torch(lambda lib: lib.tensor([1.0, 2.0]).clip_(max=lib.tensor([1.5, 0.0])))
    same_as_torch(lambda lib: lib.clamp_min(lib.tensor([1, 5]), 2))
    same_as_torch(lambda lib: lib.clamp_min(lib.tensor([1, 5]), 2.5))
    same_as_torch(lambda lib: lib.clamp(lib.ones(3), lib.zeros(2)))


COMPARE = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
           "less_equal", "not_equal"]


@pytest.mark.parametrize("name", COMPARE)
def test_comparisons(name):
    a = [NAN, 1.0, 2.0, -INF, 0.1]
    same_as_torch(lambda lib: getattr(lib, name)(lib.tensor(a), lib.tensor([1.0])))
    same_as_torch(lambda lib: getattr(lib, name)(lib.tensor(a), 0.1))
    same_as_torch(lambda lib: getattr(lib.tensor([1, 2, 3]), name)(2.5))
    same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([0.1], dtype=lib.float32),
                                                 lib.tensor(0.1, dtype=lib.float64)))
    same_as_torch(lambda lib: getattr(lib, name)(lib.ones(2), lib.ones(3)))


def test_logical_and_bitwise():
    a, b = [0.0, 1.0, NAN, -2.0], [1.0, 0.0, 0.0, 3.0]
    for name in ("logical_and", "logical_or", "logical_xor"):
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor(a), lib.tensor(b)))
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor(a), 3))
    same_as_torch(lambda lib: lib.logical_not(lib.tensor(a)))
    same_as_torch(lambda lib: lib.tensor([1, 0]).logical_not())
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([5, 6]), lib.tensor([3, -1])))
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([True, False]),
                                                     lib.tensor([True, True])))
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([5, 6]), 3))
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([5.0]), lib.tensor([3.0])))
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([5]), 3.5))
    same_as_torch(lambda lib: lib.bitwise_not(lib.tensor([5, -1])))
    same_as_torch(lambda lib: lib.tensor([True, False]).bitwise_not())
    same_as_torch(lambda lib: lib.bitwise_not(lib.tensor([1.0])))
    ints, bools = [5, 6, -3], [True, False, True]
    same_as_torch(lambda lib: [lib.tensor(ints) & 3, 3 | lib.tensor(ints),
                               lib.tensor(ints) ^ lib.tensor(ints[::-1]), ~lib.tensor(ints)])
    same_as_torch(lambda lib: [lib.tensor(bools) & lib.tensor(bools[::-1]), ~lib.tensor(bools),
                               (lib.tensor(ints) > 0) | (lib.tensor(ints) < -1), True ^
                               lib.tensor(bools)])
    same_as_torch(lambda lib: lib.ones(2) & lib.ones(2))


def test_is_tests():
    v = [NAN, INF, -INF, 0.0, 1.0]
    for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf"):
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor(v)))
        same_as_torch(lambda lib: getattr(lib, name)(lib.tensor([1, 2])))
    same_as_torch(lambda lib: lib.tensor(v).isinf())


def test_isclose_allclose_equal():
    a = [1.0, NAN, INF, 1.0 + 1e-6, 1.0, -INF, 0.0]
    b = [1.0, NAN, INF, 1.0, 1.1, INF, 1e-9]
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.2}, {"atol": 0.0, "rtol": 0.0}):
        same_as_torch(lambda lib: lib.isclose(lib.tensor(a), lib.tensor(b), **kw))
        same_as_torch(lambda lib: lib.tensor(a, dtype=lib.float32).isclose(
            lib.tensor(b, dtype=lib.float32), **kw))
        same_as_torch(lambda lib: lib.allclose(lib.tensor(a), lib.tensor(b), **kw))
        same_as_torch(lambda lib: lib.tensor(a[:1]).allclose(lib.tensor(b[:1]), **kw))
    same_as_torch(lambda lib: lib.isclose(lib.tensor([1, 2]), lib.tensor([1, 3]), rtol=0.5))
    same_as_torch(lambda lib: lib.isclose(lib.tensor([1, 2]), lib.tensor([1.0, 2.0])))
    same_as_torch(lambda lib: lib.isclose(lib.ones(2), lib.ones(2), rtol=-1))
    same_as_torch(lambda lib: lib.isclose(lib.ones(2), 1.0))
    same_as_torch(lambda lib: lib.equal(lib.tensor([1, 2]), lib.tensor([1.0, 2.0])))
    same_as_torch(lambda lib: lib.equal(lib.tensor([1, 2]), lib.tensor([1, 2, 3])))
    same_as_torch(lambda lib: lib.tensor([1.0, NAN]).equal(lib.tensor([1.0, NAN])))


def test_errors_match_torch():
    same_as_torch(lambda lib: lib.hypot(lib.tensor([1, 2]), lib.tensor([1, 2])))
    same_as_torch(lambda lib: lib.logaddexp(lib.tensor([1]), lib.tensor([1])))
    same_as_torch(lambda lib: lib.atan2(lib.ones(2, 3), lib.ones(2)))
    same_type_as_torch(lambda lib: lib.clamp_min(lib.ones(2)))
    same_type_as_torch(lambda lib: lib.fmod(5.0, lib.ones(2)))
    same_as_torch(lambda lib: lib.sinh(1.0))


def test_second_derivatives_of_the_new_ops():
    rng = np.random.default_rng(3)
    a = ng.tensor(rng.uniform(0.2, 0.8, 4), dtype=ng.float64, requires_grad=True)
    b = ng.tensor(rng.uniform(0.5, 2.0, 4), dtype=ng.float64, requires_grad=True)
    for fn in (lambda x, y: ng.atan2(x, y), lambda x, y: ng.xlogy(x, y),
               lambda x, y: ng.logaddexp2(x, y), lambda x, y: ng.fmod(x, y),
               lambda x, y: ng.logit(x) * ng.sinh(y), lambda x, y: ng.lerp(x, y, x)):
        assert ng.autograd.gradcheck(fn, (a, b))
        assert ng.autograd.gradgradcheck(fn, (a, b))


def test_in_place_forms():
    def run(lib):
        x = lib.tensor([0.25, -0.5, 0.75], dtype=lib.float64, requires_grad=True)
        one = lib.ones(3, dtype=lib.float64)
        outs = [(x * 1.0).asin_(), (x * 2.0).clamp_min_(-0.5), (x * 1.0).addcmul_(x, x, value=0.5),
                (x * 1.0).lerp_(one, 0.25), (x * 3.0).trunc_(), (x * 1.0).sinh_(),
                (x * 1.0).square_(), (x + 1.0).reciprocal_(), (x * 1.0).addcdiv_(x, one + x),
                (x * 1.0).atan2_(one), (x * 1.0).hypot_(one), (x + 1.0).log2_()]
        total = sum(o.sum() for o in outs)
        total.backward()
        return [*outs, x.grad, [o.grad_fn.name() for o in outs], [o._version for o in outs]]
    same_as_torch(run)
    same_as_torch(lambda lib: lib.sin_(lib.tensor([0.5, 1.0])))
    same_as_torch(lambda lib: lib.round_(lib.tensor([0.55, 1.25]), decimals=1))
    same_as_torch(lambda lib: lib.tensor([1, 2]).sqrt_())
    same_as_torch(lambda lib: lib.tensor([1.0, 2.0]).float_power_(2))
    same_as_torch(lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float64).float_power_(2))
    same_as_torch(lambda lib: lib.tensor([1.0], requires_grad=True).log10_())
    same_as_torch(lambda lib: lib.tensor([5, 6]).bitwise_and_(lib.tensor([3, 3])))
    same_as_torch(lambda lib: lib.tensor([5.0, 0.0]).logical_not_())
