"""The rest of torch.distributions.transforms: elementwise (Tanh, Softplus), vector-valued
(Softmax, StickBreaking), matrix-valued (LowerCholesky, PositiveDefinite) and structural
(Cat, Stack, Independent, Reshape, CumulativeDistribution) transforms, with torch's formulas
(torch/distributions/transforms.py)."""

import math

import numpy as np

from ..nn.functional import logsigmoid, softplus
from ..ops.shape.join import cat, stack
from ..size import Size
from . import constraints
from .linalg_ops import cholesky
from .transform_base import ComposeTransform, Transform
from .utils import _tensor, finfo, sum_rightmost

__all__ = ["TanhTransform", "SoftplusTransform", "SoftmaxTransform", "StickBreakingTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "CatTransform",
           "StackTransform", "IndependentTransform", "ReshapeTransform",
           "CumulativeDistributionTransform", "CorrCholeskyTransform", "identity_transform"]

identity_transform = ComposeTransform([])
identity_transform.__doc__ = """The identity transform, ``y = x`` (a ComposeTransform of no parts).

Args:
    x: the input tensor.

Returns:
    ``x``.
"""


class _Elementwise(Transform):
    """Stateless transforms: all instances are equal."""

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = Transform.__hash__


class TanhTransform(_Elementwise):
    """y = tanh(x).

    Args:
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        # torch's atanh: no clamping, so y = +-1 maps to +-inf
        return 0.5 * (y.log1p() - (-y).log1p())

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) in a form that stays finite for large |x|
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class SoftplusTransform(_Elementwise):
    """y = log(1 + exp(x)).

    Args:
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class SoftmaxTransform(_Elementwise):
    """Unconstrained vectors to the simplex by softmax (not bijective: no jacobian).

    Args:
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


def _clipped_sigmoid(x):
    fi = finfo(x.dtype)
    return x.sigmoid().clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))


class StickBreakingTransform(_Elementwise):
    """Vectors of length K to the K+1 simplex by stick breaking; the offsets make zero map to
    the simplex's centre.

    Args:
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        ones = x.new_ones(tuple(x.shape[:-1]) + (1,))
        return cat([z, ones], -1) * cat([ones, z_cumprod], -1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)
        sf = (1 - y_crop.cumsum(-1)).clamp(min=float(finfo(y.dtype).tiny))
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        x = x - offset.log()
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(_Elementwise):
    """Square matrices to lower-triangular ones with a positive diagonal (the strict lower
    triangle kept, the diagonal exponentiated); not bijective.

    Args:
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(_Elementwise):
    """Square matrices to positive-definite ones: L L^T of LowerCholeskyTransform's L.

    Args:
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(cholesky(y))


def _tril_selector(n, diag, dtype):
    """(N, n*n) 0/1 matrix picking the entries of tril(n, diag) in row-major order (torch's
    boolean-mask order): products with it map between a matrix and its lower triangle."""
    rows, cols = np.tril_indices(n, k=diag)
    sel = np.zeros((len(rows), n * n))
    sel[np.arange(len(rows)), rows * n + cols] = 1.0
    return _tensor(sel, dtype)


def tril_matrix_to_vec(mat, diag=0):
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * n,))
    return flat @ _tril_selector(n, diag, mat.dtype).mT


def vec_to_tril_matrix(vec, diag=0):
    # the positive root of D**2 + (1+2*diag)*D - |diag|*(diag+1) - 2*vec.shape[-1] = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1]
                            + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > float(finfo(vec.dtype).eps):
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    flat = vec @ _tril_selector(n, diag, vec.dtype)
    return flat.reshape(tuple(vec.shape[:-1]) + (n, n))


def _check_dim(x, dim, what="tensor"):
    if not -x.dim() <= dim < x.dim():
        raise AssertionError(f"dim {dim} out of range for {what} with {x.dim()} dimensions")


def _check_size(x, dim, length, name, what="length"):
    if x.size(dim) != length:
        raise AssertionError(f"{name}.size({dim}) = {x.size(dim)} must equal {what} {length}")


class CatTransform(Transform):
    """``tseq[i]`` applied to the i-th block (of ``lengths[i]`` along ``dim``), concatenated.

    Args:
        tseq: a sequence of Transforms.
        dim: the dimension the blocks lie along (default 0).
        lengths: the length of each block along ``dim`` (default None: 1 each).
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @property
    def domain(self):
        """The constraint the inputs satisfy."""
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        """The constraint the outputs satisfy."""
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        """The total size of the pieces along ``dim``."""
        return sum(self.lengths)

    @property
    def bijective(self):
        """Whether the transform is one-to-one (then ``inv`` inverts it)."""
        return all(t.bijective for t in self.transforms)

    def _blocks(self, x, y=None, name="x"):
        for value, label in ((x, name), (y, "y")):
            if value is not None:
                _check_dim(value, self.dim, "tensor" if y is None else label)
                _check_size(value, self.dim, self.length, label)
        start = 0
        for trans, length in zip(self.transforms, self.lengths):
            yield trans, x.narrow(self.dim, start, length), (
                None if y is None else y.narrow(self.dim, start, length))
            start += length

    def _call(self, x):
        return cat([t(xs) for t, xs, _ in self._blocks(x)], dim=self.dim)

    def _inverse(self, y):
        return cat([t.inv(ys) for t, ys, _ in self._blocks(y, name="y")], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = []
        for trans, xs, ys in self._blocks(x, y):
            term = trans.log_abs_det_jacobian(xs, ys)
            if trans.event_dim < self.event_dim:
                term = sum_rightmost(term, self.event_dim - trans.event_dim)
            terms.append(term)
        # a block dim left in the jacobian concatenates; one summed into the event adds
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        if dim < 0:
            return cat(terms, dim=dim)
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total


class StackTransform(Transform):
    """``tseq[i]`` applied to the i-th slice along ``dim``, stacked.

    Args:
        tseq: a sequence of Transforms, one per slice.
        dim: the dimension the slices lie along (default 0).
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    @property
    def domain(self):
        """The constraint the inputs satisfy."""
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        """The constraint the outputs satisfy."""
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    @property
    def bijective(self):
        """Whether the transform is one-to-one (then ``inv`` inverts it)."""
        return all(t.bijective for t in self.transforms)

    def _slice(self, z, name):
        _check_dim(z, self.dim)
        _check_size(z, self.dim, len(self.transforms), name, "len(transforms)")
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        return stack([t(xs) for t, xs in zip(self.transforms, self._slice(x, "x"))],
                     dim=self.dim)

    def _inverse(self, y):
        return stack([t.inv(ys) for t, ys in zip(self.transforms, self._slice(y, "y"))],
                     dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        return stack([t.log_abs_det_jacobian(xs, ys) for t, xs, ys in zip(
            self.transforms, self._slice(x, "x"), self._slice(y, "y"))], dim=self.dim)


class IndependentTransform(Transform):
    """``base_transform`` with its ``reinterpreted_batch_ndims`` rightmost dims made event
    dims (the jacobian summed over them)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def domain(self):
        """The constraint the inputs satisfy."""
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        """The constraint the outputs satisfy."""
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        """Whether the transform is one-to-one (then ``inv`` inverts it)."""
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` dims to ``out_shape`` (jacobian zero)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        """The constraint the inputs satisfy."""
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        """The constraint the outputs satisfy."""
        return constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    def forward_shape(self, shape):
        if len(shape) < len(self.in_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.in_shape)
        if tuple(shape[cut:]) != tuple(self.in_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.in_shape}")
        return Size(tuple(shape[:cut]) + tuple(self.out_shape))

    def inverse_shape(self, shape):
        if len(shape) < len(self.out_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.out_shape)
        if tuple(shape[cut:]) != tuple(self.out_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got "
                             f"{self.out_shape}")
        return Size(tuple(shape[:cut]) + tuple(self.in_shape))


class CumulativeDistributionTransform(Transform):
    """x -> distribution.cdf(x), onto the unit interval; the jacobian is log_prob."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        """The constraint the inputs satisfy."""
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class CorrCholeskyTransform(_Elementwise):
    """Unconstrained vectors of length D(D-1)/2 to Cholesky factors of D x D correlation
    matrices: tanh onto (-1, 1), then stick breaking on the squares row by row (Stan's).

    Args:
        cache_size: 0 or 1, as torch's (anything else raises ValueError); stored only:
            numbagrad computes every call anew.
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = float(finfo(x.dtype).eps)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # y = sign(r) sqrt(z * cumprod(1 - z)) with z = r^2, i.e. r * sqrt(cumprod(1 - z))
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + _tensor(np.eye(r.shape[-1]), r.dtype)
        ones = r.new_ones(tuple(r.shape[:-1]) + (1,))
        return r * cat([ones, z1m_cumprod_sqrt[..., :-1]], -1)

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(-1)
        ones = y.new_ones(tuple(y.shape[:-1]) + (1,))
        y_cumsum_shifted = cat([ones, y_cumsum[..., :-1]], -1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(y_cumsum_shifted,
                                                                diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        """``log |dy/dx|`` of the map from ``x`` to the Cholesky factor ``y`` (on the
        flattened strict lower triangle, as the spaces' dimensions differ).

        Args:
            x: the unconstrained input, (..., d * (d - 1) / 2).
            y: its output, ``T(x)``, (..., d, d).
            intermediates: accepted for torch's signature and unused (default None).

        Returns:
            A tensor of shape ``x.shape[:-1]``.
        """
        # of x and y's flattened strict lower triangle (the spaces' dimensions differ)
        y1m_cumsum_tril = tril_matrix_to_vec(1 - (y * y).cumsum(-1), diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))
