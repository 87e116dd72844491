"""The constraints distributions check their parameters and values against (torch's
distributions.constraints: the same names and reprs, checks on the values)."""

import numpy as np

from ..tensor import Tensor

__all__ = ["Constraint", "MixtureSameFamilyConstraint", "boolean", "dependent",
           "dependent_property", "greater_than",
           "greater_than_eq", "independent", "integer_interval", "interval", "less_than",
           "lower_cholesky", "multinomial", "nonnegative", "nonnegative_integer", "one_hot",
           "positive",
           "positive_definite", "real", "real_vector", "simplex", "unit_interval", "cat", "stack",
           "corr_cholesky"]


def _values(x):
    return np.asarray(x._data if isinstance(x, Tensor) else x)


def _bound(b):
    return _values(b) if isinstance(b, Tensor) else b


class Constraint:
    """A region of valid values: ``check(value)`` is a bool array over the batch dims."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """Depends on other parameters: not checkable on its own."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class dependent_property(property):  # noqa: N801 - torch's name
    """A property that is a dependent constraint on the class, a value on instances."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        super().__init__(fn)
        self._is_discrete, self._event_dim = is_discrete, event_dim

    def __call__(self, fn):
        return dependent_property(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.ndim < n:
            raise ValueError(f"Expected value.dim() >= {n} but got {result.ndim}")
        return result.reshape(result.shape[:result.ndim - n] + (-1,)).all(-1)

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        v = _values(value)
        return (v == 0) | (v == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        v = _values(value)
        return ((v == 0) | (v == 1)).all(-1) & (v.sum(-1) == 1)


class MixtureSameFamilyConstraint(Constraint):
    """The component constraint checked with the mixture dimension added back, all over it."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError("base_constraint must be a Constraint, got "
                                 f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        unsqueezed = np.expand_dims(_values(value), -1 - self.event_dim)
        result = np.asarray(self.base_constraint.check(unsqueezed))
        ndim = np.ndim(_values(value))
        if ndim < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {ndim}")
        keep = ndim - self.event_dim
        return result.reshape(result.shape[:keep] + (-1,)).all(-1)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _Multinomial(Constraint):
    """Nonnegative counts summing to at most ``upper_bound`` (torch's weaker check)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        v = _values(value)
        return (v >= 0).all(-1) & (v.sum(-1) <= self.upper_bound)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        v = _values(value)
        return (v % 1 == 0) & (_bound(self.lower_bound) <= v) & (v <= _bound(self.upper_bound))

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        v = _values(value)
        return (v % 1 == 0) & (v >= self.lower_bound)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value):
        v = _values(value)
        return v == v  # NaN is the one invalid value


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return _bound(self.lower_bound) < _values(value)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return _bound(self.lower_bound) <= _values(value)


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return _values(value) < _bound(self.upper_bound)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        v = _values(value)
        return (_bound(self.lower_bound) <= v) & (v <= _bound(self.upper_bound))

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _HalfOpenInterval(_Interval):
    def check(self, value):
        v = _values(value)
        return (_bound(self.lower_bound) <= v) & (v < _bound(self.upper_bound))


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        v = _values(value)
        return np.all(v >= 0, axis=-1) & (np.abs(v.sum(-1) - 1) < 1e-6)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        v = _values(value)
        lower = (np.tril(v) == v).reshape(v.shape[:-2] + (-1,)).min(-1)
        positive_diagonal = (np.diagonal(v, axis1=-2, axis2=-1) > 0).min(-1)
        return lower & positive_diagonal


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value):
        v = _values(value)
        symmetric = np.isclose(v, np.swapaxes(v, -1, -2), atol=1e-6).all((-2, -1))
        with np.errstate(all="ignore"):
            eig = np.linalg.eigvalsh(v)
        return symmetric & (eig > 0).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: lower-triangular, positive diagonal,
    rows of unit norm (to torch's tolerance, 10 eps per column)."""

    event_dim = 2

    def check(self, value):
        v = _values(value)
        tol = np.finfo(v.dtype).eps * v.shape[-1] * 10
        unit_rows = (np.abs(np.linalg.norm(v, axis=-1) - 1.0) <= tol).all(-1)
        return np.asarray(lower_cholesky.check(value)) & unit_rows


class _Cat(Constraint):
    """``cseq[i]`` on the i-th block (``lengths[i]`` long) along ``dim`` (CatTransform's)."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq "
                                 f"({len(self.cseq)})")
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        v, checks, start = _values(value), [], 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(np.asarray(constr.check(np.take(v, range(start, start + length),
                                                          axis=self.dim))))
            start += length
        return np.concatenate(checks, self.dim)


class _Stack(Constraint):
    """``cseq[i]`` on the i-th slice along ``dim`` (StackTransform's)."""

    def __init__(self, cseq, dim=0):
        self.cseq, self.dim = list(cseq), dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        v = _values(value)
        return np.stack([np.asarray(c.check(np.take(v, i, axis=self.dim)))
                         for i, c in enumerate(self.cseq)], self.dim)


dependent = _Dependent()
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
multinomial = _Multinomial
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
corr_cholesky = _CorrCholesky()
cat = _Cat
stack = _Stack
