"""torch.nn.utils.parametrize: a module's tensor computed from its original by a module
(``register_parametrization(lin, "weight", Symmetric())``), re-evaluated on every access."""

import contextlib

from ...core.grad_mode import no_grad
from ..layers import ModuleList
from ..module import Module, Parameter

_cache_enabled = 0


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order; holds ``original``."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        if new is original:
            self.register_parameter("original", original if isinstance(original, Parameter)
                                    else Parameter(original.detach()))
        else:  # the stored value is the right inverse's, in the original's place
            self.register_parameter("original", Parameter(new.detach(),
                                                          original.requires_grad))

    def right_inverse(self, value):
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
            self.original.data = value.detach()

    def forward(self):
        x = self[0](self.original)
        for module in list(self)[1:]:
            x = module(x)
        return x


def _parametrized_class(module):
    """A subclass of the module's class whose parametrized tensors are properties."""
    cls = module.__class__
    return type(f"Parametrized{cls.__name__}", (cls,), {})


def _add_property(module, name):
    def get(self):
        return self.parametrizations[name]()

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)
    setattr(module.__class__, name, property(get, set_))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make ``module.<tensor_name>`` the value of ``parametrization(original)``."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    if tensor_name in module._parameters:
        original = module._parameters.pop(tensor_name)
    elif tensor_name in module._buffers:
        original = module._buffers.pop(tensor_name)
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    if not is_parametrized(module):
        module.__class__ = _parametrized_class(module)
        module.parametrizations = _ModuleDict()
    module.parametrizations[tensor_name] = ParametrizationList([parametrization], original,
                                                               unsafe)
    _add_property(module, tensor_name)
    return module


class _ModuleDict(Module):
    """torch's ModuleDict of parametrizations (keys are the tensor names)."""

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, value):
        self.add_module(key, value)

    def __contains__(self, key):
        return key in self._modules

    def __delitem__(self, key):
        del self._modules[key]

    def keys(self):
        return self._modules.keys()


def is_parametrized(module, tensor_name=None):
    params = module.__dict__.get("_modules", {}).get("parametrizations")
    if params is None:
        return False
    return tensor_name is None or tensor_name in params


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo register_parametrization: the tensor becomes a plain parameter again, holding
    the parametrized value (or the original, with leave_parametrized=False)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    with no_grad():
        value = plist() if leave_parametrized else plist.original
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, Parameter(value.detach()))
    if not module.parametrizations.keys():
        del module._modules["parametrizations"]
        module.__class__ = module.__class__.__bases__[0]
    return module


@contextlib.contextmanager
def cached():
    """Accepted for torch compatibility: values are recomputed on each access anyway."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1


__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "ParametrizationList"]
