"""numbagrad.nn.init: torch.nn.init's initialisation schemes.

Every function fills a Tensor's NumPy array in place, outside autograd (as torch runs them
under ``no_grad``), bumps its version counter as many times as torch's implementation does
(so a backward through a graph that saved the old value fails with torch's message), and
returns the tensor. Random draws come from ``generator`` (a ``numbagrad.Generator``, or a
``numpy.random.Generator``), by default numbagrad's global generator (the one
``numbagrad.manual_seed`` seeds); numbagrad's generators draw torch's numbers, in torch's
order (orthogonal_'s QR may differ from torch's LAPACK in the last bits).
"""

import inspect
import math
import warnings

import numpy as np

from ..core import torch_rng
from ..factories import Generator, _engine
from ..mutation import _bump_version

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_", "uniform", "normal", "constant", "eye",
    "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
    "orthogonal", "sparse",
]



# ---- helpers ---------------------------------------------------------------------------------
def _generator(generator):
    """What to draw from: the torch_rng engine of ``generator`` or of the default generator,
    or a NumPy generator given instead."""
    if generator is None or isinstance(generator, Generator):
        return _engine(generator)
    if isinstance(generator, np.random.Generator):
        return generator
    inner = getattr(generator, "_numpy_generator", None)  # a wrapper exposing its generator
    if isinstance(inner, np.random.Generator):
        return inner
    raise TypeError("generator must be a numpy.random.Generator or None, got "
                    f"{type(generator).__name__}")


def _write(tensor, values, bumps=1):
    """Write ``values`` into the tensor's storage and bump its version ``bumps`` times."""
    arr = tensor._array()
    np.copyto(arr, values, casting="unsafe")
    for _ in range(bumps):
        _bump_version(tensor)
    return tensor


def _need_float(tensor, kernel):
    if not tensor.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{tensor.dtype.scalar_name}'")


def _fmt(x):
    """A double as C++'s ostream prints it (torch's error messages)."""
    return format(float(x), "g")


def _uniform_values(tensor, a, b, gen):
    """Samples of U(a, b) in the tensor's dtype, with torch's argument checks."""
    _need_float(tensor, "check_uniform_bounds")
    np_dt = tensor._data.dtype
    fmax = float(np.finfo(np_dt).max)
    cname = tensor.dtype.c_name
    a, b = float(a), float(b)
    for name, v in (("from", a), ("to", b)):
        if not (-fmax <= v <= fmax):
            raise RuntimeError(f"{name} is out of bounds for {cname}")
    if not a <= b:
        raise RuntimeError("uniform_ expects to return a [from, to) range, but found "
                           f"from={_fmt(a)} > to={_fmt(b)}")
    if b - a > fmax:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{tensor.dtype.scalar_name}>::max(), but found to={_fmt(b)} "
                           f"and from={_fmt(a)} which result in to-from to exceed the limit")
    if isinstance(gen, torch_rng.Engine):
        return _placed(tensor, torch_rng.uniform(gen, tensor.numel(), np_dt, a, b))
    u = gen.random(tensor.shape)
    values = (u * (b - a) + a).astype(np_dt)
    if a < b:  # rounding to the dtype must not reach the open end of [a, b)
        top = np.nextafter(np_dt.type(b), np_dt.type(a))
        np.minimum(values, top, out=values)
    return values


def _normal_values(tensor, mean, std, gen, shape=None):
    _need_float(tensor, "normal_kernel_cpu")
    std = float(std)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    np_dt = tensor._data.dtype
    if isinstance(gen, torch_rng.Engine):
        if shape is not None:  # a new tensor of that shape
            n = int(np.prod(shape))
            return torch_rng.normal(gen, n, np_dt, float(mean), std).reshape(shape)
        arr = tensor._array()
        draw = torch_rng.normal(gen, arr.size, np_dt, float(mean), std,
                                arr.flags.c_contiguous)
        return _placed(tensor, draw)
    shape = tuple(tensor.shape) if shape is None else shape
    return (gen.standard_normal(shape) * std + float(mean)).astype(np_dt)


def _placed(tensor, draw):
    """Draws made in torch's fill order (memory order), in the tensor's logical order."""
    arr = tensor._array()
    return torch_rng.place(draw, arr.shape, arr.strides)


# ---- torch.nn.init's private helpers (some libraries call them) -------------------------------
def _no_grad_uniform_(tensor, a, b, generator=None):
    return _write(tensor, _uniform_values(tensor, a, b, _generator(generator)))


def _no_grad_normal_(tensor, mean, std, generator=None):
    return _write(tensor, _normal_values(tensor, mean, std, _generator(generator)))


def _no_grad_fill_(tensor, val):
    return _write(tensor, val.item() if hasattr(val, "item") else val)


def _no_grad_zero_(tensor):
    return _write(tensor, 0)


def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=None):
    """torch 2.13's sampler: resample out-of-range normals while the interval holds more
    than 30% of the mass, else rejection sampling from a uniform proposal on [a, b]."""
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    gen = _generator(generator)
    p = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
    np_dt = tensor._data.dtype
    if not isinstance(gen, torch_rng.Engine):
        return _trunc_normal_numpy(tensor, mean, std, a, b, gen, p)
    # torch's steps, each redraw a whole tensor's worth, as torch draws them
    if p > 0.3:
        lo, hi = np_dt.type(a), np_dt.type(b)
        x = _normal_values(tensor, mean, std, gen)
        bad = (x < lo) | (x > hi)
        rejected = bool(bad.any())
        while bad.any():
            x = np.where(bad, _normal_values(tensor, mean, std, gen), x)
            bad = (x < lo) | (x > hi)
        return _write(tensor, x, bumps=2 if rejected else 1)
    mode = max(a, min(mean, b))
    log_peak = np_dt.type(-0.5 * ((mode - mean) / std) ** 2)

    def log_pdf(c):  # candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        c = (c - np_dt.type(mean)) / np_dt.type(std)
        return c * c * np_dt.type(-0.5) - log_peak

    def accept_draw():
        return np.log(_uniform_values(tensor, 0.0, 1.0, gen))

    x = _uniform_values(tensor, a, b, gen)
    pending = accept_draw() > log_pdf(x)
    rejected = bool(pending.any())
    while pending.any():
        cand = _uniform_values(tensor, a, b, gen)
        x = np.where(pending, cand, x)
        pending = np.where(pending, accept_draw() > log_pdf(cand), pending)
    return _write(tensor, x, bumps=2 if rejected else 1)


def _trunc_normal_numpy(tensor, mean, std, a, b, gen, p):
    """The same sampler on a NumPy generator, redrawing only the rejected entries."""
    np_dt = tensor._data.dtype
    if p > 0.3:
        x = _normal_values(tensor, mean, std, gen).astype(np.float64)
        lo, hi = float(np_dt.type(a)), float(np_dt.type(b))
        bad = np.flatnonzero((x < lo) | (x > hi))
        rejected = bad.size > 0
        while bad.size:
            x.flat[bad] = gen.standard_normal(bad.size) * std + mean
            xb = x.flat[bad]
            bad = bad[(xb < lo) | (xb > hi)]
    else:
        x = _uniform_values(tensor, a, b, gen).astype(np.float64)
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        size = x.size

        def rejects(v, n):
            return np.log(gen.random(n)) > -0.5 * ((v - mean) / std) ** 2 - log_peak

        pending = np.flatnonzero(rejects(x.ravel(), size))
        rejected = pending.size > 0
        while pending.size:
            cand = gen.random(pending.size) * (b - a) + a
            x.flat[pending] = cand
            pending = pending[rejects(cand, pending.size)]
    return _write(tensor, x.astype(np_dt), bumps=2 if rejected else 1)


# ---- public API --------------------------------------------------------------------------------
def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (torch.nn.init.calculate_gain)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    elif nonlinearity == "tanh":
        return 5.0 / 3
    elif nonlinearity == "relu":
        return math.sqrt(2.0)
    elif nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)
              or isinstance(param, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    elif nonlinearity == "selu":
        return 3.0 / 4
    else:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with samples of U(a, b)."""
    return _no_grad_uniform_(tensor, a, b, generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with samples of N(mean, std^2)."""
    return _no_grad_normal_(tensor, mean, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with samples of N(mean, std^2) truncated to [a, b]."""
    return _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=generator)


def constant_(tensor, val):
    """Fill with ``val``."""
    return _no_grad_fill_(tensor, val)


def ones_(tensor):
    """Fill ``tensor`` with ones, without recording.

    Same as ``torch.nn.init.ones_``."""
    return _no_grad_fill_(tensor, 1.0)


def zeros_(tensor):
    """Fill ``tensor`` with zeros, without recording.

    Same as ``torch.nn.init.zeros_``."""
    return _no_grad_zero_(tensor)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """Fill a {3, 4, 5}-D tensor with the Dirac delta (identity convolution), per group."""
    dimensions = tensor.ndim
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    values = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            values[(g * out_chans_per_grp + d, d) + centre] = 1
    return _write(tensor, values, bumps=1 + groups * min_dim)  # zero_ + one write per entry


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    if tensor.dim() > 2:
        for s in tensor.shape[2:]:
            receptive_field_size *= s
    fan_in = num_input_fmaps * receptive_field_size
    fan_out = num_output_fmaps * receptive_field_size
    return fan_in, fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return _no_grad_uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _no_grad_normal_(tensor, 0.0, std, generator)


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-bound, bound), bound = gain * sqrt(3 / fan_mode)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return _no_grad_uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std^2), std = gain / sqrt(fan_mode)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    return _no_grad_normal_(tensor, 0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix (trailing dims flattened): QR of a Gaussian
    matrix with torch's sign fix (columns of Q times the signs of diag(R))."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = _normal_values(tensor, 0.0, 1.0, _generator(generator), (rows, cols))
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    q = q.astype(tensor._data.dtype)  # torch's QR runs in the tensor's dtype too
    values = q.reshape(tuple(tensor.shape)) * np.asarray(gain, dtype=q.dtype)
    return _write(tensor, values, bumps=2)  # copy_ then mul_


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-D tensor with N(0, std^2) values, ceil(sparsity * rows) zeros per column."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    gen = _generator(generator)
    rows, cols = tuple(tensor.shape)
    num_zeros = math.ceil(sparsity * rows)
    values = _normal_values(tensor, 0, std, gen)
    if isinstance(gen, torch_rng.Engine):
        # torch draws each column's randperm from the default generator, not ``generator``
        for col in range(cols):
            values[torch_rng.randperm(_engine(), rows)[:num_zeros], col] = 0
    elif num_zeros > 0 and cols > 0:
        zero_rows = np.argsort(gen.random((rows, cols)), axis=0)[:num_zeros]
        values[zero_rows, np.arange(cols)] = 0
    return _write(tensor, values, bumps=1 + cols)  # normal_ + one write per column


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    names = ", ".join(f"``{n}``" for n in inspect.signature(meth).parameters)
    deprecated_init.__doc__ = (
        f"{old_name}(...): deprecated, use {new_name}.\n\n"
        f"Args:\n    *args: passed on to ``{new_name}``, whose parameters are {names}.\n"
        f"    **kwargs: passed on to it by name.")
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
