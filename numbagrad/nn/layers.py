"""Layers: Linear, Identity, Flatten/Unflatten, Dropout, the activation modules, and the
containers Sequential, ModuleList, ModuleDict, with torch's parameter shapes, default
initialisation schemes and reprs."""

import math
from collections import OrderedDict

from .. import dtypes
from ..core import torch_rng
from ..core.docs import torch_doc
from ..factories import _engine
from ..ops.shape.movement import unflatten
from . import functional as F  # noqa: N812 - torch's idiom
from .module import Module, Parameter, _addindent


def _uniform(shape, bound, dtype):
    dt = dtypes.as_dtype(dtype) or dtypes.get_default_dtype()
    if any(s < 0 for s in shape):  # torch's error for a layer's negative size (NumPy's differs)
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    n = math.prod(shape)
    return torch_rng.uniform(_engine(), n, dt.np, -bound, bound).reshape(shape)


def _kaiming_bound(bound):
    """The weights' bound of torch's kaiming_uniform_(a=sqrt(5)) for the fan_in whose
    1/sqrt is ``bound`` (the biases' bound): the same number, computed in torch's steps so
    that its rounding to the dtype is torch's too."""
    if bound == 0.0:
        return 0.0
    fan_in = round(1.0 / (bound * bound))
    gain = math.sqrt(2.0 / (1 + math.sqrt(5) ** 2))
    return math.sqrt(3.0) * (gain / math.sqrt(fan_in))


class Identity(Module):
    """Returns its input unchanged; constructor arguments are accepted and ignored.

    Same as ``torch.nn.Identity``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002 - torch's names
        """``input`` itself, unchanged.

        Args:
            input: the input tensor.

        Returns:
            ``input``.
        """
        return input


class Linear(Module):
    """y = x W^T + b; W (out_features, in_features) and b drawn from U(-1/sqrt(in), 1/sqrt(in))
    (torch's kaiming_uniform_(a=sqrt(5)) works out to that bound).

    Examples:
        >>> import numbagrad as torch
        >>> _ = torch.manual_seed(0)
        >>> layer = torch.nn.Linear(3, 2)
        >>> layer(torch.ones(4, 3)).shape
        torch.Size([4, 2])
        >>> layer.weight.shape
        torch.Size([2, 3])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = Parameter(_uniform((out_features, in_features), _kaiming_bound(bound),
                                         dtype))
        if bias:
            self.bias = Parameter(_uniform((out_features,), bound, dtype))
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self):
        """Draw the weight and bias again with the default initialisation (kaiming-uniform
        weight, uniform bias)."""
        bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
        self.weight._array()[...] = _uniform(self.weight.shape, _kaiming_bound(bound),
                                             self.weight.dtype)
        if self.bias is not None:
            self.bias._array()[...] = _uniform(self.bias.shape, bound, self.bias.dtype)

    def forward(self, input):  # noqa: A002
        """``input @ weight.T + bias`` (no bias for a layer made with ``bias=False``).

        Args:
            input: (*, in_features).

        Returns:
            A tensor of shape (*, out_features).
        """
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Flatten(Module):
    """Flattens the dimensions ``start_dim`` to ``end_dim`` (by default all but the first).

    Same as ``torch.nn.Flatten``.
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):  # noqa: A002
        """``input`` with the dimensions ``start_dim`` to ``end_dim`` flattened into one.

        Args:
            input: the input tensor.

        Returns:
            A tensor (a view where possible).
        """
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits the dimension ``dim`` into the shape ``unflattened_size``.

    Same as ``torch.nn.Unflatten``.
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):  # noqa: A002
        """``input`` with the dimension ``dim`` split into ``unflattened_size``.

        Args:
            input: the input tensor.

        Returns:
            A tensor (a view where possible).
        """
        return unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Dropout(Module):
    """Zeroes each element with probability ``p`` in training, scaling the rest by ``1 / (1 - p)``.

    Same as ``torch.nn.Dropout``.
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002
        """``dropout`` of ``input``: applied in training mode, the identity in eval mode.

        Args:
            input: the input tensor.

        Returns:
            A tensor of ``input``'s shape (``input`` itself in eval mode, or when
            ``inplace``).
        """
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


# what the constructor arguments of the activation modules below mean, by name (one module's
# own meaning, as "Threshold.threshold", first)
_ACTIVATION_ARGS = {
    "inplace": "if True, ``forward`` overwrites its input with the result and returns it.",
    "alpha": "the ``alpha`` of the formula above.",
    "negative_slope": "the slope for negative inputs.",
    "approximate": "``'none'`` for the exact GELU, ``'tanh'`` for its tanh approximation.",
    "beta": "the ``beta`` of the formula above.",
    "threshold": "where ``beta * x`` exceeds it, the output is ``x`` itself.",
    "Threshold.threshold": "the elements above it are kept.",
    "value": "what replaces the elements not above ``threshold``.",
    "min_val": "the lower end of the range.",
    "max_val": "the upper end of the range.",
    "dim": "the dimension along which it applies (None: torch's deprecated implicit "
           "choice, 0 for 0-, 1- and 3-dimensional input, else 1, with its warning).",
    "GLU.dim": "the dimension split into halves.",
    "lambd": "the half-width of the interval around 0.",
}


def _activation_args(name, params, defaults):
    """The "Args:" section of an activation module's docstring: ``params`` (with
    ``defaults``, None for a required one), which its ``*args, **kwargs`` take in order or by
    name."""
    lines = []
    for k, default in zip(params, defaults):
        text = _ACTIVATION_ARGS.get(f"{name}.{k}", _ACTIVATION_ARGS[k])
        if default is not None:
            text = f"{text[:-1]} (default ``{default!r}``)."
        lines.append(f"    {k}: {text}")
    return "Args:\n" + "\n".join(lines)


def _activation(name, fn, doc, params=(), defaults=(), fmt=None, inplace_fn=None):
    """An activation module class that ``doc`` describes: ``params`` are its constructor
    arguments (torch's names and defaults), passed to ``fn`` as keywords; ``fmt`` formats the
    extra repr; ``inplace_fn`` (same arguments) runs instead when ``inplace`` is set."""
    names = tuple(k for k in params if k != "inplace")
    doc = torch_doc(doc, f"torch.nn.{name}")
    if params:
        doc += "\n\n" + _activation_args(name, params, defaults)
    else:
        doc += ("\n\nArgs:\n    *args: ignored: the module has no settings.\n"
                "    **kwargs: set as attributes of the module, which reads none of them.")

    def __init__(self, *args, **kwargs):  # noqa: N807 - becomes the class's __init__
        Module.__init__(self)
        values = dict(zip(params, defaults))
        values.update(zip(params, args))
        values.update(kwargs)
        for k, v in values.items():
            object.__setattr__(self, k, v)

    if inplace_fn is None:
        def forward(self, input):  # noqa: A002
            return fn(input, **{k: getattr(self, k) for k in names})
    elif not names:  # ReLU and kin: no arguments to gather on the common path
        def forward(self, input):  # noqa: A002
            return inplace_fn(input) if self.inplace else fn(input)
    else:
        def forward(self, input):  # noqa: A002
            kw = {k: getattr(self, k) for k in names}
            return inplace_fn(input, **kw) if self.inplace else fn(input, **kw)

    forward.__doc__ = (
        f"Apply {name} to ``input``{', in place when ``inplace`` is set' if inplace_fn else ''}."
        "\n\nArgs:\n    input: the input tensor.\n\nReturns:\n    The result"
        f"{' (``input`` itself when applied in place)' if inplace_fn else ''}.")

    def extra_repr(self):
        if fmt is not None:
            return fmt(self)
        return ", ".join(f"{k}={getattr(self, k)!r}" for k in params)

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr, "__module__": __name__,
                                  "__doc__": doc})


def _with_inplace(fmt):
    """torch's activation reprs end with ``inplace=True`` when it is set, and omit it if not."""
    def extra(m):
        text = fmt(m) if fmt is not None else ""
        if not m.inplace:
            return text
        return f"{text}, inplace=True" if text else "inplace=True"
    return extra


def _inplace_of(fn):
    return lambda input, **kw: fn(input, inplace=True, **kw)


ReLU = _activation("ReLU", F._public.relu, "Applies ReLU element-wise: ``max(x, 0)``.",
                   ("inplace",), (False,), _with_inplace(None), F.relu_)
Tanh = _activation("Tanh", lambda x: F.tanh(x), "Applies the hyperbolic tangent element-wise.")
Sigmoid = _activation("Sigmoid", lambda x: F.sigmoid(x),
                      "Applies the logistic sigmoid element-wise: ``1 / (1 + exp(-x))``.")
SiLU = _activation("SiLU", F.silu, "Applies SiLU (swish) element-wise: ``x * sigmoid(x)``.",
                   ("inplace",), (False,), _with_inplace(None), _inplace_of(F.silu))
Mish = _activation("Mish", F.mish, "Applies Mish element-wise: ``x * tanh(softplus(x))``.",
                   ("inplace",), (False,), _with_inplace(None), _inplace_of(F.mish))
LeakyReLU = _activation("LeakyReLU", F.leaky_relu,
                        "Applies leaky ReLU element-wise: ``x`` where positive, else "
                        "``negative_slope * x``.", ("negative_slope", "inplace"), (0.01, False),
                        _with_inplace(lambda m: f"negative_slope={m.negative_slope}"),
                        F.leaky_relu_)
ELU = _activation("ELU", F.elu, "Applies ELU element-wise: ``x`` where positive, else "
                  "``alpha * (exp(x) - 1)``.", ("alpha", "inplace"), (1.0, False),
                  _with_inplace(lambda m: f"alpha={m.alpha}"), F.elu_)
GELU = _activation("GELU", F.gelu,
                   "Applies GELU element-wise: ``x * Phi(x)``, or its tanh approximation.",
                   ("approximate",), ("none",), lambda m: f"approximate={m.approximate!r}")
Softplus = _activation("Softplus", F.softplus,
                       "Applies softplus element-wise: ``log(1 + exp(beta * x)) / beta``.",
                       ("beta", "threshold"), (1.0, 20.0),
                       lambda m: f"beta={m.beta}, threshold={m.threshold}")
Hardtanh = _activation("Hardtanh", F.hardtanh, "Clamps each element to [min_val, max_val].",
                       ("min_val", "max_val", "inplace"), (-1.0, 1.0, False),
                       _with_inplace(lambda m: f"min_val={m.min_val}, max_val={m.max_val}"),
                       F.hardtanh_)
Softmax = _activation("Softmax", F.softmax, "Applies softmax along ``dim``.", ("dim",), (None,),
                      lambda m: f"dim={m.dim}")
LogSoftmax = _activation("LogSoftmax", F.log_softmax,
                         "Applies the logarithm of softmax along ``dim``.", ("dim",), (None,),
                         lambda m: f"dim={m.dim}")


# ---- containers ------------------------------------------------------------------------------
def _repeated_repr(modules):
    """torch's container repr: consecutive identical children collapse into `(0-2): 3 x M`."""
    lines, items = [], list(modules.items())
    i = 0
    while i < len(items):
        name, m = items[i]
        text = repr(m)
        j = i + 1
        while j < len(items) and repr(items[j][1]) == text:
            j += 1
        if j - i > 1:
            lines.append(f"({name}-{items[j - 1][0]}): {j - i} x " + _addindent(text, 2))
        else:
            lines.append(f"({name}): " + _addindent(text, 2))
        i = j
    return lines


class Sequential(Module):
    """Runs its modules in order, each one's output the next one's input.

    Same as ``torch.nn.Sequential``.

    Examples:
        >>> import numbagrad as torch
        >>> nn = torch.nn
        >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        >>> model(torch.zeros(5, 4)).shape
        torch.Size([5, 1])
        >>> model[1]
        ReLU()

    Args:
        *args: the modules in order, registered as "0", "1", ...; or one OrderedDict of
            name to module, registered under its names.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):  # noqa: A002
        """Run the modules in order on ``input``.

        Args:
            input: the first module's input (any value the first module takes).

        Returns:
            The last module's output; ``input`` itself when there are no modules.
        """
        for m in self._modules.values():
            input = m(input)
        return input

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules.values())[idx % n]

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[idx]
        self.add_module(key, module)

    def __delitem__(self, idx):
        keys = list(self._modules.keys())
        for key in (keys[idx] if isinstance(idx, slice) else [keys[idx]]):
            del self._modules[key]
        # torch renumbers the remaining children
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def append(self, module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Add the modules of an iterable at the end; returns self.

        Args:
            modules: an iterable of modules, appended in order.

        Returns:
            This container.
        """
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        """Insert ``module`` before position ``index``."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self


class ModuleList(Module):
    """A list of modules, each registered as a submodule.

    Same as ``torch.nn.ModuleList``.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules.values())[idx % n]

    def __setitem__(self, idx, module):
        self.add_module(str(idx % len(self)), module)

    def append(self, module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Add the modules of an iterable at the end; returns self.

        Args:
            modules: an iterable of modules, appended in order.

        Returns:
            This container.
        """
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        """Insert ``module`` before position ``index``."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __repr__(self):
        lines = _repeated_repr(self._modules)
        if not lines:
            return f"{self._get_name()}()"
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, each registered as a submodule under its key.

    Same as ``torch.nn.ModuleDict``.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        """The names, in insertion order."""
        return self._modules.keys()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def items(self):
        """The (name, module) pairs, in insertion order."""
        return self._modules.items()

    def update(self, modules):
        """Add or replace modules from a mapping or an iterable of (name, module) pairs."""
        items = modules.items() if hasattr(modules, "items") else modules
        for k, m in items:
            self.add_module(k, m)

    def pop(self, key):
        """Remove the module named ``key`` and return it."""
        return self._modules.pop(key)


__all__ = ["Identity", "Linear", "Flatten", "Unflatten", "Dropout", "ReLU", "Tanh", "Sigmoid",
           "SiLU", "Mish", "LeakyReLU", "ELU", "GELU", "Softplus", "Hardtanh", "Softmax",
           "LogSoftmax", "Sequential", "ModuleList", "ModuleDict"]
