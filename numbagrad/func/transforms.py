# Over 600 lines: the transforms share one model of a call (_Call: argnums, pytrees, NumPy
# in and out) and the nesting state, as torch's eager_transforms.py does.
"""numbagrad.func: torch.func's function transforms (grad, grad_and_value, vjp, jvp, jacrev,
jacfwd, hessian) and JAX's value_and_grad, built on ``numbagrad.autograd.grad``.

They mirror torch/_functorch/eager_transforms.py (torch 2.13): the same signatures, argnums
rules, pytree structure of results (tuples, lists and dicts of arguments and outputs) and error
messages. How they differ:

* **NumPy in, NumPy out.** Besides Tensors, the arguments may be NumPy arrays and Python floats.
  A call whose arguments hold no Tensor at all returns NumPy: each gradient (and Jacobian block)
  is an ndarray with the dtype of its input (a Python float for a Python float input, a NumPy
  scalar for a NumPy scalar input, when the result is 0-d); values and aux outputs are ndarrays,
  or Python numbers when 0-d. NumPy arrays among the other arguments are handed to ``func`` as
  Tensors. Tensors in give Tensors out (so nested transforms see Tensors).
* **No functorch levels.** torch.func wraps the arguments at a new "level"; here the
  differentiated arguments become fresh leaves requiring grad (or a differentiable view of the
  argument when it already requires grad, so that an outer transform or autograd sees through).
  The gradients keep their graph (``create_graph=True``) when the call is nested in another
  transform of this module or an argument requires grad; otherwise they are computed without
  one and returned detached. A tensor requiring grad that ``func`` captures from a closure,
  with no transform or argument requiring grad around it, is therefore not differentiated
  through: torch.func would keep that graph.
* **jvp in forward mode, jacfwd in reverse mode.** jvp runs ``func`` once under a forward AD
  level (numbagrad.autograd.forward_ad: elementwise ops, views, indexing, reductions, products
  and softmax by forward rules; the other structured ops (convolutions, pooling, norms, losses,
  var/std/norm, prod, max/min, logsumexp) by that module's per-op fallback through the op's
  own differentiable derivative), except when its result must keep a graph (nested in another
  transform, or an argument requires grad), where it takes the double-backward trick.
  jacfwd (and so hessian, jacfwd of jacrev in torch) computes the Jacobian by reverse mode,
  one backward pass per output element (there is no vmap to batch the forward passes);
  results are the same. jacrev's ``chunk_size`` is checked and otherwise unused (there is no
  vmap: the rows are computed one by one), as is jacfwd's ``randomness``.
* Pytree structures in messages (vjp's cotangents) are printed as torch's treespec_pprint
  prints them; jvp's structure mismatch names them the same way, where torch prints TreeSpec
  objects. vmap, linearize and functionalize are not here.
* jvp (the transform), hessian and any nesting need ``create_graph=True`` in
  ``numbagrad.autograd.grad``.
"""

import contextlib
import functools
import threading

import numpy as np

from .. import autograd, dtypes
from ..autograd import forward_ad, forward_ad_batched
from ..core.grad_mode import enable_grad, is_grad_enabled
from ..factories import as_tensor, from_numpy, tensor, zeros, zeros_like
from ..ops.shape.join import stack
from ..tensor import Tensor
from .closures import mark_made, reaches_other_leaf

__all__ = ["grad", "grad_and_value", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian"]

_JVP_STR = "jvp(f, primals, tangents)"


# ---- nesting: a transform called inside another must keep its graph -------------------------
class _Nesting(threading.local):
    depth = 0
    entered = 0  # transforms entered so far in this thread (jacfwd watches for inner ones)


_nesting = _Nesting()


@contextlib.contextmanager
def _inside_transform():
    _nesting.depth += 1
    _nesting.entered += 1
    try:
        yield
    finally:
        _nesting.depth -= 1


# ---- a small pytree: tuples, lists, dicts and namedtuples hold leaves (torch's tree_flatten) --
def _tree_flatten(tree):
    """Leaves (depth first) and a spec to rebuild the structure; a spec is None for a leaf, or
    (type, keys, child specs)."""
    leaves = []
    return leaves, _flatten_into(tree, leaves)


# Module-level recursions, not closures: a nested function that calls itself is a reference
# cycle, which kept every call's leaves (inputs, 32 MB gradients) alive until the next
# garbage collection.
def _flatten_into(x, leaves):
    if type(x) is np.ndarray:  # the common leaf, first (list comprehensions: faster than
        leaves.append(x)       # tuple() of a generator, on every compiled call)
        return None
    if isinstance(x, dict):
        return (dict, tuple(x), tuple([_flatten_into(v, leaves) for v in x.values()]))
    if isinstance(x, (tuple, list)):
        return (type(x), None, tuple([_flatten_into(v, leaves) for v in x]))
    leaves.append(x)
    return None


def _tree_unflatten(leaves, spec):
    return _build(spec, iter(leaves))


def _build(s, it):
    if s is None:
        return next(it)
    kind, keys, children = s
    values = [next(it) if c is None else _build(c, it) for c in children]
    if kind is tuple or kind is list:
        return kind(values)
    if kind is dict:
        return dict(zip(keys, values))
    if hasattr(kind, "_fields"):  # namedtuple
        return kind(*values)
    return kind(values)


def _tree_map(fn, tree):
    leaves, spec = _tree_flatten(tree)
    return _tree_unflatten([fn(x) for x in leaves], spec)


def _spec_str(spec):
    """torch's treespec_pprint: ``*`` per leaf, ``(*, *)``, ``[*]``, ``{'a': *}``."""
    if spec is None:
        return "*"
    kind, keys, children = spec
    parts = [_spec_str(c) for c in children]
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(keys, parts)) + "}"
    if kind is list:
        return "[" + ", ".join(parts) + "]"
    if len(parts) == 1:
        return f"({parts[0]},)"
    return "(" + ", ".join(parts) + ")"


# ---- argnums (torch's checks and messages) ---------------------------------------------------
def _validate_and_wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if argnum >= 0 and argnum < num_args:
        return argnum
    if argnum < 0 and argnum >= -num_args:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _wrap_argnums(argnums, num_args):
    """argnums checked and made non-negative; None means every argument (vjp, jvp)."""
    if argnums is None:
        return None
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return _validate_and_wrap_argnum(argnums, num_args)
    argnums = tuple(_validate_and_wrap_argnum(a, num_args) for a in argnums)
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return argnums


# ---- arguments in, results out ---------------------------------------------------------------
_NUMPY_AS_TENSOR = {np.dtype(t) for t in (np.float32, np.float64, np.int64, np.int32, np.bool_)}


def _make_differentiable(x):
    """A new tensor requiring grad for one differentiated leaf (torch's _create_differentiable,
    which also makes a new object per call)."""
    if isinstance(x, Tensor):
        if x.requires_grad:
            # keep the history: an outer transform (or autograd) differentiates through us
            return x.view_as(x)
        return mark_made(x.detach().requires_grad_())
    if isinstance(x, (np.ndarray, np.generic)):
        # a copy: the caller's array is theirs
        return mark_made(from_numpy(np.array(x)).requires_grad_())
    if isinstance(x, float):
        # Python floats are doubles: float64 keeps them exact
        return mark_made(tensor(x, dtype=dtypes.float64, requires_grad=True))
    raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")


def _numpy_arg(x):
    """A non-differentiated NumPy array reaches ``func`` as a Tensor (other values as they are)."""
    if isinstance(x, np.ndarray) and x.dtype in _NUMPY_AS_TENSOR:
        return from_numpy(x)
    return x


def _to_numpy(t):
    a = np.array(t.detach().numpy())
    return a.item() if a.ndim == 0 else a


class _Call:
    """One call of a transformed function: the arguments as ``func`` will see them, the
    differentiable leaves, and the conventions for what is handed back (NumPy or Tensor, with
    or without graph)."""

    def __init__(self, args, kwargs, argnums):
        leaves = _tree_flatten((args, kwargs))[0]
        tensors = [x for x in leaves if isinstance(x, Tensor)]
        self.numpy_mode = not tensors
        # nested in another transform, or under autograd: the results must be differentiable
        self.create_graph = _nesting.depth > 0 or (
            is_grad_enabled() and any(t.requires_grad for t in tensors))
        self.grad_enabled = is_grad_enabled()  # (the caller's: the transform enables its own)
        argnums = _wrap_argnums(argnums, len(args))
        # the differentiated part of the arguments, as torch's _slice_argnums(as_tuple=False):
        # all of them (argnums None), one argument (int) or a tuple of them
        if argnums is None:
            positions, diff = range(len(args)), tuple(args)
        elif isinstance(argnums, int):
            positions, diff = (argnums,), args[argnums]
        else:
            positions, diff = argnums, tuple(args[i] for i in argnums)
        self.orig_leaves, self.diff_spec = _tree_flatten(diff)
        self.diff_leaves = [_make_differentiable(x) for x in self.orig_leaves]
        # a dual argument stays dual; its tangent then flows through the backward, which
        # must be the recorded one (forward over reverse). Not inside another transform:
        # jacfwd's own forward pass then falls back to reverse over reverse
        duals = [forward_ad.tangent(x) if isinstance(x, Tensor) and _nesting.depth == 0
                 else None for x in self.orig_leaves]
        for leaf, t in zip(self.diff_leaves, duals):
            forward_ad.set_tangent(leaf, t)
        self.keep_graph = self.create_graph  # what is handed back keeps its graph
        self.create_graph = self.keep_graph or any(t is not None for t in duals)
        self._argnums, self._positions, self._given = argnums, positions, args
        self.args = self.with_leaves(self.diff_leaves)
        self.kwargs = _tree_map(_numpy_arg if self.numpy_mode else (lambda x: x), kwargs)

    def closed_over(self, outputs):
        """After ``func`` ran: where its ``outputs`` depend on a tensor that requires grad
        other than the differentiated leaves (a module's weights), the results keep their
        graph to it, as torch's."""
        if not self.keep_graph and self.grad_enabled and \
                reaches_other_leaf(outputs, self.diff_leaves):
            self.keep_graph = self.create_graph = True
        return self.create_graph

    def with_leaves(self, leaves):
        """The arguments with ``leaves`` in the differentiated places."""
        new_diff = _tree_unflatten(list(leaves), self.diff_spec)
        replaced = {self._argnums: new_diff} if isinstance(self._argnums, int) else \
            dict(zip(self._positions, new_diff))
        convert = _numpy_arg if self.numpy_mode else (lambda x: x)
        return tuple(replaced[i] if i in replaced else _tree_map(convert, a)
                     for i, a in enumerate(self._given))

    def value(self, tree):
        """An output (or aux) of ``func`` as handed back: NumPy in NumPy mode, else Tensors,
        detached unless the graph is kept."""
        def out(x):
            if not isinstance(x, Tensor):
                return x
            if self.numpy_mode:
                return _to_numpy(x)
            return x if self.keep_graph else _detached(x)
        return _tree_map(out, tree)

    def per_input(self, flat):
        """One result per differentiated leaf (a gradient, a Jacobian block) in that leaf's
        kind, rebuilt into the structure of the differentiated arguments."""
        return _tree_unflatten([self._like(g, x) for g, x in zip(flat, self.orig_leaves)],
                               self.diff_spec)

    def _like(self, g, orig):
        if isinstance(orig, Tensor):
            return g if self.keep_graph else _detached(g)
        a = np.array(g.detach().numpy())
        if isinstance(orig, (np.ndarray, np.generic)):
            a = a.astype(orig.dtype, copy=False)
            return orig.dtype.type(a) if isinstance(orig, np.generic) and a.ndim == 0 else a
        return float(a) if a.ndim == 0 else a


def _detached(x):
    """``x.detach()``, keeping its tangent (detached too) where it has one."""
    d = x.detach()
    t = forward_ad.tangent(x)
    if t is not None:
        forward_ad.set_tangent(d, t.detach())
    return d


def _as_tensor(x):
    return x if isinstance(x, Tensor) else as_tensor(np.asarray(x))


def _autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=True):
    """autograd.grad over the outputs that require grad, zeros for inputs nothing reached
    (torch.func's _autograd_grad). torch.func passes retain_graph=False: its transforms keep
    their graphs apart by level. Here the forward graph is shared with any outer transform,
    which backpropagates through it again, so it is retained whenever the graph is created
    (autograd.grad's default)."""
    if grad_outputs is None:
        diff_outputs = tuple(out for out in outputs if out.requires_grad)
    else:
        result = tuple((out, go) for out, go in zip(outputs, grad_outputs) if out.requires_grad)
        diff_outputs, grad_outputs = (tuple(zip(*result)) if result else ((), ()))
    if len(diff_outputs) == 0:
        return tuple(zeros_like(inp) for inp in inputs)
    grad_inputs = autograd.grad(diff_outputs, inputs, grad_outputs, retain_graph=retain_graph,
                                create_graph=create_graph, allow_unused=True)
    return tuple(zeros_like(inp) if gi is None else gi for gi, inp in zip(grad_inputs, inputs))


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    return output


def _check_tensor_outputs(flat, api):
    """torch's assert_non_empty_tensor_output."""
    if (len(flat) == 1 and flat[0] is None) or len(flat) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                           f"(got output = {flat})")
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors"
                               f", got unsupported type {type(o)}")


# ---- grad, grad_and_value, value_and_grad ----------------------------------------------------
def _grad_and_value_impl(func, argnums, has_aux, args, kwargs):
    """(gradients, value) or (gradients, (value, aux)), as torch's grad_and_value_impl."""
    call = _Call(args, kwargs, argnums)
    with _inside_transform(), enable_grad():
        output, aux = _split_aux(func(*call.args, **call.kwargs), has_aux,
                                 "grad_and_value(f)(*args)")
        if not isinstance(output, Tensor):
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) "
                               f"to return a Tensor, got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) "
                               "to return a scalar Tensor, got tensor with "
                               f"{output.dim()} dims. Maybe you wanted to "
                               "use the vjp or jacrev APIs instead?")
        flat_grad = _autograd_grad((output,), call.diff_leaves,
                                   create_graph=call.closed_over((output,)))
    grads = call.per_input(flat_grad)
    if has_aux:
        return grads, (call.value(output), call.value(aux))
    return grads, call.value(output)


def grad_and_value(func, argnums=0, has_aux=False):
    """torch.func.grad_and_value: ``func`` -> a function returning ``(gradient, value)``, or
    ``(gradient, (value, aux))`` with ``has_aux``.

    Examples:
        >>> import numbagrad as torch
        >>> from numbagrad.func import grad_and_value
        >>> grad_and_value(lambda x: (x * x).sum())(torch.tensor([3.]))
        (tensor([6.]), tensor(9.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value_impl(func, argnums, has_aux, args, kwargs)
    # what numbagrad.compile needs to trace the transform instead of calling it
    wrapper._numbagrad_transform = ('grad_and_value', func, argnums, has_aux)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """torch.func.grad: ``func`` (returning a scalar) -> its gradient function; with
    ``has_aux`` the new function returns ``(gradient, aux)``.

    Examples:
        >>> import numbagrad as torch
        >>> from numbagrad.func import grad
        >>> grad(lambda x: (x ** 2).sum())(torch.tensor([1., 2.]))
        tensor([2., 4.])
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = _grad_and_value_impl(func, argnums, has_aux, args, kwargs)
        return (g, value[1]) if has_aux else g
    # what numbagrad.compile needs to trace the transform instead of calling it
    wrapper._numbagrad_transform = ('grad', func, argnums, has_aux)
    return wrapper


def value_and_grad(func, argnums=0, has_aux=False):
    """JAX's value_and_grad (torch has none): a function returning ``(value, gradient)``, or
    ``((value, aux), gradient)`` with ``has_aux``; the reverse order of grad_and_value.

    Args:
        func: the function to differentiate; it returns a scalar (0-d) tensor, or with
            ``has_aux`` a pair (scalar, aux).
        argnums: the position of the argument to differentiate with respect to, or a
            tuple of positions (default 0), as for ``grad``.
        has_aux: whether ``func`` returns (value, aux) (default False).

    Returns:
        A function of ``func``'s arguments returning (value, gradient), or
        ((value, aux), gradient); the gradient has the differentiated argument's
        structure (a tuple of them for a tuple ``argnums``).

    Examples:
        >>> import numbagrad as torch
        >>> import numpy as np
        >>> from numbagrad.func import value_and_grad
        >>> value, g = value_and_grad(lambda x: (x ** 2).sum())(np.array([1., 2.]))
        >>> value, g
        (5.0, array([2., 4.]))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = _grad_and_value_impl(func, argnums, has_aux, args, kwargs)
        return value, g
    # what numbagrad.compile needs to trace the transform instead of calling it
    wrapper._numbagrad_transform = ('value_and_grad', func, argnums, has_aux)
    return wrapper


# ---- vjp -------------------------------------------------------------------------------------
def vjp(func, *primals, has_aux=False):
    """torch.func.vjp: ``(func(*primals), vjp_fn)`` (and aux); ``vjp_fn(cotangents)`` returns a
    tuple with one vector-Jacobian product per primal."""
    return _vjp_with_argnums(func, *primals, has_aux=has_aux)


def _vjp_with_argnums(func, *primals, argnums=None, has_aux=False):
    call = _Call(primals, {}, argnums)
    with _inside_transform(), enable_grad():
        primals_out, aux = _split_aux(func(*call.args), has_aux, "vjp(f, *primals)")
        flat_out, out_spec = _tree_flatten(primals_out)
        _check_tensor_outputs(flat_out, "vjp(f, *primals)")
        call.closed_over(flat_out)
        for o in flat_out:
            if not o.is_floating_point():
                raise RuntimeError("vjp(f, ...): All outputs of f must be "
                                   "floating-point or complex Tensors, got Tensor "
                                   f"with dtype {o.dtype}")
    results = call.value(primals_out)

    def wrapper(cotangents, retain_graph=True, create_graph=None):
        flat_cot, cot_spec = _tree_flatten(cotangents)
        if out_spec != cot_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same "
                               "as pytree structure of outputs to the function. "
                               f"cotangents: {_spec_str(cot_spec)}, "
                               f"primal output: {_spec_str(out_spec)}")
        flat_cot = [_as_tensor(c) for c in flat_cot]
        if create_graph is None:
            # torch keeps the graph whenever grad mode is on and lets its levels drop it; here
            # it is kept when something will differentiate the result
            create_graph = is_grad_enabled() and (
                call.create_graph or _nesting.depth > 0 or any(c.requires_grad for c in flat_cot))
        with enable_grad() if create_graph else contextlib.nullcontext():
            result = _autograd_grad(flat_out, call.diff_leaves, flat_cot,
                                    retain_graph=retain_graph, create_graph=create_graph)
        return call.per_input(result)

    if has_aux:
        return results, wrapper, call.value(aux)
    return results, wrapper


# ---- jvp (forward mode, or the double-backward trick) -----------------------------------------
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """torch.func.jvp: ``(func(*primals), J @ tangents)`` (and aux). Computed in forward mode
    (autograd.forward_ad; see its docstring for the ops that use the per-op fallback through
    their differentiable derivative) unless the result must keep a graph (nested in another
    transform, or an argument requires grad) or a dual level is already active: then by the
    double-backward trick, the vjp being linear in its cotangent u, differentiating ``vjp(u)``
    with respect to u against the tangents gives the jvp."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP_STR}: Expected primals to be a tuple. "
                           "E.g. it should be valid to call f(*primals).")
    flat_primals, primals_spec = _tree_flatten(primals)
    flat_tangents, tangents_spec = _tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_JVP_STR}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           "tangents also must be. Got primals with structure "
                           f"{_spec_str(primals_spec)} and tangents with structure "
                           f"{_spec_str(tangents_spec)}")
    for name, flat in (("primals", flat_primals), ("tangents", flat_tangents)):
        if len(flat) == 0:
            raise RuntimeError(f"{_JVP_STR}: Expected {name} to contain at least one Tensor.")
    call = _Call(primals, {}, None)
    flat_tangents = [_as_tensor(t) for t in flat_tangents]
    forward = not call.create_graph and forward_ad._current_level < 0
    with _inside_transform(), enable_grad(), \
            (forward_ad.dual_level() if forward else contextlib.nullcontext()):
        args = call.args
        if forward:  # the differentiated leaves (all of primals) become dual tensors
            args = tuple(_tree_unflatten(
                [forward_ad.make_dual(x, t.to(x.dtype) if t.dtype.is_floating_point else t)
                 for x, t in zip(call.diff_leaves, flat_tangents)], call.diff_spec))
        out, aux = _split_aux(func(*args), has_aux, _JVP_STR)
        flat_out, out_spec = _tree_flatten(out)
        _check_tensor_outputs(flat_out, _JVP_STR)
        call.closed_over(flat_out)
        if strict and not all(o.requires_grad for o in flat_out):
            raise RuntimeError("jvp(f, primals, tangents, strict=True): "
                               "The output of f is independent of "
                               "the inputs. This is not allowed with strict=True.")
        if forward:
            tangents_out = [_forward_tangent(o) for o in flat_out]
        else:
            tangents_out = _double_backward_jvp(flat_out, call.diff_leaves, flat_tangents,
                                                call.create_graph)
    primals_out = call.value(out)
    tangents_out = call.value(_tree_unflatten(list(tangents_out), out_spec))
    if has_aux:
        return primals_out, tangents_out, call.value(aux)
    return primals_out, tangents_out


def _forward_tangent(o):
    """An output's tangent under forward AD; zeros where it depends on no primal."""
    t = forward_ad.unpack_dual(o).tangent
    return zeros_like(o) if t is None else t


def _double_backward_jvp(outputs, inputs, tangents, create_graph):
    """J @ tangents per output: the vjp g(u) = u @ J is linear in the cotangent u, so the
    gradient of g(u) . tangents with respect to u is J @ tangents, whatever u is (zeros here;
    they only need to be finite and to require grad)."""
    us = [zeros_like(o, requires_grad=True) if o.requires_grad else None for o in outputs]
    live = [k for k, u in enumerate(us) if u is not None]
    result = [zeros_like(o) for o in outputs]
    if not live:
        return result
    vjps = autograd.grad(tuple(outputs[k] for k in live), inputs,
                         tuple(us[k] for k in live), create_graph=True, allow_unused=True)
    pairs = [(g, t) for g, t in zip(vjps, tangents) if g is not None]
    if not pairs:
        return result
    jvps = _autograd_grad(tuple(g for g, _ in pairs), tuple(us[k] for k in live),
                          tuple(t for _, t in pairs), create_graph=create_graph)
    for k, j in zip(live, jvps):
        result[k] = j
    return result


# ---- jacrev, jacfwd, hessian -----------------------------------------------------------------
def _jacobian(func, args, argnums, has_aux, api):
    """The Jacobian of every output of ``func`` with respect to the ``argnums`` arguments, in
    torch's jacrev/jacfwd structure: the output's structure, each leaf replaced by the
    structure of the differentiated arguments holding (*out.shape, *arg.shape) blocks.
    Reverse mode either way: one backward per output element, seeded with a one-hot
    cotangent (torch's standard basis, one row at a time)."""
    call = _Call(args, {}, argnums)
    with _inside_transform(), enable_grad():
        out, aux = _split_aux(func(*call.args), has_aux, api)
        flat_out, out_spec = _tree_flatten(out)
        _check_tensor_outputs(flat_out, api)
        if api.startswith("vjp"):
            for o in flat_out:
                if not o.is_floating_point():
                    raise RuntimeError("vjp(f, ...): All outputs of f must be "
                                       "floating-point or complex Tensors, got Tensor "
                                       f"with dtype {o.dtype}")
        call.closed_over(flat_out)
        per_output = [_output_blocks(o, call.diff_leaves, call.create_graph)
                      for o in flat_out]
    return _jacobian_result(call, per_output, out_spec, has_aux, aux)


def _jacobian_result(call, per_output, out_spec, has_aux, aux):
    """The Jacobian from its blocks (per output: one per differentiated leaf), in the
    structure of the outputs and of the differentiated arguments; with aux if asked."""
    jac = _tree_unflatten([call.per_input(blocks) for blocks in per_output], out_spec)
    if has_aux:
        return jac, call.value(aux)
    return jac


def _output_blocks(o, inputs, create_graph):
    """d o / d input for each input, shaped (*o.shape, *input.shape)."""
    n = o.numel()
    if not o.requires_grad or n == 0:
        return [zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype) for x in inputs]
    rows = [[] for _ in inputs]
    for j in range(n):
        seed = np.zeros(n, o.dtype.np)
        seed[j] = 1
        grads = _autograd_grad((o,), inputs, (from_numpy(seed.reshape(tuple(o.shape))),),
                               retain_graph=True, create_graph=create_graph)
        for r, g in zip(rows, grads):
            r.append(g)
    return [stack(r, dim=0).reshape(tuple(o.shape) + tuple(x.shape))
            for r, x in zip(rows, inputs)]


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """torch.func.jacrev: ``func`` -> a function returning its Jacobian with respect to the
    ``argnums`` arguments (and aux).

    Examples:
        >>> import numbagrad as torch
        >>> from numbagrad.func import jacrev
        >>> jacrev(torch.sin)(torch.tensor([0., 0.]))
        tensor([[1., 0.],
                [0., 1.]])
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper_fn(*args):
        return _jacobian(func, args, argnums, has_aux, "vjp(f, *primals)")
    return wrapper_fn


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """torch.func.jacfwd: the Jacobian a column at a time, one forward-mode pass per element
    of the differentiated arguments (autograd.forward_ad). Where the result must keep a graph
    (nested in another transform, an argument requiring grad) or a dual level is already
    active, by reverse mode: the same values, one backward per output element.

    Examples:
        >>> import numbagrad as torch
        >>> from numbagrad.func import jacfwd
        >>> jacfwd(lambda x: x ** 2)(torch.tensor([1., 2.]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    @functools.wraps(func)
    def wrapper_fn(*args):
        call = _Call(args, {}, argnums)
        if call.create_graph or forward_ad._current_level >= 0:
            return _jacobian(func, args, argnums, has_aux, _JVP_STR)
        try:
            return _jacobian_forward(func, call, has_aux)
        except _InnerTransformError:
            # a transform inside f (hessian's jacrev) keeps a graph of its own, which no
            # tangent crosses: forward over reverse is reverse over reverse here
            return _jacobian(func, args, argnums, has_aux, _JVP_STR)
    return wrapper_fn


class _InnerTransformError(Exception):
    """f ran a transform of its own during a forward-mode pass of jacfwd."""


def _jacobian_forward(func, call, has_aux):
    """jacfwd's Jacobian by forward mode: all its columns in one pass, each leaf dual with a
    batch of tangents (one one-hot basis vector per element of all the leaves); where that
    pass cannot be batched (forward_ad_batched.py), one pass per column."""
    try:
        return _jacobian_batched(func, call, has_aux)
    except forward_ad.UnbatchableError:
        return _jacobian_by_columns(func, call, has_aux)


def _jacobian_batched(func, call, has_aux):
    leaves = call.diff_leaves
    sizes = [x.numel() for x in leaves]
    n = sum(sizes)
    if n == 0:
        raise forward_ad.UnbatchableError  # (the per-column path makes the empty Jacobian)
    with _inside_transform(), enable_grad(), forward_ad.dual_level(), \
            forward_ad_batched.batched(n):
        duals, start = [], 0
        for x, size in zip(leaves, sizes):
            basis = np.zeros((n, size), x.dtype.np)
            basis[np.arange(start, start + size), np.arange(size)] = 1
            start += size
            duals.append(forward_ad_batched.make_dual(
                x.detach(), from_numpy(basis.reshape((n, *x.shape)))))
        entered = _nesting.entered
        out, aux = _split_aux(func(*call.with_leaves(duals)), has_aux, _JVP_STR)
        if _nesting.entered != entered:
            raise forward_ad.UnbatchableError  # (a transform inside f: see _InnerTransformError)
        flat_out, out_spec = _tree_flatten(out)
        _check_tensor_outputs(flat_out, _JVP_STR)
        if call.closed_over(flat_out):  # (the Jacobian keeps a graph: column by column)
            raise forward_ad.UnbatchableError
        tangents = [forward_ad_batched.tangent(o) for o in flat_out]
        flat_out = [forward_ad._without_hook(lambda o: o.detach(), o) for o in flat_out]
    per_output = []
    for o, t in zip(flat_out, tangents):
        blocks, start = [], 0
        for x, size in zip(leaves, sizes):
            shape = tuple(o.shape) + tuple(x.shape)
            if t is None:
                blocks.append(zeros(shape, dtype=x.dtype))
            else:
                # rows start..start+size of the batch are this leaf's columns: (size, *out)
                # -> (*out, size) -> (*out, *x.shape), in the leaf's dtype (as reverse mode)
                cols = np.moveaxis(np.asarray(t._data)[start:start + size], 0, -1)
                blocks.append(from_numpy(np.ascontiguousarray(cols).reshape(shape)).to(
                    x.dtype))
            start += size
        per_output.append(blocks)
    return _jacobian_result(call, per_output, out_spec, has_aux, aux)


def _jacobian_by_columns(func, call, has_aux):
    """One forward pass per element of each differentiated leaf, that leaf dual with the
    one-hot basis vector as tangent; each output's tangent is the Jacobian's column."""
    leaves = call.diff_leaves
    columns = None  # per output: per leaf: the tangents, one per element of the leaf
    out = aux = None
    with _inside_transform(), enable_grad():
        for i, x in enumerate(leaves):
            plain = x.detach()
            for k in range(x.numel()):
                basis = np.zeros(x.numel(), x.dtype.np)
                basis[k] = 1
                with forward_ad.dual_level():
                    dual = forward_ad.make_dual(plain, from_numpy(basis.reshape(tuple(x.shape))))
                    args = call.with_leaves([dual if j == i else y.detach()
                                             for j, y in enumerate(leaves)])
                    entered = _nesting.entered
                    out, aux = _split_aux(func(*args), has_aux, _JVP_STR)
                    if _nesting.entered != entered:
                        raise _InnerTransformError
                    flat_out, out_spec = _tree_flatten(out)
                    _check_tensor_outputs(flat_out, _JVP_STR)
                    call.closed_over(flat_out)
                    tangents = [_forward_tangent(o) for o in flat_out]
                    out = [forward_ad.unpack_dual(o).primal for o in flat_out]
                if columns is None:
                    columns = [[[] for _ in leaves] for _ in flat_out]
                for c, t in zip(columns, tangents):
                    c[i].append(t)
        if columns is None:  # no element to differentiate: one plain call for the outputs
            out, aux = _split_aux(func(*call.with_leaves([y.detach() for y in leaves])),
                                  has_aux, _JVP_STR)
            flat_out, out_spec = _tree_flatten(out)
            _check_tensor_outputs(flat_out, _JVP_STR)
            out = flat_out
            columns = [[[] for _ in leaves] for _ in flat_out]
    per_output = []
    for o, per_leaf in zip(out, columns):
        blocks = []
        for x, cols in zip(leaves, per_leaf):
            shape = tuple(o.shape) + tuple(x.shape)
            if not cols:
                blocks.append(zeros(shape, dtype=x.dtype))
                continue
            # (*out, n) -> (*out, *x.shape); a column of another dtype takes the leaf's, as
            # the reverse mode's gradient has it
            blocks.append(stack(cols, dim=-1).reshape(shape).to(x.dtype))
        per_output.append(blocks)
    return _jacobian_result(call, per_output, out_spec, has_aux, aux)


def hessian(func, argnums=0):
    """torch.func.hessian: ``jacfwd(jacrev(func, argnums), argnums)``.

    Examples:
        >>> import numbagrad as torch
        >>> from numbagrad.func import hessian
        >>> hessian(lambda x: (x ** 3).sum())(torch.tensor([1., 2.]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
