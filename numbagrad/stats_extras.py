"""torch's statistics composites: cov and corrcoef written with recorded ops as ATen writes
them (their gradients and node names follow), gradient (finite differences, also
composed), and the counting ops isin, histogram and histogramdd."""

import builtins
import warnings

import numpy as np

from . import dtypes, factories
from .ops.elementwise.logic import need_tensor
from .ops.elementwise.math_api import clip
from .ops.linalg.common import return_type
from .ops.linalg.matmul import mm
from .ops.linalg.node import not_differentiable, record_node
from .ops.shape.join import cat
from .ops.shape.movement import narrow
from .tensor import Tensor, _make

HistogramResult = return_type("histogram", ["hist", "bin_edges"])
HistogramddResult = return_type("histogramdd", ["hist", "bin_edges"])


# ---- cov and corrcoef -------------------------------------------------------------------------
def _check_weights(w, name, n, floating):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if w.dtype.is_floating_point != floating or w.dtype is dtypes.bool_:
        kind = "floating point" if floating else "integral"
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{w.dtype.scalar_name} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and w._array().min() < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):  # noqa: A002 - torch's names
    """The covariance matrix of the variables in the rows of ``input`` (observations in its
    columns), weighted by ``fweights`` (counts) and ``aweights`` (importance).

    Same as ``torch.cov``.
    """
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", n, False)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", n, True)
        w = aweights if w is None else w * aweights
    w_sum = _make(np.array(n, np.int64)) if w is None else w.sum()
    if w is not None and not w_sum.item():
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if norm_factor.item() <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0
    x = x - avg.unsqueeze(1)
    c = mm(x, (x if w is None else x * w).t())
    return (c / norm_factor).squeeze()


def corrcoef(input):  # noqa: A002 - torch's keyword names
    """The Pearson correlation coefficients of the variables in the rows of ``input``.

    Same as ``torch.corrcoef``.
    """
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return clip(c, -1, 1)


# ---- isin -------------------------------------------------------------------------------------
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of ``elements`` is in ``test_elements`` (either may be a number).

    Same as ``torch.isin``.
    """
    for t in (elements, test_elements):
        if isinstance(t, Tensor) and t.dtype is dtypes.bool_ or isinstance(t, bool):
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        need_tensor(elements, "isin", "elements")
    a = elements._array() if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._array() if isinstance(test_elements, Tensor) else \
        np.asarray(test_elements)
    return _make(np.asarray(np.isin(a, b, assume_unique=assume_unique, invert=invert)))


# ---- histograms -------------------------------------------------------------------------------
def _edges(x, bins, range_, k, dt):  # noqa: A002
    """Dimension k's bin edges: the given tensor, or ``bins`` + 1 equal bins over the range
    (the data's by default, widened by 0.5 each side when it is one value, as torch)."""
    if isinstance(bins, Tensor):
        if bins.dtype is not dt:
            raise RuntimeError(
                f"torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {dt.c_name} and bins for dimension {k} with dtype "
                f"{bins.dtype.c_name}")
        return bins
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension "
                           f"{k}")
    if range_ is not None:
        lo, hi = float(range_[2 * k]), float(range_[2 * k + 1])
    elif x.shape[0]:
        lo, hi = float(x[:, k].min()), float(x[:, k].max())
    else:
        lo, hi = 0.0, 0.0
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} "
                           f"max {hi:g} for dimension {k}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return factories.linspace(lo, hi, bins + 1, dtype=dt)


def _histogramdd(name, input, bins, range_, weight, density):  # noqa: A002
    need_tensor(input, name)
    dt = input.dtype
    if not dt.is_floating_point:
        raise NotImplementedError(f'"histogramdd" not implemented for \'{dt.scalar_name}\'')
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    d = input.shape[-1]
    x = input._array().reshape(-1, d)
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(
            f"torch.histogramdd: if weight tensor is provided it should have the same shape as "
            f"the input tensor excluding its innermost dimension, but got input with shape "
            f"{list(input.shape)} and weight with shape {list(weight.shape)}")
    if isinstance(bins, int):
        bins = [bins] * d
    if range_ is not None and len(range_) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should "
                           f"have {2 * d} elements, but got {len(range_)}")
    edges = [_edges(x, b, range_, k, dt) for k, b in enumerate(bins)]
    w = None if weight is None else weight._array().reshape(-1)
    hist, _ = np.histogramdd(x, [e._array() for e in edges], weights=w, density=density)
    values = [hist.astype(dt.np)] + [e._array() for e in edges]
    inputs = [input] + ([] if weight is None else [weight])
    # torch records both results on a NotImplemented node: backward raises
    return record_node("NotImplemented", values, inputs, not_differentiable(name))


def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """The counts (or ``weight`` sums, or densities) of ``input``'s elements in ``bins``
    equal bins over ``range`` (the data's by default), or between the edges ``bins`` gives.

    Same as ``torch.histogram``.
    """
    need_tensor(input, "histogram")
    flat = input.reshape(-1, 1)
    w = None if weight is None else weight.reshape(-1)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError(
            f"torch.histogramdd: if weight tensor is provided it should have the same shape as "
            f"the input tensor excluding its innermost dimension, but got input with shape "
            f"{[input.numel(), 1]} and weight with shape {list(weight.shape)}")
    hist, edges = _histogramdd("histogram", flat, [bins], range, w, density)
    return HistogramResult(hist, edges)


def histogramdd(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """The ``D``-dimensional histogram of the points in ``input``'s last dimension: ``bins``
    an int, one int per dimension, or one tensor of edges per dimension.

    Same as ``torch.histogramdd``.
    """
    hist, *edges = _histogramdd("histogramdd", input, bins, range, weight, density)
    return HistogramddResult(hist, tuple(edges))


def _histogram_method(self, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """See :func:`histogram`."""
    return histogram(self, bins, range=range, weight=weight, density=density)


Tensor.histogram = _histogram_method


# ---- gradient ---------------------------------------------------------------------------------
def _slice(x, d, start, stop=None):
    n = x.shape[d]
    start = start + n if start < 0 else start
    stop = n if stop is None else stop + n if stop < 0 else stop
    return narrow(x, d, start, stop - start)


def _along_coordinates(x, d, coords, edge_order):
    """ATen's gradient_helper: second-order central differences over uneven coordinates."""
    dx = coords.diff()
    dx1, dx2 = narrow(dx, 0, 0, dx.shape[0] - 1), narrow(dx, 0, 1, dx.shape[0] - 1)
    shape = [1] * x.ndim
    shape[d] = -1
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _slice(x, d, 0, -2) + b * _slice(x, d, 1, -1) + c * _slice(x, d, 2)
    if edge_order == 1:
        first = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / dx[0]
        last = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / dx[-1]
    else:
        d0, d1, e1, e2 = dx[0], dx[1], dx[-1], dx[-2]
        first = (-(2.0 * d0 + d1) / (d0 * (d0 + d1)) * _slice(x, d, 0, 1) +
                 (d0 + d1) / (d0 * d1) * _slice(x, d, 1, 2) +
                 (-d0) / (d1 * (d0 + d1)) * _slice(x, d, 2, 3))
        last = (e1 / (e2 * (e1 + e2)) * _slice(x, d, -3, -2) -
                (e1 + e2) / (e1 * e2) * _slice(x, d, -2, -1) +
                (2 * e1 + e2) / (e1 * (e1 + e2)) * _slice(x, d, -1))
    return cat([first, center, last], d)


def _along_spacing(x, d, h, edge_order):
    """ATen's gradient_helper_float: central differences with an even step ``h``."""
    center = (_slice(x, d, 2) - _slice(x, d, 0, -2)) / h
    if edge_order == 1:
        first = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / h
        last = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / h
    else:
        first = (_slice(x, d, 0, 1) * -1.5 + _slice(x, d, 1, 2) * 2 -
                 _slice(x, d, 2, 3) * 0.5) / h
        last = (_slice(x, d, -3, -2) * 0.5 + _slice(x, d, -2, -1) * -2 +
                _slice(x, d, -1) * 1.5) / h
    return cat([first, center / 2, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):  # noqa: A002 - torch's names
    """The derivative of ``input`` sampled on a grid, by central differences inside and one-
    sided differences (``edge_order`` 1 or 2) at the ends, along each of ``dim`` (all by
    default); ``spacing``: a step, one step per dimension, or one coordinate tensor each.

    Same as ``torch.gradient``: a tuple of tensors, one per dimension.
    """
    need_tensor(input, "gradient")
    dims = list(builtins.range(input.ndim)) if dim is None else \
        [dim] if isinstance(dim, int) else list(dim)
    dims = [d + input.ndim if d < 0 else d for d in dims]
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            if dim is None:
                raise RuntimeError(
                    f"torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                    f"length equal to 'self.dim() = {input.ndim}', since dim argument was not "
                    f"given, but got a list of length {len(spacing)}")
            raise RuntimeError(
                f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                f"and dim arguments to have the same length, but got a spacing argument of "
                f"length {len(spacing)} and a dim argument of length {len(dims)}.")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    x = input if input.dtype.is_floating_point else input.to(dtypes.get_default_dtype())
    return tuple(_along_coordinates(x, d, h, edge_order) if isinstance(h, Tensor) else
                 _along_spacing(x, d, h, edge_order) for d, h in zip(dims, steps))


__all__ = ["corrcoef", "cov", "gradient", "histogram", "histogramdd", "isin"]

Tensor.cov = lambda self, *, correction=1, fweights=None, aweights=None: cov(
    self, correction=correction, fweights=fweights, aweights=aweights)
Tensor.cov.__doc__ = "See :func:`cov`."
Tensor.corrcoef = corrcoef

# torch's out= on these functions (numbagrad/_out_forms.py adds it): one result, several, or
# a factory's (out's dtype unless dtype= is given)
OUT_FORMS = {"isin": "one"}
