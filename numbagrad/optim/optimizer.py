# Over 600 lines: one class, as torch's optim/optimizer.py, and the kernel call its
# subclasses share.
"""Optimizer: torch.optim.Optimizer's parameter groups, per-parameter state, state_dict, hooks,
zero_grad and repr; and ``_run``, which hands one group's update to one Numba kernel call."""

import ctypes
import functools
import os
import warnings
import weakref
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

import numpy as np

from .. import dtypes
from .._foreign import foreign_array, is_array_like
from .._threads import fit_threads, in_parallel, num_threads
from ..core import grad_mode
from ..dtypes import float64, get_default_dtype
from ..engine import fast_push
from ..mutation import _bump_version
from ..predicates import typename
from ..tensor import Tensor, _make
from . import _kernels

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _to_scalar(x):
    """A hyperparameter as a Python number (torch accepts 1-element tensors for lr, betas)."""
    if isinstance(x, Tensor):
        return x.item()
    return x


def _scalar_dtype():
    """The dtype of the ``step`` counters: float64 under a float64 default dtype, else float32."""
    return np.float64 if get_default_dtype() is float64 else np.float32


def _adopt_foreign(value):
    """``value`` (an optimizer state or group entry) with every array of another library (a
    torch tensor from ``torch_optimizer.state_dict()``) replaced by a numbagrad tensor holding
    a copy: numbagrad updates its state in place, which must not write into the other's."""
    if isinstance(value, Tensor):
        return value
    if is_array_like(value):
        arr = np.array(foreign_array(value))
        dtypes.from_numpy_dtype(arr.dtype)  # a TypeError for dtypes numbagrad cannot hold
        return _make(arr)
    if isinstance(value, dict):
        return type(value)((k, _adopt_foreign(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_adopt_foreign(v) for v in value)
    return value


def _step_tensor(value=0.0):
    return _make(np.array(value, _scalar_dtype()))


def _increment(step_t):
    """``step_t += 1`` on a 0-d step tensor (rounded in its dtype); returns the new value."""
    a = step_t._array()
    a[()] = a.item() + 1.0
    return a.item()


class RemovableHandle:
    """A handle that removes a registered hook (torch.utils.hooks.RemovableHandle)."""

    next_id = 0

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1

    def remove(self):
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register ``hook(optimizer, args, kwargs)`` to run before every optimizer's step."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Register ``hook(optimizer, args, kwargs)`` to run after every optimizer's step."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _use_grad(step):
    """Run ``step`` with gradient recording off (torch: on only when ``differentiable``)."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        prev = grad_mode.state.enabled
        grad_mode.state.enabled = False
        try:
            return step(self, *args, **kwargs)
        finally:
            grad_mode.state.enabled = prev

    return wrapper


def _check_unsupported(defaults):
    if defaults.get("differentiable"):
        raise NotImplementedError("numbagrad.optim: differentiable=True is not supported (the "
                                  "update runs in a compiled kernel, outside autograd)")
    if defaults.get("fused"):
        if defaults.get("differentiable"):
            raise RuntimeError("`fused` does not support `differentiable`")
        if defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _check_capturable(group):
    if group.get("capturable"):
        raise AssertionError("If capturable=True, params and state_steps must be on supported "
                             "devices: ['cuda', 'xpu', 'hpu', 'privateuseone', 'xla'].")


class Optimizer:
    r"""Base class for all optimizers.

    Args:
        params (iterable): an iterable of Tensors or dicts. Specifies what Tensors should be
            optimized.
        defaults (dict): a dict containing default values of optimization options (used when
            a parameter group doesn't specify them).
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + typename(params))

        self.state = defaultdict(dict)
        self.param_groups = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]

        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # ---- step hooks -------------------------------------------------------------------------
    @staticmethod
    def profile_hook_step(func):
        """Wrap a ``step`` method so that it runs its hooks and shows in the profiler as
        ``Optimizer.step#<class>.step``.

        Args:
            func: the ``step`` function, called as ``func(self, *args, **kwargs)``.

        Returns:
            The wrapper: it runs the global and the optimizer's step pre-hooks (which may
            replace the arguments), ``func``, then the post-hooks, and returns ``func``'s
            result.
        """
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self, *_ = args
            for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                                  self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{func} must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
            out = func(*args, **kwargs)
            for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                   _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out

        return wrapper

    def _patch_step_function(self):
        hooked = getattr(self.__class__.step, "hooked", None)
        if not hooked:
            # wrapped where it is defined (Adam's for an AdamW): a subclass made first does
            # not get a step of its own, which would hide a later change of its base's
            owner = next(k for k in type(self).__mro__ if "step" in vars(k))
            owner.step = self.profile_hook_step(owner.step)
            owner.step.hooked = True

    def register_step_pre_hook(self, hook):
        """Register ``hook(optimizer, args, kwargs)``, called before each ``step`` (may return
        new args and kwargs); returns a handle."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """Register ``hook(optimizer, args, kwargs)``, called after each ``step``; returns a
        handle."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _register(self, hooks, hook, prepend):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Register ``hook(optimizer)``, called before ``state_dict``; returns a handle."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Register ``hook(optimizer, state_dict)``, called after ``state_dict`` (may return a
        replacement); returns a handle."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Register ``hook(optimizer, state_dict)``, called before ``load_state_dict`` (may
        return a replacement state_dict); returns a handle."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Register ``hook(optimizer)``, called after ``load_state_dict``; returns a handle."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---- state_dict ---------------------------------------------------------------------------
    def state_dict(self):
        """The optimizer's state: ``state`` keyed by parameter index, ``param_groups`` with
        their parameters as index lists (the tensors are the optimizer's own, not copies).

        torch's optimizers take numbagrad tensors no more than torch's modules do: for
        ``torch_optimizer.load_state_dict``, convert it with
        ``numbagrad.utils.convert.to_torch_state_dict`` (the same torch optimizer class)."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}

        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups, key=None):
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype)
        return value

    def load_state_dict(self, state_dict):
        """Load a state returned by :meth:`state_dict` (tensors cast to their parameter's
        dtype, as torch does), numbagrad's or that of the same torch optimizer class: torch
        tensors in it are copied into numbagrad tensors, as a module's ``load_state_dict``
        takes them."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result

        groups = self.param_groups
        saved_groups = _adopt_foreign(deepcopy(state_dict["param_groups"]))
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")

        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def _cast(param, value, param_id=None, param_groups=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, param_id=param_id, param_groups=param_groups, key=k)
                        for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(_cast(param, v, param_id=param_id, param_groups=param_groups)
                                   for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            v = _adopt_foreign(v)
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k,
                                     param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ---- gradients and groups -----------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors: to None (default), or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                    continue
                if g._tape is not None:
                    g.detach_()
                else:
                    g._requires_grad = False
                g._array().fill(0)
                _bump_version(g)

    def step(self, closure=None):
        """Perform a single optimization step (``closure`` re-evaluates the loss)."""
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Add a param group to the optimizer's ``param_groups``, with every default filled in."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")

        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)

        extracted_param_tensors = []
        extracted_param_names = []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                extracted_param_names.append(param[0])
                extracted_param_tensors.append(param[1])
            else:
                extracted_param_tensors.append(param)

        param_group["params"] = extracted_param_tensors
        if len(extracted_param_names) != 0:
            if len(extracted_param_names) == len(extracted_param_tensors):
                param_group["param_names"] = extracted_param_names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or
                                                                       param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        param_set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = ("with names" if "param_names" in param_group
                                     else "without names")
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current_group_txt} to the optimizer")

        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)


# ---- handing a group to a kernel ------------------------------------------------------------
# id(array) -> (weak reference, address, dtype) of writable arrays already checked to be
# C-contiguous: the address of a persistent array (a parameter, a state tensor) is looked up
# once (``a.ctypes.data`` costs ~2 us).
_ADDR = {}


def _prune_addresses():
    for k in [k for k, v in _ADDR.items() if v[0]() is None]:
        del _ADDR[k]


class _Call:
    """The arrays of one kernel call: their addresses, and contiguous copies of the arrays a
    pointer cannot describe (other dtype, strided), written back once the kernel ran."""

    __slots__ = ("dt", "keep", "writebacks")

    def __init__(self, dt):
        self.dt = dt
        self.keep = []
        self.writebacks = []

    def address(self, a, size, write):
        dt = self.dt
        hit = _ADDR.get(id(a))
        if hit is not None and hit[2] is dt and hit[0]() is a:
            if a.size != size:
                _size_error(size, a.size)
            return hit[1]
        if a.size != size:
            _size_error(size, a.size)
        if a.dtype != dt or not a.flags.c_contiguous:
            tmp = np.ascontiguousarray(a, dtype=dt)
            self.keep.append(tmp)
            if write:
                self.writebacks.append((a, tmp))
            return tmp.ctypes.data
        if not a.flags.writeable:  # never cached: a cache hit may be written to
            if write:
                raise ValueError("numbagrad.optim: a parameter or state array is read-only")
            return a.ctypes.data
        # (a ctypes view of the buffer: a quarter of ndarray.ctypes's time, a gradient new
        # at every step being the common case)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(a)) if size else a.ctypes.data
        if len(_ADDR) > 16384:
            _prune_addresses()
        _ADDR[id(a)] = (weakref.ref(a), addr, dt)
        return addr

    def addresses(self, tensors, sizes, write):
        found = None if fast_push.addresses is None or type(tensors) is not list else \
            fast_push.addresses(tensors, self.dt.char, sizes, write)
        if found is None:  # (another dtype, a strided or read-only array, no C extension)
            found = [self.address(t._array(), n, write) for t, n in zip(tensors, sizes)]
        return np.array(found, np.int64)

    def finish(self):
        for orig, tmp in self.writebacks:
            np.copyto(orig, tmp, casting="unsafe")


def _size_error(expected, got):
    raise RuntimeError(f"The size of tensor a ({got}) must match the size of tensor b "
                       f"({expected}) at non-singleton dimension 0")


# A group of at least this many elements is split over Numba's thread count threads: the
# hand-over to a worker thread costs tens of microseconds, which an elementwise update of
# fewer elements does not pay back (bench/bench_optim.py).
PARALLEL_MIN = int(os.environ.get("NUMBAGRAD_OPTIM_PARALLEL_MIN", 1 << 19))


def _threads(total):
    if total < PARALLEL_MIN:
        return 1
    fit_threads()
    return num_threads()


def _step_threaded(parts, code, p_at, g_at, s_at, sizes, hp, pp, itemsize):
    """The kernel over ``parts`` equal shares of the elements, one per thread (the kernel
    releases the GIL): a share is a list of pieces of parameters, addresses offset."""
    total = int(sizes.sum())
    share = -(-total // parts)
    pieces = [[] for _ in range(parts)]
    off = 0
    for i, n in enumerate(sizes.tolist()):
        lo = 0
        while lo < n:
            k = min((off + lo) // share, parts - 1)
            hi = n if k == parts - 1 else min(n, (k + 1) * share - off)
            pieces[k].append((i, lo, hi))
            lo = hi
        off += n
    calls = []
    for piece in pieces:
        if not piece:
            continue
        idx, lo, hi = (np.array(c, np.int64) for c in zip(*piece))
        shift = lo * itemsize
        args = [p_at[idx] + shift, g_at[idx] + shift]
        args += [np.where(s[idx] != 0, s[idx] + shift, 0) for s in s_at]
        calls.append((code, *args, hi - lo, hp, pp[idx]))
    in_parallel([functools.partial(_kernels.step, *c) for c in calls])


def _run(code, params, grads, slots, hp, pp):
    """Update ``params`` in place with their ``grads`` and state tensors (``slots``: up to three
    lists aligned with params, or None), by kernel ``code``, one call per dtype present."""
    dts = {p._data.dtype for p in params}
    if len(dts) > 1:
        for dt in dts:
            idx = [i for i, p in enumerate(params) if p._data.dtype == dt]
            _run(code, [params[i] for i in idx], [grads[i] for i in idx],
                 [None if s is None else [s[i] for i in idx] for s in slots],
                 hp, None if pp is None else [pp[i] for i in idx])
        return
    dt = dts.pop()
    call = _Call(dt)
    sizes = [p._data.size for p in params]
    p_at = call.addresses(params, sizes, True)
    g_at = call.addresses(grads, sizes, False)
    zeros = None
    s_at = []
    for k in range(3):
        s = slots[k] if k < len(slots) else None
        if s is None:
            if zeros is None:
                zeros = np.zeros(len(params), np.int64)
            s_at.append(zeros)
        else:
            s_at.append(call.addresses(s, sizes, True))
    sizes_arr = np.array(sizes, np.int64)
    hp_arr = np.array(hp, dt)
    pp_arr = (np.zeros((len(params), 1), dt) if pp is None
              else np.array(pp, dt).reshape(len(params), -1))
    parts = _threads(sum(sizes))
    if parts > 1:
        _step_threaded(parts, code, p_at, g_at, s_at, sizes_arr, hp_arr, pp_arr, dt.itemsize)
    else:
        _kernels.step(code, p_at, g_at, s_at[0], s_at[1], s_at[2], sizes_arr, hp_arr, pp_arr)
    call.finish()
    for p in params:
        _bump_version(p)


def _params_with_grad(group):
    params, grads = [], []
    for p in group["params"]:
        g = p._grad
        if g is not None:
            params.append(p)
            grads.append(g)
    return params, grads


def _zeros_like(p, fill=0.0):
    d = p._data
    return _make(np.full(np.shape(d), fill, d.dtype))
