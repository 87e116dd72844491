# Over 600 lines: the Tensor class's own state and methods, one class (its operators and
# op methods are bound in _methods.py).
"""Tensor: a NumPy value, its autograd state (leaf flag, .grad, node on a tape) and torch's API."""

import warnings
import weakref

import numpy as np

from . import _format, dtypes
from ._foreign import foreign_array, is_array_like, sequence_dtype
from .core import trace_guards
from .core.tape import FLAG_HOOK
from .grad_fn import AccumulateGrad, GradFn, HookHandle, grad_fn_of  # noqa: F401
from .size import Size

_DTYPE_OF = {d.np: d for d in dtypes.ALL}
_guards = trace_guards.state


class Tensor:
    """A multi-dimensional array of one dtype, whose ops autograd can differentiate.

    Same as ``torch.Tensor``; the values are a NumPy array in host memory.

    Examples:
        >>> import numbagrad as torch
        >>> x = torch.ones(2, 3)
        >>> x.shape, x.dtype
        (torch.Size([2, 3]), torch.float32)
        >>> (x * 2 + 1).sum()
        tensor(18.)
    """

    # ``_data`` is a NumPy array, or a NumPy scalar for 0-d op results (cheaper to make;
    # turned into a 0-d array the moment anything needs to share or mutate it);
    # _view (views only): (the NumPy view functions from _base, version when recorded)
    __slots__ = ("_data", "_requires_grad", "_grad", "_tape", "_node", "_vc_list", "_base",
                 "_view", "_retains_grad", "_captured_by", "_hooks", "_post_hooks",
                 "__weakref__")
    __array_priority__ = 1000  # numpy scalars and arrays defer to our reflected operators

    def __new__(cls, *args, **kwargs):
        t = _new_object(cls)
        t._tape = None  # (also for a tensor whose __init__ raised)
        return t

    @property
    def _vc(self):
        """The version counter, a list shared with the views: ``[version, *aliases]``
        (mutation.py). Made on first use: most op results never need one, and a list
        per op would double the objects a scalar graph hands the garbage collector."""
        vc = self._vc_list
        if vc is None:
            vc = self._vc_list = [0]
        return vc

    @_vc.setter
    def _vc(self, vc):
        self._vc_list = vc

    def __init__(self, *args, device=None, size=None, **unexpected):
        """torch's legacy constructor: ``Tensor(data)`` in the default dtype, ``Tensor(*sizes)``
        uninitialized, ``Tensor(other)`` an alias of ``other`` (numbagrad/creation_legacy.py).

        Args:
            *args: nothing (an empty tensor), one sequence or NumPy array of values, ints
                or a Size (the shape), or one tensor (to alias).
            device: the device; only the CPU (default None).
            size: the shape, instead of positional sizes (default None).
            **unexpected: no other keyword is accepted (any raises TypeError).
        """
        if unexpected:
            raise invalid_legacy_arguments(args, unexpected)
        made = legacy_constructor(args, device, size)
        for name in _COPIED:
            setattr(self, name, getattr(made, name))
        if made._base is not None:
            self._view = made._view
        self._captured_by = self._hooks = self._post_hooks = None
        self._tape = None
        if made._tape is not None:  # an alias of a tensor that requires grad
            self._rebase(made._tape, made._node)

    def _init(self, data=None, requires_grad=False, dtype=None):
        """A tensor holding ``data`` (converted as torch.tensor would, or to ``dtype``)."""
        self._data = _to_numpy(data, dtype)
        self._grad = None
        self._tape = None
        self._node = -1
        self._vc = [0]
        self._base = None
        self._retains_grad = False
        self._requires_grad = False
        self._captured_by = None  # weak refs to the tapes holding this tensor as a source
        # set, not left empty: a backward reads both for every leaf, and a lookup of an
        # empty slot costs ten times a set one
        self._hooks = self._post_hooks = None
        if requires_grad:
            self.requires_grad = True

    # ---- the value ----------------------------------------------------------------------
    def _array(self):
        """The data as an ndarray that can be shared or written (materializes scalars)."""
        d = self._data
        if not isinstance(d, np.ndarray):
            d = self._data = np.array(d)
        return d

    @property
    def data(self):
        """The values as a tensor outside the graph, sharing memory; assigning replaces them.

        Same as ``torch.Tensor.data``.
        """
        t = _make(self._array())
        if self._requires_grad:  # (a counter of its own, as torch's .data: see WriteThrough)
            t._vc.append(WriteThrough(self))
        return trace_guards.derive(t, _same, (self,), ".data")

    @data.setter
    def data(self, value):
        value = value._array() if isinstance(value, Tensor) else np.asarray(value)
        old_shape = np.shape(self._data)
        self._data = value
        if self._requires_grad:
            _replaced(self, old_shape)

    @property
    def shape(self):
        """The size of each dimension, a ``Size``.

        Same as ``torch.Tensor.shape``.
        """
        return Size(self._data.shape)

    def size(self, dim=None):
        """The shape as a ``Size``, or the size of dimension ``dim``.

        Same as ``torch.Tensor.size``.
        """
        if dim is None:
            return self.shape
        if self.ndim == 0:  # torch wraps no dim of a 0-d tensor here
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return self._data.shape[_wrap_dim(dim, self.ndim, "size")]

    @property
    def ndim(self):
        """The number of dimensions.

        Same as ``torch.Tensor.ndim``.
        """
        return self._data.ndim

    def dim(self):
        """The number of dimensions.

        Same as ``torch.Tensor.dim``.
        """
        return self._data.ndim

    def numel(self):
        """The number of elements.

        Same as ``torch.Tensor.numel``; ``nelement`` is an alias.

        Returns:
            An int.
        """
        return int(self._data.size)

    nelement = numel

    @property
    def dtype(self):
        """The element type, a ``numbagrad.dtype``.

        Same as ``torch.Tensor.dtype``.
        """
        return _DTYPE_OF[self._data.dtype]

    @property
    def device(self):
        """Always ``"cpu"``: numbagrad tensors live in host memory.

        Same as ``torch.Tensor.device``.
        """
        return "cpu"

    @property
    def is_cuda(self):
        """Always False: numbagrad tensors live in host memory.

        Same as ``torch.Tensor.is_cuda``.
        """
        return False

    def is_floating_point(self):
        """Whether the dtype is a floating-point type.

        Same as ``torch.Tensor.is_floating_point``.
        """
        return self.dtype.is_floating_point

    def element_size(self):
        """The size of one element in bytes.

        Same as ``torch.Tensor.element_size``.
        """
        return self._data.itemsize

    def item(self):
        """The value of a one-element tensor as a Python number.

        Same as ``torch.Tensor.item``.
        """
        if _guards.tracing:
            trace_guards.read(self, "item()")
        data = self._data
        if data.size != 1:
            raise RuntimeError(f"a Tensor with {data.size} elements cannot be converted "
                               "to Scalar")
        return data.reshape(-1)[0].item() if data.ndim else data.item()

    def _item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        return self._data.reshape(-1)[0].item() if self._data.ndim else self._data.item()

    def tolist(self):
        """The values as a nested Python list (a number for a 0-d tensor).

        Same as ``torch.Tensor.tolist``.
        """
        trace_guards.read(self, "tolist()")
        return self._data.tolist()

    def numpy(self, *, force=False):
        """The values as a NumPy array that shares this tensor's memory.

        Same as ``torch.Tensor.numpy``. A tensor that requires grad
        needs ``force=True`` (or ``detach()`` first); the array is shared either way.
        """
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        trace_guards.read(self, "numpy()")
        return self._array()

    def __array__(self, dtype=None, copy=None):
        """NumPy's conversion (``np.asarray(t)``, ``np.array(t)``) with NumPy 2's ``copy``:
        True always copies, None copies only for a dtype change, False refuses to copy
        (ValueError). Without a copy the array shares this tensor's memory."""
        trace_guards.read(self, "conversion to a NumPy array")
        a = self._array()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError(f"Unable to avoid copy while creating an array as requested: "
                                 f"a torch.{self.dtype.name} tensor as {np.dtype(dtype)} "
                                 "needs a copy.")
            return a.astype(dtype)
        return a.copy() if copy else a

    # ---- autograd state ---------------------------------------------------------------------
    @property
    def requires_grad(self):
        """Whether autograd records the ops on this tensor; set it on leaves.

        Same as ``torch.Tensor.requires_grad``.
        """
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        flag = bool(flag)
        if self._tape is not None:
            if not flag:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach()."
                )
            return
        if flag and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self._requires_grad = flag

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place; returns this tensor.

        Same as ``torch.Tensor.requires_grad_``.
        """
        if requires_grad and self._tape is None and not self.dtype.is_floating_point:
            # (torch's three wordings: this one, the attribute's, and factories' capitalized)
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        """Whether this tensor was made by no recorded op (``backward`` fills a leaf's ``.grad``).

        Same as ``torch.Tensor.is_leaf``.
        """
        return self._tape is None

    @property
    def grad_fn(self):
        """The node of the recorded op that made this tensor, or None for a leaf.

        Same as ``torch.Tensor.grad_fn``.
        """
        return None if self._tape is None else grad_fn_of(self._tape, self._node)

    @property
    def grad(self):
        """The gradient that ``backward`` accumulated into this tensor, or None.

        Same as ``torch.Tensor.grad``.
        """
        if self._grad is None and self._tape is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead.", UserWarning,
                stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype "
                    f"'{_CPP_TYPE.get(value.dtype.scalar_name, value.dtype.scalar_name)}' to a "
                    f"tensor with grad_dtype '{self.dtype.scalar_name}'. The gradient must match "
                    "the tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                    "tensor's grad_dtype attribute with a specific dtype, or None to allow any "
                    "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its "
                    "gradient may break downstream systems that assume they match.")
        self._grad = value

    def retain_grad(self):
        """Make ``backward`` fill this non-leaf tensor's ``.grad`` too.

        Same as ``torch.Tensor.retain_grad``.
        """
        if self._tape is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        self._retains_grad = True
        self._tape.retained[self._node] = self

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a non-None return value
        replaces the gradient. Returns a handle whose ``remove()`` unregisters it.

        Args:
            hook: a callable taking the gradient tensor and returning None or a tensor to
                use instead. The tensor must require grad.

        Returns:
            A handle whose ``remove()`` unregisters the hook.

        Examples:
            >>> import numbagrad as torch
            >>> x = torch.tensor([1., 2.], requires_grad=True)
            >>> handle = x.register_hook(lambda g: g * 10)
            >>> (x * x).sum().backward()
            >>> x.grad
            tensor([20., 40.])
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        hooks = getattr(self, "_hooks", None)
        if hooks is None:
            hooks = self._hooks = []
        hooks.append(hook)
        if self._tape is not None:
            self._tape.hooks[self._node] = (hooks, self._data.shape, self._data.dtype)
            self._tape.set_flag(self._node, FLAG_HOOK)
        return HookHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` after a backward has accumulated into this leaf's ``.grad``
        (optimizers step parameters from such hooks). Returns a removable handle.

        Args:
            hook: a callable taking this tensor; its return value is ignored. The tensor
                must be a leaf that requires grad.

        Returns:
            A handle whose ``remove()`` unregisters the hook.
        """
        if self._tape is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        hooks = getattr(self, "_post_hooks", None)
        if hooks is None:
            hooks = self._post_hooks = []
        hooks.append(hook)
        return HookHandle(hooks, hook)

    @property
    def retains_grad(self):
        """Whether ``backward`` fills this non-leaf tensor's ``.grad``.

        Same as ``torch.Tensor.retains_grad``.
        """
        return self._retains_grad

    def detach(self):
        """A tensor of the same values (shared memory) outside the graph.

        Same as ``torch.Tensor.detach``.
        """
        t = _make(self._array())
        t._vc = self._vc
        if self._requires_grad:
            _note_alias(self)
        return trace_guards.derive(t, _same, (self,), "detach()") if _guards.tracing else t

    def detach_(self):
        """Detach this tensor from its graph in place, making it a leaf.

        Same as ``torch.Tensor.detach_``.
        """
        if self._base is not None and self._base._tape is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._rebase(None, -1)
        self._requires_grad = False
        return self

    @property
    def _version(self):
        return self._vc[0]

    # ---- printing -----------------------------------------------------------------------
    def __repr__(self, prefix="tensor("):
        suffixes = []
        if self._tape is not None:
            suffixes.append(f"grad_fn=<{self.grad_fn._short_name()}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        return _format.format_tensor(np.asarray(self._data), repr(self.dtype),
                                     repr(dtypes.get_default_dtype()), suffixes, prefix)

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:  # torch formats a 0-d tensor as its Python number
            return format(self.item(), spec)
        return repr(self)

    # ---- Python protocol ----------------------------------------------------------------------
    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self):
        if self._data.size != 1:
            how = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {how} is ambiguous")
        if _guards.tracing:
            trace_guards.read(self, "bool() (an `if`, `while`, `and` or `or` on a tensor)")
        return bool(self._item())

    def __float__(self):
        return float(self._scalar("float()"))

    def __int__(self):
        return int(self._scalar("int()"))

    def _scalar(self, what):
        if self._data.size != 1:  # torch's Python conversions raise ValueError, not item's error
            raise ValueError("only one element tensors can be converted to Python scalars")
        trace_guards.read(self, what)
        return self._item()

    def __index__(self):
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        trace_guards.read(self, "use as an index")
        return int(self._item())

    __hash__ = object.__hash__

    def _rebase(self, tape, node):
        """Point this tensor at another node (in-place ops, detach_); a retained gradient
        follows it, as torch moves retain_grad to the tensor's new grad_fn."""
        if self._retains_grad and self._tape is not None:
            if self._tape.retained.get(self._node) is self:
                del self._tape.retained[self._node]
            if tape is not None:
                tape.retained[node] = self
        self._tape, self._node = tape, node

    def __reduce__(self):
        # as torch pickles a tensor: its value, requires_grad and class (an nn.Parameter
        # stays one); not its .grad, nor its graph (a non-leaf comes back a leaf)
        state = getattr(self, "__dict__", None) or None
        return (_rebuild_tensor, (type(self), self._array(), self._requires_grad), state)


def _to_numpy(data, dtype=None, copy=True):
    """Python data / NumPy array / Tensor -> ndarray in torch's dtype for it."""
    dt = dtypes.as_dtype(dtype)
    if isinstance(data, Tensor):
        arr = data._array()
    elif isinstance(data, (np.ndarray, np.generic)) or is_array_like(data):
        # NumPy's, torch's and JAX's arrays (anything with __dlpack__ or __array__) keep
        # their dtype, as in torch
        arr = np.asarray(data) if isinstance(data, (np.ndarray, np.generic)) else \
            foreign_array(data)
        if dt is None or not arr.dtype.isnative:
            dtypes.from_numpy_dtype(arr.dtype)  # raises for unsupported dtypes
    else:
        if data is None:  # torch raises RuntimeError here (TypeError for other objects)
            raise RuntimeError("Could not infer dtype of NoneType")
        if isinstance(data, (list, tuple)):
            data = _unwrap(data)
            if dt is None:
                dt = sequence_dtype(data)
        try:
            arr = np.array(data)
        except ValueError as e:  # ragged nested lists: NumPy's message names no tensor
            raise ValueError(f"tensor(): expected sequences of equal length at each dim ({e})") \
                from None
        if dt is None:
            kind = arr.dtype.kind
            if kind == "f" or (kind in "iub" and arr.size == 0 and arr.dtype.kind != "b"):
                dt = dtypes.get_default_dtype()  # Python floats (and []) take the default
            elif kind in "iu":
                dt = dtypes.int64
            elif kind == "b":
                dt = dtypes.bool_
            else:
                raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    if dt is not None and arr.dtype != dt.np:
        return arr.astype(dt.np)
    return np.array(arr) if copy else arr


_PYTHON_NUMBERS = frozenset((float, int, bool))


def _unwrap(seq):
    if _PYTHON_NUMBERS.issuperset(map(type, seq)):
        return seq  # numbers only (the common case): NumPy reads them as they are, at C speed
    return [_unwrap(x) if isinstance(x, (list, tuple)) else _leaf(x) for x in seq]


def _leaf(x):
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (float, int, np.ndarray, np.generic)):
        return x
    arr = foreign_array(x)  # another library's tensor keeps its dtype, as torch's do
    return x if arr is None else arr


def _rebuild_tensor(cls, data, requires_grad):
    """An unpickled tensor (or copy.copy's): of class ``cls``, owning a copy of ``data``."""
    t = _new_object(cls)
    _init_tensor(t, data, requires_grad)
    return t


def _rebuild(data, requires_grad):
    """What pickles written before the class was recorded call."""
    return _rebuild_tensor(Tensor, data, requires_grad)


_COPIED = ("_data", "_grad", "_node", "_vc", "_base", "_retains_grad", "_requires_grad")
_new_object = object.__new__  # a bare instance (Tensor.__new__ is a Python call more)
_init_tensor = Tensor._init
# torch.Tensor(...)'s arguments -> the tensor it makes (set by creation_legacy, a layer above)
legacy_constructor = None
LEGACY_SIGNATURES = ("\n * (*, torch.device device = None)\n * (torch.Storage storage)\n"
                     " * (Tensor other)\n * (tuple of ints size, *, torch.device device = None)\n"
                     " * (object data, *, torch.device device = None)\n")


def invalid_legacy_arguments(args, kwargs=None):
    """torch's TypeError for arguments no form of its legacy constructor takes."""
    got = ", ".join([_type_name(a) for a in args] +
                    [f"{k}={_type_name(v)}" for k, v in (kwargs or {}).items()])
    return TypeError(f"new() received an invalid combination of arguments - got ({got}), but "
                     "expected one of:" + LEGACY_SIGNATURES)


def _type_name(v):
    """A value's type as torch's argument parser names it."""
    kind = type(v)
    if isinstance(v, Tensor):
        return "Tensor"
    if kind.__module__.startswith("numbagrad"):
        return "torch." + kind.__name__
    return kind.__name__


def _same(a):
    return a


def require_grad(t):
    """``t.requires_grad = True`` as torch's factories (and Parameter) set it, with their
    wording of the error for a tensor that is not floating point."""
    if not t.dtype.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    t.requires_grad = True
    return t


class WriteThrough:
    """On a ``.data`` alias's version counter: a change through the alias is a change of the
    tensor's recorded values, as torch's saved tensors (its storage) see it, with no version
    bump (torch's .data does not share the counter)."""

    __slots__ = ("ref",)

    def __init__(self, t):
        self.ref = weakref.ref(t)

    def write(self):
        t = self.ref()
        if t is None:
            return
        if t._tape is not None:
            t._tape.overwrite(t._node, t._data)
        for ref in t._captured_by or ():
            tape = ref()
            node = None if tape is None else tape.sources.get(id(t))
            if node is not None:
                tape.overwrite(node, t._data)


def _replaced(t, old_shape):
    """``t.data = ...`` gave ``t`` other memory, which torch's saved tensors see as well:
    of the same shape, the new values become the recorded ones (WriteThrough); else the
    tapes that captured a leaf forget its node (its next use records the new values), and
    a non-leaf moves to a node of the new values (record.refresh)."""
    if np.shape(t._data) == old_shape:
        WriteThrough(t).write()
        return
    for ref in t._captured_by or ():
        tape = ref()
        if tape is not None:
            tape.sources.pop(id(t), None)
    t._captured_by = None
    if t._tape is not None:
        refresh_hook(t)


# set by engine/record.py (the layer that records): record a tensor's current values as its
# new node, over its old one (record.refresh)
refresh_hook = None


# the C++ type names torch's messages give a dtype (its TypeMeta name)
_CPP_TYPE = {"Float": "float", "Double": "double", "Half": "c10::Half",
             "BFloat16": "c10::BFloat16", "Long": "long int", "Int": "int", "Short": "short int",
             "Char": "signed char", "Byte": "unsigned char", "Bool": "bool"}


def _note_alias(t):
    """``t`` (in a graph) has an alias now: registered on the version counter they share,
    weakly and once, so that a change through the alias reaches ``t``'s node."""
    vc = t._vc
    for ref in vc[1:]:
        if ref() is t:
            return
    vc[1:] = [ref for ref in vc[1:] if ref() is not None]
    vc.append(weakref.ref(t))


def _make(data, tape=None, node=-1):
    """Fast constructor for op results: no conversion, no checks."""
    t = _new_object(Tensor)
    t._data = data
    t._grad = None
    t._tape = tape
    t._node = node
    t._vc_list = None
    t._base = None
    t._retains_grad = False
    t._requires_grad = tape is not None
    # set, not left empty: a backward reads both of every leaf (an empty slot's lookup
    # costs ten times a set one), and a leaf is often made here (tensor(), detach(), ...)
    t._hooks = t._post_hooks = t._captured_by = None
    return t


def _wrap_dim(dim, ndim, op="dim"):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _accumulate_grad(t, flat, owned=False):
    """Add a flat float gradient into ``t.grad`` (creating it), in ``t``'s dtype and shape.
    ``owned``: the array is a fresh buffer nobody else holds, so it may become the grad."""
    shape = t._data.shape
    g = np.asarray(flat).reshape(shape).astype(t._data.dtype, copy=not owned)
    if t._grad is None:
        t._grad = _make(g)
    else:
        existing = t._grad._array()
        existing += g
    post_accumulate(t)


def post_accumulate(t):
    """Run ``t``'s post-accumulate-grad hooks (after its ``.grad`` was updated)."""
    hooks = getattr(t, "_post_hooks", None)
    if hooks:
        for hook in list(hooks):
            if hook(t) is not None:
                raise RuntimeError("post accumulate grad hooks cannot return anything.")
