# Over 600 lines: one class, as torch's nn/modules/module.py.
"""nn.Module and nn.Parameter, as torch.nn's: registration by attribute assignment, the
named_* walks, train/eval, state_dict/load_state_dict, forward hooks and torch's reprs."""

import weakref
from collections import OrderedDict, namedtuple

import numpy as np

from .. import dtypes
from ..core.grad_mode import no_grad
from ..creation_device import check_device, is_device_like
from ..tensor import Tensor, _init_tensor, _make, require_grad
from .backward_hooks import BackwardHook


class Parameter(Tensor):
    """A leaf Tensor that a Module registers as its parameter (requires_grad by default)."""

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = np.empty(0, np.float32)
        _init_tensor(self, data._array() if isinstance(data, Tensor) else data)
        if isinstance(data, Tensor):
            self._data = data._array()  # shares the memory, so it shares the version counter
            self._vc = data._vc
        if requires_grad:
            require_grad(self)

    def __deepcopy__(self, memo):
        """A new Parameter with a copy of the data and the same requires_grad; as torch's,
        without the ``.grad``."""
        if id(self) not in memo:
            memo[id(self)] = type(self)(self._data, self._requires_grad)  # copies the data
        return memo[id(self)]

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__


class _BufferMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and id(obj) in _BUFFER_MARKS


# id(tensor) -> persistent, for the tensors nn.Buffer made (torch marks the tensor itself;
# numbagrad's Tensor has fixed slots); an entry goes with its tensor
_BUFFER_MARKS = {}


class Buffer(metaclass=_BufferMeta):
    """torch.nn.Buffer: ``module.name = nn.Buffer(t)`` registers ``t`` (detached, sharing its
    memory) as a buffer, persistent in the state_dict unless ``persistent=False``."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _make(np.empty(0, np.float32))
        t = data.detach().requires_grad_(data.requires_grad)
        _BUFFER_MARKS[id(t)] = persistent
        weakref.finalize(t, _BUFFER_MARKS.pop, id(t), None)
        return t


class _HandleDict:
    """A removable registration (hooks), as torch.utils.hooks.RemovableHandle."""

    def __init__(self, registry, key):
        self.registry, self.key = registry, key

    def remove(self):
        self.registry.pop(self.key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class IncompatibleKeys(_IncompatibleKeys):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * n + line for line in lines)


class Module:
    """Base class of all layers: assign Parameters, buffers and sub-modules as attributes.

    Examples:
        >>> import numbagrad as torch
        >>> class Net(torch.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = torch.nn.Linear(2, 1)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
        >>> net = Net()
        >>> net
        Net(
          (fc): Linear(in_features=2, out_features=1, bias=True)
        )
        >>> [name for name, _ in net.named_parameters()]
        ['fc.weight', 'fc.bias']

    Args:
        *args: none are accepted (any raises TypeError); a subclass's ``__init__`` takes
            its own arguments and calls ``super().__init__()``.
        **kwargs: none are accepted either.
    """

    training: bool
    _hook_ids = 0

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_pre_hooks", OrderedDict())

    def forward(self, *args, **kwargs):
        """The computation of the module, which subclasses define; calling the module runs it.

        Same as ``torch.nn.Module.forward``.

        Args:
            *args: the module's inputs, as the subclass's ``forward`` takes them.
            **kwargs: its keyword inputs.
        """
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args, **kwargs):
        if self._forward_pre_hooks:
            for hook in list(self._forward_pre_hooks.values()):
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward_hook = None
        # (.get: a module unpickled from before these hooks existed has no such attribute)
        if self.__dict__.get("_backward_hooks") or self.__dict__.get("_backward_pre_hooks"):
            backward_hook = BackwardHook(self, list(self._backward_hooks.values()),
                                         list(self._backward_pre_hooks.values()))
            args = backward_hook.setup_inputs(args)
        out = self.forward(*args, **kwargs)
        if self._forward_hooks:
            for hook in list(self._forward_hooks.values()):
                result = hook(self, args, out)
                if result is not None:
                    out = result
        if backward_hook is not None:
            out = backward_hook.setup_outputs(out)
        return out

    # ---- registration -------------------------------------------------------------------
    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self.__dict__.pop(name, None)
            self._modules.pop(name, None)
            self._buffers.pop(name, None)
            params[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif _BUFFER_MARKS and id(value) in _BUFFER_MARKS and isinstance(value, Tensor):
            self.__dict__.pop(name, None)
            self.register_buffer(name, value, persistent=_BUFFER_MARKS[id(value)])
        elif isinstance(value, Module):
            modules = self.__dict__.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self.__dict__.pop(name, None)
            params.pop(name, None)
            self._buffers.pop(name, None)
            modules[name] = value
        elif self.__dict__.get("_modules") is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            self._modules[name] = None
        elif self.__dict__.get("_buffers") is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        params = d.get("_parameters")  # (a layer's weight and bias at every call: first)
        if params is not None and name in params:
            return params[name]
        for store in ("_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        """Register ``param`` (a Parameter or None) as the parameter ``name``.

        Same as ``torch.nn.Module.register_parameter``.
        """
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Register ``tensor`` as the buffer ``name`` (kept in the state dict if ``persistent``).

        Same as ``torch.nn.Module.register_buffer``.
        """
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name, module):
        """Register ``module`` as the submodule ``name``.

        Same as ``torch.nn.Module.add_module`` (alias ``register_module``).
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if "." in name:  # a dotted name could not be reached through state_dict's keys
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        """The submodule at the dotted path ``target`` (``"encoder.layers.0"``).

        Same as ``torch.nn.Module.get_submodule``.
        """
        mod = self
        for part in target.split(".") if target else []:
            if part not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{part}`")
            mod = mod._modules[part]
        return mod

    # ---- walks ----------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """``(path, module)`` pairs of this module and all its submodules.

        Same as ``torch.nn.Module.named_modules``.
        """
        memo = set() if memo is None else memo
        if remove_duplicate and id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        """This module and all its submodules, recursively.

        Same as ``torch.nn.Module.modules``.
        """
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """``(name, module)`` pairs of the direct submodules.

        Same as ``torch.nn.Module.named_children``.
        """
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        """The direct submodules.

        Same as ``torch.nn.Module.children``.
        """
        for _, m in self.named_children():
            yield m

    def _named_members(self, store, prefix, recurse, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mod_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """``(name, parameter)`` pairs, the names dotted with the submodules' paths.

        Same as ``torch.nn.Module.named_parameters``.
        """
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """The parameters of this module (and of its submodules if ``recurse``).

        Same as ``torch.nn.Module.parameters``.
        """
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """``(name, buffer)`` pairs, the names dotted with the submodules' paths.

        Same as ``torch.nn.Module.named_buffers``.
        """
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """The buffers of this module (and of its submodules if ``recurse``).

        Same as ``torch.nn.Module.buffers``.
        """
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and conversions ------------------------------------------------------------
    def train(self, mode=True):
        """Switch this module and its submodules to training mode (or evaluation, ``mode=False``).

        Same as ``torch.nn.Module.train``.
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        """Switch this module and its submodules to evaluation mode: ``train(False)``.

        Same as ``torch.nn.Module.eval``.
        """
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` on every parameter; returns the module.

        Same as ``torch.nn.Module.requires_grad_``.
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of the parameters: to None, or to zeros if not ``set_to_none``.

        Same as ``torch.nn.Module.zero_grad``.
        """
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_()
                p.grad.zero_()

    def apply(self, fn):
        """Call ``fn`` on every submodule, children first, then on this module; returns it.

        Same as ``torch.nn.Module.apply``.
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _convert(self, dtype):
        dt = dtypes.as_dtype(dtype)
        for m in self.modules():
            for store in (m._parameters, m._buffers):
                for t in store.values():
                    if t is not None and t.dtype.is_floating_point and t.dtype is not dt:
                        t._data = t._array().astype(dt.np)
                        if t.grad is not None:
                            t.grad = _make(t.grad._array().astype(dt.np))
        return self

    def to(self, *args, **kwargs):
        """Cast the floating-point parameters and buffers to a dtype; devices must be the CPU.

        Same as ``torch.nn.Module.to``.

        Args:
            *args: a dtype, and/or a device (a string, int or device), positionally; any
                device must be the CPU.
            **kwargs: ``dtype=`` and ``device=`` the same way; other keywords are ignored.

        Returns:
            This module, its floating-point parameters and buffers cast when a dtype is
            given.
        """
        dtype = kwargs.get("dtype")
        if kwargs.get("device") is not None:
            check_device(kwargs["device"])
        for a in args:
            if isinstance(a, dtypes.dtype):
                dtype = a
            elif is_device_like(a):
                check_device(a)  # the CPU, or torch's error of a CPU-only build
        return self._convert(dtype) if dtype is not None else self

    def float(self):  # noqa: A003 - torch's name
        """Cast the floating-point parameters and buffers to float32 in place; returns the module.

        Same as ``torch.nn.Module.float``.
        """
        return self._convert(dtypes.float32)

    def double(self):
        """Cast the floating-point parameters and buffers to float64 in place; returns the module.

        Same as ``torch.nn.Module.double``.
        """
        return self._convert(dtypes.float64)

    def cpu(self):
        """This module itself: numbagrad keeps tensors in host memory.

        Same as ``torch.nn.Module.cpu``.
        """
        return self

    def cuda(self, device=None):
        """Raise torch's error for a machine without CUDA: numbagrad computes on the CPU only.

        Same as ``torch.nn.Module.cuda``.
        """
        check_device("cuda")
        return self

    def type(self, dst_type):  # noqa: A003
        """Cast the floating-point parameters and buffers to ``dst_type`` in place.

        Same as ``torch.nn.Module.type``.
        """
        return self._convert(dst_type)

    # ---- state ------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of the parameters and persistent buffers by dotted name (detached).

        Same as ``torch.nn.Module.state_dict``.
        """
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy the tensors of ``state_dict`` into the parameters and buffers of the same names.

        Same as ``torch.nn.Module.load_state_dict``; ``assign`` is accepted and ignored:
        values are always copied in.
        """
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            value = value if isinstance(value, Tensor) else _make(np.asarray(value))
            if tuple(value.shape) != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{value.shape} from checkpoint, the shape in current model is "
                              f"{target.shape}.")
                continue
            with no_grad():
                target.copy_(value)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return IncompatibleKeys(missing, unexpected)

    # ---- hooks --------------------------------------------------------------------------------
    def _add_hook(self, registry, hook, prepend=False):
        Module._hook_ids += 1
        registry[Module._hook_ids] = hook
        if prepend:
            registry.move_to_end(Module._hook_ids, last=False)
        return _HandleDict(registry, Module._hook_ids)

    def register_full_backward_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_input, grad_output)`` once the gradients w.r.t. the module's
        inputs are computed; a returned tuple replaces ``grad_input``.

        Same as ``torch.nn.Module.register_full_backward_hook``: grad_input has one entry per
        positional argument (None for non-Tensors, all None when no input requires grad,
        and the hook then fires at the outputs with torch's warning); the module's outputs
        and Tensor inputs must not be modified in place (torch's error).
        """
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_output)`` when the gradients w.r.t. the module's outputs
        are computed; a returned tuple replaces ``grad_output``.

        Same as ``torch.nn.Module.register_full_backward_pre_hook``.
        """
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_forward_hook(self, hook):
        """Call ``hook(module, args, output)`` after each forward; a result not None replaces it.

        Same as ``torch.nn.Module.register_forward_hook``, without ``prepend``,
        ``with_kwargs`` and ``always_call``.
        """
        return self._add_hook(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook):
        """Call ``hook(module, args)`` before each forward; a result not None replaces ``args``.

        Same as ``torch.nn.Module.register_forward_pre_hook``, without
        ``prepend`` and ``with_kwargs``.
        """
        return self._add_hook(self._forward_pre_hooks, hook)

    # ---- printing -----------------------------------------------------------------------------
    def extra_repr(self):
        """The module's own settings as shown inside its repr; subclasses override it.

        Same as ``torch.nn.Module.extra_repr``.
        """
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        children = [f"({name}): " + _addindent(repr(m), 2)
                    for name, m in self._modules.items()]
        body = lines + children
        if not body:
            return self._get_name() + "()"
        if len(lines) == 1 and not children:
            return f"{self._get_name()}({lines[0]})"
        return self._get_name() + "(\n  " + "\n  ".join(body) + "\n)"

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))
