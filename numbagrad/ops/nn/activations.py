"""torch.nn.functional's activations beyond the basics: relu6, selu, celu, hardsigmoid,
hardswish, logsigmoid, the shrinks, threshold, prelu, glu, softmin, gumbel_softmax.

Ops torch runs as one kernel are table ops with its node name (HardswishBackward0); the ones
torch composes (softsign, tanhshrink, softmin, glu's halves) are composed here the same way.
Derivatives pin torch's conventions at the kinks: hardsigmoid's is 0 at +-3, hardswish's
uses x / 3 + 0.5 on [-3, 3], the shrinks and threshold pass nothing at the bounds.
"""

import warnings

import numpy as np

from ...core import torch_rng
from ...engine.record import record
from ...engine.registry import BY_NAME, Sample, defop
from ...factories import _engine
from ...tensor import _make
from ..elementwise.pointwise import clamp, unary
from ..elementwise.public import abs as _abs
from ..elementwise.public import tanh as _tanh
from ..reduce.reductions import log_softmax, softmax
from ..shape.join import chunk
from ..shape.movement import reshape

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _samples(call, shapes=((), (7,), (2, 3))):
    return [Sample((s,), {}, call) for s in shapes]


def _np(fn):
    """A NumPy forward in the input's dtype (0-d results as NumPy scalars)."""
    def forward(a, *attrs):
        return np.asarray(fn(a, *attrs), a.dtype)[()]
    return forward


defop("selu", "EluBackward0", 1,
      forward=_np(lambda a: _SELU_SCALE * np.where(a > 0, a, _SELU_ALPHA * np.expm1(
          np.minimum(a, 0)))),
      grads=(f"g * {_SELU_SCALE!r} if a > 0.0 else g * ({_SELU_SCALE * _SELU_ALPHA!r} * exp(a))",),
      fwd=f"{_SELU_SCALE!r} * a if a > 0.0 else {_SELU_SCALE * _SELU_ALPHA!r} * expm1(a)",
      samples=_samples("lib.nn.functional.selu(x0)"))
defop("celu", "CeluBackward0", 1,
      forward=_np(lambda a, alpha, _: np.where(a > 0, a,
                                               alpha * np.expm1(np.minimum(a, 0) / alpha))),
      grads=("g if a > 0.0 else g * f1 * f0 * exp(a * f1)",),
      fwd="a if a > 0.0 else f0 * expm1(a / f0)",
      samples=[Sample((s,), kw, "lib.nn.functional.celu(x0, **kw)") for s in [(), (7,)]
               for kw in ({}, {"alpha": 0.5})])
defop("hardsigmoid", "HardsigmoidBackward0", 1,
      forward=_np(lambda a: np.minimum(np.maximum(a + 3.0, 0.0), 6.0) / 6.0),
      # torch multiplies by 1/6 rounded to float32, in float64 too
      grads=(f"g * {float(np.float32(1 / 6))!r} if (a > -3.0 and a < 3.0) else 0.0",),
      fwd="min(max(a + 3.0, 0.0), 6.0) / 6.0", domain=(-5.0, 5.0),
      samples=_samples("lib.nn.functional.hardsigmoid(x0)"))
defop("hardswish", "HardswishBackward0", 1,
      forward=_np(lambda a: a * np.minimum(np.maximum(a + 3.0, 0.0), 6.0) / 6.0),
      grads=("0.0 if a < -3.0 else (g * (a / 3.0 + 0.5) if a <= 3.0 else g)",),
      fwd="a * min(max(a + 3.0, 0.0), 6.0) / 6.0", domain=(-5.0, 5.0),
      samples=_samples("lib.nn.functional.hardswish(x0)"))
defop("logsigmoid", "LogSigmoidBackward0", 1,
      forward=_np(lambda a: np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))),
      grads=("g * sigmoid(-a)",), fwd="min(a, 0.0) - log1p(exp(-abs(a)))", domain=(-6.0, 6.0),
      samples=_samples("lib.nn.functional.logsigmoid(x0)"))
defop("softshrink", "SoftshrinkBackward0", 1,
      forward=_np(lambda a, lam: np.where(a > lam, a - lam, np.where(a < -lam, a + lam, 0))),
      grads=("g if (a > f0 or a < -f0) else 0.0",),
      fwd="a - f0 if a > f0 else (a + f0 if a < -f0 else 0.0)",
      samples=[Sample((s,), kw, "lib.nn.functional.softshrink(x0, **kw)") for s in [(), (7,)]
               for kw in ({}, {"lambd": 1.0})])
defop("hardshrink", "HardshrinkBackward0", 1,
      forward=_np(lambda a, lam: np.where((a > lam) | (a < -lam), a, 0)),
      grads=("g if (a > f0 or a < -f0) else 0.0",), fwd="a if (a > f0 or a < -f0) else 0.0",
      samples=[Sample((s,), kw, "lib.nn.functional.hardshrink(x0, **kw)") for s in [(), (7,)]
               for kw in ({}, {"lambd": 1.0})])
defop("threshold", "ThresholdBackward0", 1,
      forward=_np(lambda a, th, value: np.where(a > th, a, value)),
      grads=("g if a > f0 else 0.0",), fwd="a if a > f0 else f1",
      samples=[Sample((s,), {}, "lib.nn.functional.threshold(x0, 0.1, 20.0)")
               for s in [(), (7,)]])
# prelu: x where positive, else weight * x, the weight broadcast over the channel dim (1)
defop("prelu", "PreluKernelBackward0", 2,
      forward=_np(lambda a, w: np.where(a > 0, a, w * a)),
      grads=("g if a > 0.0 else g * b", "0.0 if a > 0.0 else g * a"),
      fwd="a if a > 0.0 else b * a",
      samples=[Sample(((2, 3), (1,)), {}, "lib.nn.functional.prelu(x0, x1)"),
               Sample(((2, 3, 2), (3,)), {}, "lib.nn.functional.prelu(x0, x1)")])


def _float_only(x, name):
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for \'{x.dtype.scalar_name}\'')


def relu6(input, inplace=False):  # noqa: A002 - torch's names
    """min(max(x, 0), 6): torch's is hardtanh(x, 0, 6) (HardtanhBackward0)."""
    if not input.dtype.is_floating_point:  # integers stay integers (no gradient)
        return clamp(input, 0, 6)
    return unary("hardtanh", input, 0.0, 6.0)


def selu(input, inplace=False):  # noqa: A002
    """scale * elu(x, alpha) with the self-normalizing constants (EluBackward0)."""
    _float_only(input, "elu_cpu")
    return unary("selu", input)


def celu(input, alpha=1.0, inplace=False):  # noqa: A002
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    _float_only(input, "elu_cpu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    # torch's derivative scales by 1 / (alpha rounded to float32), in float64 too
    return unary("celu", input, float(alpha), 1.0 / float(np.float32(alpha)))


def softsign(input):  # noqa: A002
    """x / (1 + |x|), composed as torch composes it (DivBackward0).

    Args:
        input: the input tensor.

    Returns:
        A tensor of ``input``'s shape.
    """
    return input / (_abs(input) + 1)


def hardsigmoid(input, inplace=False):  # noqa: A002
    """relu6(x + 3) / 6."""
    _float_only(input, "hardsigmoid_cpu")
    return unary("hardsigmoid", input)


def hardswish(input, inplace=False):  # noqa: A002
    """x * relu6(x + 3) / 6."""
    _float_only(input, "hardswish_cpu")
    return unary("hardswish", input)


def logsigmoid(input):  # noqa: A002
    """log(sigmoid(x)), stable for large |x|.

    Args:
        input: a floating-point tensor.

    Returns:
        A tensor of ``input``'s shape.
    """
    _float_only(input, "log_sigmoid_cpu")
    return unary("logsigmoid", input)


def tanhshrink(input):  # noqa: A002
    """x - tanh(x), composed as torch composes it (SubBackward0).

    Args:
        input: the input tensor.

    Returns:
        A tensor of ``input``'s shape.
    """
    return input - _tanh(input)


def _check_lambd(lambd, dtype):
    if lambd < 0:
        big = np.finfo(dtype.np).max if dtype.is_floating_point else np.iinfo(dtype.np).max
        raise RuntimeError(f"lambda must be in range [0, {big:g}] for input dtype "
                           f"{dtype.scalar_name}, but found {lambd:g}")


def softshrink(input, lambd=0.5):  # noqa: A002
    """x - lambd above lambd, x + lambd below -lambd, else 0.

    Args:
        input: a floating-point tensor.
        lambd: the threshold, not negative (default 0.5).

    Returns:
        A tensor of ``input``'s shape.
    """
    _float_only(input, "softshrink_check")
    _check_lambd(lambd, input.dtype)
    return unary("softshrink", input, float(lambd))


def hardshrink(input, lambd=0.5):  # noqa: A002
    """x where |x| > lambd, else 0.

    Args:
        input: a floating-point tensor (the tensor itself, as a method).
        lambd: the threshold (default 0.5).

    Returns:
        A new tensor of ``input``'s shape.
    """
    _float_only(input, "hardshrink_cpu")
    return unary("hardshrink", input, float(lambd))


def threshold(input, threshold, value, inplace=False):  # noqa: A002
    """x where x > threshold, else value."""
    if input.dtype.scalar_name == "Bool":  # torch's kernel has no bool instance
        raise NotImplementedError('"threshold_cpu" not implemented for \'Bool\'')
    if not input.dtype.is_floating_point:  # integers stay integers (no gradient)
        data = input._data
        return _make(np.where(data > threshold, data, np.asarray(value).astype(data.dtype)))
    return unary("threshold", input, float(threshold), float(value))


def prelu(input, weight):  # noqa: A002
    """x where positive, else weight * x; a weight of n > 1 values is per channel (dim 1).

    Args:
        input: the input tensor (the tensor itself, as a method).
        weight: a 0-d or 1-D tensor of ``input``'s dtype: one slope, or one per channel
            (``input.shape[1]`` values).

    Returns:
        A new tensor of ``input``'s shape.
    """
    n = weight.numel()
    if weight.ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if n != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if input.ndim == 0 or channels != n:
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
        weight = reshape(weight, (1, n) + (1,) * (input.ndim - 2))
    elif weight.ndim == 1 and input.ndim == 0:
        weight = reshape(weight, ())
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {input.dtype.c_name} and "
                           f"{weight.dtype.c_name}")
    op = BY_NAME["prelu"]
    out = np.asarray(op.forward(input._data, weight._data))
    out = out if out.ndim else out[()]
    return record(op, out, (input, weight))


def glu(input, dim=-1):  # noqa: A002
    """a * sigmoid(b) for the two halves (a, b) of ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim % input.ndim} is size {size}")
    _float_only(input, "glu_cpu")
    a, b = chunk(input, 2, dim)
    return a * unary("sigmoid", b)


def _implicit_dim(name, ndim, stacklevel):
    """torch's deprecated choice of a dim for softmax and its kin called without one, with
    its warning."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                  "call to include dim=X as an argument.", stacklevel=stacklevel + 1)
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """softmax(-x, dim)."""
    if dim is None:
        dim = _implicit_dim("softmin", input.ndim, _stacklevel)
    return softmax(-input, dim, dtype=dtype) if dtype is not None else softmax(-input, dim)


def functional_softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """Softmax along ``dim``: ``exp(x)`` normalized to sum to 1 (without ``dim``, torch's
    deprecated implicit choice: dim 0 of a 0-, 1- or 3-d input, else 1, with its warning).

    Same as ``torch.nn.functional.softmax``.
    """
    if dim is None:
        dim = _implicit_dim("softmax", input.ndim, _stacklevel)
    return softmax(input, dim, dtype)


def functional_log_softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """The logarithm of the softmax along ``dim`` (without ``dim``, torch's deprecated
    implicit choice, as ``softmax``).

    Same as ``torch.nn.functional.log_softmax``.

    Args:
        input: the input tensor.
        dim: the dimension along which the softmax is taken (default None: the implicit,
            deprecated choice, with its warning).
        _stacklevel: the stack level of that warning (default 3).
        dtype: if given, ``input`` is cast to this dtype first (default None).

    Returns:
        A tensor of ``input``'s shape.
    """
    if dim is None:
        dim = _implicit_dim("log_softmax", input.ndim, _stacklevel)
    return log_softmax(input, dim, dtype)


functional_softmax.__name__ = functional_softmax.__qualname__ = "softmax"
functional_log_softmax.__name__ = functional_log_softmax.__qualname__ = "log_softmax"


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with Gumbel(0, 1) noise g; ``hard`` returns one-hot
    vectors whose gradient is the soft sample's (the straight-through estimator)."""
    # torch: -empty_like(logits).exponential_().log(), in the logits' dtype
    dt = logits._data.dtype
    u = torch_rng.exponential(_engine(), logits.numel(), 1.0).astype(dt)
    gumbels = _make(-np.log(torch_rng.place(u, tuple(logits.shape), logits._data.strides)))
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = np.argmax(y_soft._data, axis=dim)
    hot = np.zeros(y_soft.shape, y_soft._data.dtype)
    np.put_along_axis(hot, np.expand_dims(index, dim), 1.0, axis=dim)
    return _make(hot) - y_soft.detach() + y_soft


__all__ = ["relu6", "selu", "celu", "softsign", "hardsigmoid", "hardswish", "logsigmoid",
           "tanhshrink", "softshrink", "hardshrink", "threshold", "prelu", "glu", "softmin",
           "gumbel_softmax"]

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"hardshrink": "one"}
