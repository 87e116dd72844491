"""Random sampling: randperm, multinomial, bernoulli, normal, poisson, randint_like, the RNG
state functions, and the in-place fills (uniform_, normal_, ...).

The draws follow torch's CPU kernels on torch's mt19937 stream (core/torch_rng), so a seed
gives torch's numbers; shapes, dtypes, argument checks and errors follow torch. Where torch
records a node
(a sample from a tensor that requires grad), the node is torch's and its gradient is zero, as
torch's is: these samplers are not reparameterised."""

import operator
import warnings

import numpy as np

from . import dtypes
from .core import grad_mode, torch_rng
from .engine.record import record, shape_error_broadcast
from .engine.registry import Sample, defop
from .factories import Generator, _dt, _engine, _finish, _shape, default_generator
from .tensor import Tensor, _make


def _zero_grad_op(name, grad_fn, arity, call):
    """A sampling node: its derivative is zero for every input (torch's formula)."""
    return defop(name, grad_fn, arity, grads=("0.0 * g",) * arity,
                 forward=lambda *xs: np.zeros(np.broadcast_shapes(*map(np.shape, xs))),
                 samples=[Sample(s, call=call) for s in
                          ([((),), ((4,),), ((2, 3),)] if arity == 1 else
                           [((), ()), ((2, 3), (3,))])])


# sample calls whose value is fixed (zero probability, zero rate, zero spread), so the
# generated tests can compare values with torch and check the (zero) gradients numerically
BERNOULLI = _zero_grad_op("bernoulli", "BernoulliBackward0", 1, "lib.bernoulli(x0 * 0.0)")
POISSON = _zero_grad_op("poisson", "PoissonBackward0", 1, "lib.poisson(x0 * 0.0)")
NORMAL_T_F = _zero_grad_op("normal_tensor_float", "NormalBackward1", 1,
                           "lib.normal(x0 * 0.0, 0.0)")
NORMAL_F_T = _zero_grad_op("normal_float_tensor", "NormalBackward2", 1,
                           "lib.normal(0.0, x0 * 0.0)")
NORMAL_T_T = _zero_grad_op("normal_tensor_tensor", "NormalBackward3", 2,
                           "lib.normal(x0 * 0.0, x1 * 0.0)")
# the in-place fills' nodes (the input is the tensor overwritten)
UNIFORM_ = _zero_grad_op("uniform_", "UniformBackward0", 1, "(x0 * 1.0).uniform_(0.0, 0.0)")
NORMAL_ = _zero_grad_op("normal_", "NormalBackward0", 1, "(x0 * 1.0).normal_(0.0, 0.0)")
BERNOULLI_P_ = _zero_grad_op("bernoulli_tensor_", "BernoulliBackward1", 2,
                             "(x0 * 1.0).bernoulli_(x1 * 0.0)")
BERNOULLI_F_ = _zero_grad_op("bernoulli_float_", "BernoulliBackward2", 1,
                             "(x0 * 1.0).bernoulli_(0.0)")
EXPONENTIAL_ = _zero_grad_op("exponential_", "ExponentialBackward0", 1,
                             "(x0 * 1.0).exponential_(float('inf'))")
RANDOM_FROM_TO_ = _zero_grad_op("random_from_to_", "RandomBackward0", 1,
                                "(x0 * 1.0).random_(0, 1)")
RANDOM_TO_ = _zero_grad_op("random_to_", "RandomBackward1", 1, "(x0 * 1.0).random_(1)")
RANDOM_ = _zero_grad_op("random_", "RandomBackward2", 1, "(x0 * 0.0).random_() * 0.0")


def _value(draw, dtype):
    """A draw as an op value in ``dtype``: 0-d results as NumPy scalars, as the ops give."""
    a = np.asarray(draw).astype(dtype, copy=False)
    return a[()] if a.ndim == 0 else a


def _float_input(name, t, kernel):
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{t.dtype.scalar_name}\'')


# ---- functions ------------------------------------------------------------------------------
def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of the integers 0 to ``n - 1``.

    Same as ``torch.randperm``.
    """
    if not hasattr(n, "__index__") or isinstance(n, bool):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    n = operator.index(n)
    _shape((n,))
    dt = dtypes.as_dtype(dtype) or dtypes.int64
    if dt is dtypes.bool_:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if not dt.is_floating_point and n > 0 and n - 1 > np.iinfo(dt.np).max:
        raise RuntimeError(f"value cannot be converted to type {dt.name}_t without overflow")
    if requires_grad and not dt.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return _finish(torch_rng.randperm(_engine(generator), n).astype(dt.np), requires_grad,
                   device)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,  # noqa: A002
                 requires_grad=False, memory_format=None):
    """A tensor of ``input``'s shape of integers drawn uniformly from [low, high).

    Same as ``torch.randint_like``.
    """
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    dt = dtypes.as_dtype(dtype) or input.dtype
    draw = torch_rng.random_from_to(_engine(generator), input.numel(), int(low), int(high))
    return _finish(draw.astype(dt.np).reshape(tuple(input.shape)), requires_grad, device)


def multinomial(input, num_samples, replacement=False, *, generator=None):  # noqa: A002
    """``num_samples`` indices drawn from the categories weighted by each row of ``input``.

    Same as ``torch.multinomial``.
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype.scalar_name}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    probs = np.asarray(input._data, np.float64).reshape(-1, input.shape[-1])
    if not replacement and num_samples > probs.shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if not np.all(np.isfinite(probs)) or np.any(probs < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    sums = probs.sum(axis=1)
    if np.any(sums <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    eng = _engine(generator)
    dt = input._data.dtype
    out = np.empty((probs.shape[0], num_samples), np.int64)
    if not replacement or num_samples == 1:
        # torch's fast path: argmax / top-k of p / q with q ~ Exp(1) drawn for all rows at
        # once, in the input's dtype
        w = np.asarray(input._data).reshape(probs.shape)
        q = torch_rng.exponential(eng, w.size, 1.0).astype(dt).reshape(w.shape)
        keys = w / q
        out[:] = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
        return _make(out.reshape(tuple(input.shape[:-1]) + (num_samples,)))
    rows = np.asarray(input._data).reshape(probs.shape)
    for row in range(probs.shape[0]):
        # with replacement: a double uniform per sample; the first category whose
        # normalized cumulative weight (in the input's dtype, the last set to 1) reaches it
        cdf = np.cumsum(rows[row], dtype=dt)
        cdf = (cdf / cdf[-1]).astype(np.float64)
        cdf[-1] = 1.0
        u = torch_rng.uniform(eng, num_samples, np.float64)
        out[row] = np.searchsorted(cdf, u, side="left")
    return _make(out.reshape(tuple(input.shape[:-1]) + (num_samples,)))


def bernoulli(input, p=None, *, generator=None, out=None):  # noqa: A002
    """0s and 1s drawn with the probabilities in ``input`` (or ``p``), in ``input``'s dtype.

    Same as ``torch.bernoulli``.
    """
    _no_out(out, "bernoulli")
    _float_input("bernoulli", input, "bernoulli_tensor_cpu_p_")
    eng = _engine(generator)
    if p is not None:  # a constant probability: torch records no derivative for this form
        _check_probability(p)
        draw = torch_rng.bernoulli_scalar(eng, input.numel(), p)
        return _make(draw.astype(input._data.dtype).reshape(tuple(input.shape)))
    probs = np.asarray(input._data)
    if not np.all((probs >= 0) & (probs <= 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    draw = _value(torch_rng.bernoulli_tensor(eng, probs), probs.dtype)
    return record(BERNOULLI, draw, (input,))


def poisson(input, generator=None):  # noqa: A002
    """Counts drawn from Poisson distributions with the rates in ``input``.

    Same as ``torch.poisson``.
    """
    _float_input("poisson", input, "poisson_cpu")
    rates = np.asarray(input._data)
    if np.any(rates < 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    draw = _value(torch_rng.poisson(_engine(generator), rates), rates.dtype)
    return record(POISSON, draw, (input,))


def normal(mean, std=None, size=None, *, generator=None, out=None, dtype=None, device=None,
           requires_grad=False, pin_memory=False):
    """Numbers drawn from normal distributions of ``mean`` and ``std`` (tensors or numbers).

    Same as ``torch.normal``.
    """
    _no_out(out, "normal")
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (mean_t or std_t):
        if size is None:
            raise TypeError(f"normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}), but expected a "
                            "Tensor mean or std, or a size")
        std = 1.0 if std is None else std
        _check_std(std)
        shape = _shape((size,))
        draw = torch_rng.normal(_engine(generator), int(np.prod(shape)), _dt(dtype),
                                float(mean), float(std))
        return _finish(draw.reshape(shape), requires_grad, device)
    if std is None:
        std = 1.0
    eng = _engine(generator)
    if mean_t and std_t:
        for t in (mean, std):
            _float_input("normal", t, "normal_kernel_cpu")
        s = np.asarray(std._data)
        if np.any(s < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = _normal_shape(mean, std)
        dt = np.result_type(mean._data, std._data)
        # torch: output.normal_(0, 1), then mul_(std), add_(mean), in the output's dtype
        z = _normal01(eng, shape, dt)
        draw = _value(z * s.astype(dt) + np.asarray(mean._data).astype(dt), dt)
        return record(NORMAL_T_T, draw, (mean, std))
    if mean_t:
        _float_input("normal", mean, "normal_kernel_cpu")
        _check_std(std)
        m = np.asarray(mean._data)
        # torch: output.normal_(0, std), then add_(mean)
        z = torch_rng.normal(eng, m.size, m.dtype, 0.0, float(std)).reshape(m.shape)
        draw = _value(z + m, m.dtype)
        return record(NORMAL_T_F, draw, (mean,))
    _float_input("normal", std, "normal_kernel_cpu")
    s = np.asarray(std._data)
    if np.any(s < 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    z = _normal01(eng, s.shape, s.dtype)
    draw = _value(z * s + s.dtype.type(mean), s.dtype)
    return record(NORMAL_F_T, draw, (std,))


def _normal01(eng, shape, dt):
    return torch_rng.normal(eng, int(np.prod(shape)), dt).reshape(shape)


def _normal_shape(mean, std):
    try:
        return np.broadcast_shapes(tuple(mean.shape), tuple(std.shape))
    except ValueError:
        raise shape_error_broadcast(tuple(mean.shape), tuple(std.shape)) from None


def _check_std(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _check_probability(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"numbagrad: {name}(out=...) is not supported; assign the "
                                  "result instead")


# ---- the generator's state ------------------------------------------------------------------
def seed():
    """Seed the default generator from the system's entropy; returns the seed."""
    return default_generator().seed()


def initial_seed():
    """The seed the default random generator started from.

    Same as ``torch.initial_seed``.
    """
    return default_generator().initial_seed()


def get_rng_state():
    """The state of the default random generator, to give back to ``set_rng_state``.

    Same as ``torch.get_rng_state``.
    """
    return default_generator().get_state()


def set_rng_state(new_state):
    """Restore the default random generator to a state from ``get_rng_state``.

    Same as ``torch.set_rng_state``.
    """
    default_generator().set_state(new_state)


# ---- in-place fills: each checks its arguments, draws, and returns the ``compute(self)`` that
# _methods' in-place machinery runs (leaf check, write, version bump, rebasing) ----------------
def _fill(self, op, draw, inputs=()):
    """The new value ``draw`` (an array of self's shape) as an op result: a tensor that
    requires grad gets torch's sampling node (zero gradient)."""
    def compute(s):
        value = np.asarray(draw, s._data.dtype)
        value = value[()] if value.ndim == 0 else value
        # (geometric_, cauchy_ and log_normal_ record no node: op is None)
        if op is not None and grad_mode.state.enabled and any(
                t._requires_grad for t in (s, *inputs)):
            return record(op, value, (s, *inputs))
        return _make(value)
    return compute


def _layout(self):
    """(shape, strides, C-contiguous) of the array a fill writes into."""
    arr = np.asarray(self._data)
    return tuple(arr.shape), arr.strides, arr.flags.c_contiguous


def _placed(self, values):
    """Draws made in torch's fill order (memory order), arranged in self's logical order."""
    shape, strides, _ = _layout(self)
    return torch_rng.place(np.asarray(values), shape, strides)


def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    """Fill this tensor with numbers drawn uniformly from [from_, to), in place.

    Same as ``torch.Tensor.uniform_``.
    """
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                  f"'{self.dtype.scalar_name}'")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    draw = torch_rng.uniform(_engine(generator), self.numel(), self._data.dtype, from_, to)
    return _fill(self, UNIFORM_, _placed(self, draw))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill this tensor with numbers drawn from the normal distribution (mean, std), in place.

    Same as ``torch.Tensor.normal_``.
    """
    _float_input("normal_", self, "normal_kernel_cpu")
    _check_std(std)
    contiguous = _layout(self)[2]
    draw = torch_rng.normal(_engine(generator), self.numel(), self._data.dtype, mean, std,
                            contiguous)
    return _fill(self, NORMAL_, _placed(self, draw))


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill this tensor with 1s drawn with probability ``p`` (a number or tensor), else 0s.

    Same as ``torch.Tensor.bernoulli_``.
    """
    eng = _engine(generator)
    if isinstance(p, Tensor):
        try:
            probs = np.broadcast_to(np.asarray(p._data), tuple(self.shape))
        except ValueError:
            raise RuntimeError(_expand_error(self.shape, p.shape)) from None
        return _fill(self, BERNOULLI_P_, torch_rng.bernoulli_tensor(eng, probs), (p,))
    _check_probability(p)
    return _fill(self, BERNOULLI_F_,
                 _placed(self, torch_rng.bernoulli_scalar(eng, self.numel(), p)))


def _expand_error(target, given):
    for k in range(1, len(given) + 1):
        if given[-k] not in (1, target[-k] if k <= len(target) else -1):
            dim = len(target) - k
            return (f"The expanded size of the tensor ({target[-k]}) must match the existing "
                    f"size ({given[-k]}) at non-singleton dimension {dim}.  Target sizes: "
                    f"{list(target)}.  Tensor sizes: {list(given)}")
    return f"expand: cannot expand {list(given)} to {list(target)}"


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill this tensor with numbers drawn from the exponential distribution of rate ``lambd``.

    Same as ``torch.Tensor.exponential_``.
    """
    if not self.dtype.is_floating_point:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{self.dtype.scalar_name}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    draw = torch_rng.exponential(_engine(generator), self.numel(), lambd)
    return _fill(self, EXPONENTIAL_, _placed(self, draw.astype(self._data.dtype)))


def random_(self, from_=None, to=None, *, generator=None):
    """Integers: in [from, to), [0, to) with one bound, or over the dtype's range (up to
    2**mantissa for floats) with none."""
    if from_ is not None and to is None:
        from_, to, op = 0, from_, RANDOM_TO_
    elif from_ is None:
        from_, to, op = 0, _random_top(self.dtype), RANDOM_
    else:
        op = RANDOM_FROM_TO_
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={from_} >= to={to}")
    if self.dtype.is_floating_point and to - 1 > _random_top(self.dtype):
        warnings.warn(f"to - 1 is out of bounds [-(2^{_mantissa(self.dtype)}), "
                      f"2^{_mantissa(self.dtype)}]. Due to precision limitations float can "
                      "support discrete uniform distribution only within this range.",
                      UserWarning, stacklevel=2)
    eng = _engine(generator)
    if op is RANDOM_:
        draw = torch_rng.random_default(eng, self.numel(), self._data.dtype)
    else:
        draw = torch_rng.random_from_to(eng, self.numel(), int(from_), int(to))
    return _fill(self, op, _placed(self, draw.astype(self._data.dtype)))


def geometric_(self, p, *, generator=None):
    """Fill this tensor with the number of Bernoulli(p) trials up to the first success.

    Same as ``torch.Tensor.geometric_``.
    """
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    draw = torch_rng.geometric(_engine(generator), self.numel(), p)
    return _fill(self, None, _placed(self, draw.astype(self._data.dtype)))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill this tensor with numbers drawn from the Cauchy distribution (median, sigma).

    Same as ``torch.Tensor.cauchy_``.
    """
    _float_input("cauchy_", self, "cauchy_cpu")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    draw = torch_rng.cauchy(_engine(generator), self.numel(), median, sigma)
    return _fill(self, None, _placed(self, draw.astype(self._data.dtype)))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill this tensor with exp of numbers drawn from the normal distribution (mean, std).

    Same as ``torch.Tensor.log_normal_``.
    """
    _float_input("log_normal_", self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    draw = torch_rng.log_normal(_engine(generator), self.numel(), mean, std)
    return _fill(self, None, _placed(self, draw.astype(self._data.dtype)))


def _mantissa(dt):
    return {"float16": 11, "float32": 24, "float64": 53}[dt.name]


def _random_top(dt):
    """One past the largest value random_() draws for ``dt``."""
    if dt is dtypes.bool_:
        return 2
    if dt.is_floating_point:
        return 2 ** _mantissa(dt) + 1
    return int(np.iinfo(dt.np).max) + 1


__all__ = ["Generator", "bernoulli", "get_rng_state", "initial_seed", "multinomial", "normal",
           "poisson", "randint_like", "randperm", "seed", "set_rng_state"]
# name -> fill(self, *args) returning compute(self) (bound by _methods' in-place block)
INPLACE_FILLS = {"uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_,
                 "exponential_": exponential_, "random_": random_, "geometric_": geometric_,
                 "cauchy_": cauchy_, "log_normal_": log_normal_}


def _bernoulli_method(self, p=None, *, generator=None):
    """0s and 1s drawn with the probabilities in this tensor (or ``p``), in its dtype.

    Same as ``torch.Tensor.bernoulli``.
    """
    return bernoulli(self, p, generator=generator)


TENSOR_METHODS = {"bernoulli": _bernoulli_method, "multinomial": multinomial}

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"multinomial": "one", "randperm": "factory"}
