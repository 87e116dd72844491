"""Pruning methods, as torch.nn.utils.prune's (after its source, BSD licence: see NOTICE).

Pruning ``module.name`` moves the parameter to ``name_orig``, registers the buffer
``name_mask`` and a forward pre-hook (the pruning method itself) that recomputes
``module.name = name_orig * name_mask`` before every forward; pruning the same tensor again
combines the masks through a PruningContainer; ``remove`` makes the pruning permanent.
"""

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ...factories import ones_like, rand, rand_like, zeros_like
from ...ops.reduce.reductions import norm
from ...ops.scan.select import kthvalue, topk
from .clip_grad import parameters_to_vector

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
           "PruningContainer", "RandomStructured", "RandomUnstructured", "custom_from_mask",
           "global_unstructured", "identity", "is_pruned", "l1_unstructured", "ln_structured",
           "random_structured", "random_unstructured", "remove"]


class BasePruningMethod(ABC):
    """Abstract base class of the pruning methods: subclasses define ``compute_mask``.

    Same as ``torch.nn.utils.prune.BasePruningMethod``.
    """

    _tensor_name: str

    def __call__(self, module, inputs):
        """The forward pre-hook: set ``module.<name>`` to ``<name>_orig * <name>_mask``."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for ``t`` that keeps the zeros of ``default_mask``."""

    def apply_mask(self, module):
        """``<name>_orig`` times ``<name>_mask`` (in the parameter's dtype) of ``module``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)`` (combined with an earlier
        pruning of it) and add the reparametrization and its forward pre-hook."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter "
                    f"{name} of {module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            # first pruning of this tensor: the parameter moves to <name>_orig
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            # roll back to the unpruned parameter, as torch does
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times the mask ``compute_mask`` gives for it (or for ``importance_scores``)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as tensor t, "
                    f"got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``<name>`` becomes a Parameter holding the pruned
        values; ``<name>_orig`` and ``<name>_mask`` go."""
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls, module, name, *args, **kwargs):
    """A new ``cls(*args, **kwargs)`` for ``name``, inside a PruningContainer with the method
    already pruning ``module.<name>`` if there is one (its hook is taken off)."""
    old_method, keys = None, []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old_method = hook
            keys.append(k)
    if len(keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    for k in keys:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        method = old_method
    elif isinstance(old_method, BasePruningMethod):
        container = PruningContainer(old_method)
        container.add_pruning_method(method)
        method = container
    return method


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods of one tensor, applied in turn (iterative pruning).

    Same as ``torch.nn.utils.prune.PruningContainer``.
    """

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Append the pruning ``method`` (which must act on the container's tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on "
                f"the parameter named '{self._tensor_name}' to PruningContainer {self}."
                + f" Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """``default_mask`` with the latest method's mask computed on the part of ``t`` it
        left: the unpruned entries (unstructured), the channels not all zero (structured),
        or all of ``t`` (global)."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            slc = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     "have the attribute `dim` defined.")
            n_dims = t.dim()
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep_channel = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = [slice(None)] * n_dims
            slc[dim] = keep_channel
            slc = tuple(slc)
        elif method.PRUNING_TYPE == "global":
            slc = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial_mask = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the reparametrization with a mask of ones.

    Same as ``torch.nn.utils.prune.Identity``.
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        """``default_mask`` unchanged."""
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Add the reparametrization of ``module.<name>`` with a mask of ones."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prune ``amount`` (an int, or a fraction as a float) of the unpruned entries at random.

    Same as ``torch.nn.utils.prune.RandomUnstructured``.
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """``default_mask`` with the entries of the k largest of ``rand_like(t)`` zeroed."""
        nparams_toprune, _ = _nparams_toprune(self.amount, t)
        mask = default_mask.clone()
        if nparams_toprune != 0:  # drawing nothing keeps the random stream where torch's is
            prob = rand_like(t)
            picked = topk(prob.view(-1), k=nparams_toprune)
            mask.view(-1)[picked.indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        """Prune ``amount`` random entries of ``module.<name>``."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prune the ``amount`` unpruned entries of smallest absolute value.

    Same as ``torch.nn.utils.prune.L1Unstructured``.
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """``default_mask`` with the k entries of smallest ``|t|`` zeroed."""
        nparams_toprune, _ = _nparams_toprune(self.amount, t)
        mask = default_mask.clone()
        if nparams_toprune != 0:
            smallest = topk(t.abs().view(-1), k=nparams_toprune, largest=False)
            mask.view(-1)[smallest.indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Prune the ``amount`` entries of ``module.<name>`` (or of ``importance_scores``)
        of smallest absolute value."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` whole channels along ``dim`` at random.

    Same as ``torch.nn.utils.prune.RandomStructured``.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """``default_mask`` times a mask zeroing the channels that drew the k smallest
        of ``rand(channels)``."""
        nparams_toprune, tensor_size = _nparams_toprune(self.amount, t, self.dim)
        if nparams_toprune == 0:
            return default_mask
        prob = rand(tensor_size)
        threshold = kthvalue(prob, k=nparams_toprune).values
        slc = [slice(None)] * len(t.shape)
        slc[self.dim] = prob > threshold
        mask = zeros_like(t)
        mask[tuple(slc)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune the ``amount`` channels along ``dim`` of smallest L\\ ``n``-norm.

    Same as ``torch.nn.utils.prune.LnStructured``.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """``default_mask`` times a mask keeping the channels of largest norm."""
        nparams_toprune, tensor_size = _nparams_toprune(self.amount, t, self.dim)
        nparams_tokeep = tensor_size - nparams_toprune
        # the norm and its topk come first, as in torch (their errors before amount == 0's exit)
        kept = topk(_compute_norm(t, self.n, self.dim), k=nparams_tokeep, largest=True)
        if nparams_toprune == 0:
            return default_mask
        slc = [slice(None)] * len(t.shape)
        slc[self.dim] = kept.indices
        mask = zeros_like(t)
        mask[tuple(slc)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of smallest
        L\\ ``n``-norm (of ``importance_scores`` if given)."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune with a given ``mask``.

    Same as ``torch.nn.utils.prune.CustomFromMask``.
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        """``default_mask`` times the given mask."""
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Prune ``module.<name>`` with ``mask``."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Add the pruning reparametrization of ``module.<name>`` with a mask of ones.

    Same as ``torch.nn.utils.prune.identity``.
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` (int: a count, float: a fraction) random entries of ``module.<name>``.

    Same as ``torch.nn.utils.prune.random_unstructured``.
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` entries of ``module.<name>`` of smallest ``|importance_scores|``.

    Same as ``torch.nn.utils.prune.l1_unstructured``.
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``.

    Same as ``torch.nn.utils.prune.random_structured``.
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` channels along ``dim`` of ``module.<name>`` of least L\\ ``n``-norm.

    Same as ``torch.nn.utils.prune.ln_structured``.
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the ``(module, name)`` pairs of ``parameters`` together, as one vector, with an
    unstructured ``pruning_method`` class (``amount`` and the like in ``kwargs``).

    Same as ``torch.nn.utils.prune.global_unstructured``.
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    relevant_importance_scores = parameters_to_vector(
        [importance_scores.get((module, name), getattr(module, name))
         for (module, name) in parameters])
    default_mask = parameters_to_vector(
        [getattr(module, name + "_mask", ones_like(getattr(module, name)))
         for (module, name) in parameters])
    # the container's compute_mask combines the new mask with the existing ones
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(relevant_importance_scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        param_mask = final_mask[pointer:pointer + num_param].view_as(param)
        custom_from_mask(module, name, mask=param_mask)
        pointer += num_param


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` with the given ``mask``.

    Same as ``torch.nn.utils.prune.custom_from_mask``.
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent and take its hook off.

    Same as ``torch.nn.utils.prune.remove``.
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before "
                     "pruning can be removed")


def is_pruned(module):
    """Whether ``module`` or one of its submodules has a pruning pre-hook.

    Same as ``torch.nn.utils.prune.is_pruned``.
    """
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount):
    """torch's checks of ``amount`` when a method is made: a real, a fraction in [0, 1] if
    not an integer, non-negative if one."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if ((isinstance(amount, numbers.Integral) and amount < 0)
            or (not isinstance(amount, numbers.Integral)
                and (float(amount) > 1.0 or float(amount) < 0.0))):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or "
                         "a non-negative integer")


def _nparams_toprune(amount, t, dim=None):
    """(how many entries of ``t``, or channels along ``dim``, ``amount`` prunes, how many
    there are), with torch's checks and errors in torch's order."""
    if dim is None:
        size = t.nelement()
    else:
        if len(t.shape) <= 1:
            raise ValueError("Structured pruning can only be applied to multidimensional "
                             f"tensors. Found tensor of shape {t.shape} with {len(t.shape)} dims")
        if dim >= t.dim():
            raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
        size = t.shape[dim]
    n = amount if isinstance(amount, numbers.Integral) else round(amount * size)
    if n > size:
        raise ValueError(f"amount={n} should be smaller than the number of parameters "
                         f"to prune={size}")
    return n, size


def _compute_norm(t, n, dim):
    """The L\\ ``n``-norm of each channel of ``t`` along ``dim`` (over all other dims)."""
    dims = list(range(t.dim()))
    dims.remove(dims[dim])
    return norm(t, p=n, dim=dims)
