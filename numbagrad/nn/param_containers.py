"""nn.ParameterList and nn.ParameterDict: parameters held in a list or dict, registered with
the module (so parameters(), state_dict() and optimizers see them), as torch.nn's."""

from collections import OrderedDict

from ..tensor import Tensor
from .module import Module, Parameter

_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "int64": "LongTensor",
               "int32": "IntTensor", "bool": "BoolTensor"}


def _as_parameter(value):
    """torch wraps a plain Tensor assigned into the container as a Parameter."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _size(t):
    return "x".join(str(n) for n in t.shape)


class ParameterList(Module):
    """A list of parameters, registered under the names "0", "1", ...

    Args:
        values: an iterable of initial values (default None: empty); Tensors become
            Parameters, other values are stored as they are.
    """

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _key(self, idx):
        if not -self._size <= idx < self._size:
            raise IndexError(f"index {idx} is out of range")
        return str(idx % self._size)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList(list(self)[idx])
        return getattr(self, self._key(idx))

    def __setitem__(self, idx, param):
        setattr(self, self._key(idx), _as_parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(self._size))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        """Add ``value`` (made a Parameter if it is a Tensor) at the end; returns self."""
        new_idx = self._size
        self._size += 1
        setattr(self, str(new_idx), _as_parameter(value))
        return self

    def extend(self, values):
        """Add the values of an iterable at the end; returns self."""
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        lines = []
        for k, p in self._parameters.items():
            if isinstance(p, Tensor):
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{p.dtype!r} of size "
                             f"{_size(p)}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __repr__(self):
        body = self.extra_repr()
        if not body:
            return "ParameterList()"
        return "ParameterList(\n  " + body.replace("\n", "\n  ") + "\n)"

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of parameters, registered under their keys.

    Args:
        parameters: the initial entries (default None: empty), a mapping or an iterable of
            (name, value) pairs; Tensors become Parameters.
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = OrderedDict()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        """The names, in insertion order."""
        return self._keys.keys()

    def items(self):
        """The (name, parameter) pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The parameters, in insertion order."""
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        """The parameter named ``key``, or ``default``."""
        return self[key] if key in self else default

    def pop(self, key):
        """Remove the parameter named ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def clear(self):
        """Remove every parameter."""
        for k in list(self._keys):
            del self[k]

    def update(self, parameters):
        """Add or replace parameters from a mapping or an iterable of (name, value) pairs."""
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for k, v in items:
            self[k] = v

    def extra_repr(self):
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [torch."
                             f"{_TYPE_NAMES.get(p.dtype.name, 'Tensor')} of size {_size(p)}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __repr__(self):
        body = self.extra_repr()
        if not body:
            return "ParameterDict()"
        return "ParameterDict(\n  " + body.replace("\n", "\n  ") + "\n)"

    def __call__(self, input):  # noqa: A002 - torch's names
        raise RuntimeError("ParameterDict should not be called.")


__all__ = ["ParameterList", "ParameterDict"]
