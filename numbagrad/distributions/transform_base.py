"""The Transform base class and ComposeTransform (torch.distributions.transforms'), apart from
the transforms so that transforms_more's can subclass them while transforms.py shows all."""

from . import constraints
from .utils import sum_rightmost

__all__ = ["Transform", "ComposeTransform"]


class Transform:
    """An invertible map y = T(x) with log |dy/dx| (``log_abs_det_jacobian``).

    Attributes:
        bijective: whether the transform is one-to-one (then ``inv`` inverts it).
    """

    bijective = False

    # properties here, so that their docstrings document the class attributes that
    # subclasses set in their place
    @property
    def domain(self):
        """The constraint the inputs satisfy."""
        return constraints.real

    @property
    def codomain(self):
        """The constraint the outputs satisfy."""
        return constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size

    @property
    def event_dim(self):
        """How many trailing dims of an input form one event (domain's and codomain's,
        which must agree)."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (``inv(y)`` gives ``x``)."""
        return _InverseTransform(self)

    @property
    def sign(self):
        """The sign of the Jacobian's determinant, for a bijective transform of one variable."""
        raise NotImplementedError

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return id(self)

    def __call__(self, x):
        return self._call(x)

    def _inv_call(self, y):
        return self._inverse(y)

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """``log |dy/dx|`` at ``x`` (with ``y = T(x)``).

        Args:
            x: the input of the transform.
            y: its output, ``T(x)``.

        Returns:
            The log of the absolute determinant of the Jacobian, per element (summed over
            the transform's ``event_dim`` trailing dimensions, where it has them).
        """
        raise NotImplementedError

    def forward_shape(self, shape):
        """The shape of ``T(x)`` for an ``x`` of ``shape``.

        Args:
            shape: the input's shape.

        Returns:
            The output's shape.
        """
        return shape

    def inverse_shape(self, shape):
        """The shape of ``T.inv(y)`` for a ``y`` of ``shape``.

        Args:
            shape: the output's shape.

        Returns:
            The input's shape.
        """
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__()
        self._inv = transform

    @property
    def domain(self):
        """The constraint the inputs satisfy."""
        return self._inv.codomain

    @property
    def codomain(self):
        """The constraint the outputs satisfy."""
        return self._inv.domain

    @property
    def bijective(self):
        """Whether the transform is one-to-one (then ``inv`` inverts it)."""
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = Transform.__hash__

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """``parts`` applied in order."""

    def __init__(self, parts, cache_size=0):
        super().__init__(cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = Transform.__hash__

    @property
    def domain(self):
        """The constraint the inputs satisfy."""
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        """The constraint the outputs satisfy."""
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        """Whether the transform is one-to-one (then ``inv`` inverts it)."""
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        return ComposeTransform([p.inv for p in reversed(self.parts)])

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return x * 0.0
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(sum_rightmost(part.log_abs_det_jacobian(a, b),
                                       event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "(\n    " + ",\n    ".join(
            repr(p) for p in self.parts) + "\n)"
