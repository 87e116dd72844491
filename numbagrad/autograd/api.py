"""backward() and autograd.grad(): torch's checks of the outputs and their seeds, then the
engine (or, with create_graph=True, the differentiable backward)."""

import warnings

import numpy as np

from ..core.grad_mode import enable_grad
from ..engine.record import fresh_view
from ..ops.elementwise.pointwise import to_dtype
from ..ops.shape.join import stack
from ..ops.shape.movement import reshape
from ..tensor import Tensor, _accumulate_grad, _make
from . import anomaly, engine
from .differentiable import _accumulate_tensor, run_backward_graph

_CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak.")


def _as_tuple(x):
    if x is None:
        return None
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _checked_inputs(inputs, empty_message):
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError(empty_message)
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    return inputs


def _roots(tensors, grad_tensors, inputs, on_leaf_root, as_tensors=False):
    """Check outputs and their seeds as torch does; returns (roots, seeds) for the engine.
    An output that is itself a leaf contributes its seed through ``on_leaf_root``. With
    ``as_tensors`` (create_graph) the seeds stay Tensors: they may require grad."""

    if grad_tensors is None:
        grads = (None,) * len(tensors)
    else:
        grads = _as_tuple(grad_tensors)
        for g in grads[:len(tensors)]:
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got "
                                f"{type(g).__name__}")
        if len(grads) < len(tensors):
            raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
        grads = grads[:len(tensors)]  # torch pairs them up with zip: extra ones are ignored
    roots, seeds = [], []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        if t._base is not None and t._view[1] != t._vc[0]:
            fresh_view(t)  # a view whose base changed in place: backward from its new node
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        if g is None:
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t._data.dtype.kind != "f" and not t.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                                   f"but got {t.dtype}")
            shape = t._data.shape
            # (np.array: np.ones's path is slow while the code is out of cache, as it is
            # after a long recording)
            g = np.array(1, t._data.dtype) if shape == () else np.ones(shape, t._data.dtype)
            if as_tensors:
                g = _make(g)
        else:
            seed = g
            g = g._array() if isinstance(g, Tensor) else np.asarray(g)
            if g.shape != np.shape(t._data):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"torch.Size({list(g.shape)}) and output[{i}] has a shape of "
                                   f"torch.Size({list(np.shape(t._data))}).")
            if as_tensors:
                g = seed if isinstance(seed, Tensor) else _make(g)
                if g._data.dtype != t._data.dtype:  # torch's engine takes the output's dtype
                    g = to_dtype(g, t.dtype)
        if t._tape is None:  # the output is a leaf: its gradient is the seed itself
            if inputs is None or any(x is t for x in inputs):
                on_leaf_root(t, g)
            continue
        roots.append(t)
        seeds.append(g)
    return roots, seeds


# the seed of a one-element output's implicit gradient, by its dtype (read, never written)
_ONES = {np.dtype(dt): np.array(1, dt) for dt in (np.float64, np.float32)}
for _seed in _ONES.values():
    _seed.flags.writeable = False


@anomaly.raised_at_user_call
def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """torch.autograd.backward: accumulate d(sum of tensors * grad_tensors)/d(leaf) into .grad.

    Examples:
        >>> import numbagrad as torch
        >>> w = torch.tensor([1., 2.], requires_grad=True)
        >>> torch.autograd.backward([(w * 3).sum()])
        >>> w.grad
        tensor([3., 3.])
    """

    if type(tensors) is Tensor and grad_tensors is None and inputs is None and \
            not create_graph and tensors._tape is not None and tensors._base is None and \
            tensors._requires_grad:
        seed = _ONES.get(tensors._data.dtype) if tensors._data.size == 1 else None
        if seed is not None:  # a loss's backward(): _roots' checks, in fewer steps
            engine.run_backward((tensors,), (seed,), bool(retain_graph), None)
            return
    tensors = _as_tuple(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _checked_inputs(inputs, "`inputs` argument to `backward()` cannot be empty.")
    if create_graph:
        warnings.warn(_CYCLE_WARNING, UserWarning, stacklevel=3)
        with enable_grad():
            roots, seeds = _roots(tensors, grad_tensors, inputs, _accumulate_tensor, True)
            if roots:
                run_backward_graph(roots, seeds, retain_graph, inputs)
        return
    roots, seeds = _roots(tensors, grad_tensors, inputs,
                          lambda t, g: _accumulate_grad(t, g.reshape(-1)))
    if roots:
        engine.run_backward(roots, seeds, retain_graph, inputs)


@anomaly.raised_at_user_call
def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad: the gradients of ``outputs`` with respect to ``inputs``, returned
    as a tuple; ``.grad`` attributes are left untouched.

    Examples:
        >>> import numbagrad as torch
        >>> x = torch.tensor(3., requires_grad=True)
        >>> y = x ** 3
        >>> (g,) = torch.autograd.grad(y, x, create_graph=True)
        >>> g
        tensor(27., grad_fn=<MulBackward0>)
        >>> torch.autograd.grad(g, x)
        (tensor(18.),)
    """

    if is_grads_batched:
        return _batched(outputs, inputs, grad_outputs, retain_graph, create_graph,
                        allow_unused, materialize_grads)
    outputs = _as_tuple(outputs)
    inputs = _checked_inputs(inputs, "grad requires non-empty inputs.")
    if retain_graph is None:
        retain_graph = create_graph
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    collect = {}
    if create_graph:
        return _grad_graph(outputs, inputs, grad_outputs, retain_graph, allow_unused,
                           materialize_grads)

    def leaf_root(t, g):
        part = np.array(g, dtype=np.float64).reshape(-1)
        collect[id(t)] = part if id(t) not in collect else collect[id(t)] + part

    roots, seeds = _roots(outputs, grad_outputs, inputs, leaf_root)
    if roots:
        engine.run_backward(roots, seeds, retain_graph, inputs, collect)
    return _results(inputs, collect, allow_unused, materialize_grads,
                    lambda g, t: _make(g.reshape(np.shape(t._data)).astype(t._data.dtype)))


def _batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
             materialize_grads):
    """grad(..., is_grads_batched=True): the first dim of every grad_output is a batch, each
    gradient gets it too. torch vmaps one backward over it; with no batching rules here, one
    backward per row (the graph retained for all but the last), stacked."""
    outputs = _as_tuple(outputs)
    gos = _as_tuple(grad_outputs)
    if gos is None or len(gos) != len(outputs) or any(not isinstance(g, Tensor) for g in gos):
        raise RuntimeError("numbagrad: is_grads_batched=True needs a batched Tensor in "
                           "grad_outputs for each output")
    for k, (o, g) in enumerate(zip(outputs, gos)):
        if g.ndim == 0 or tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions "
                "are expected to match the shape of corresponding output, but a mismatch was "
                # (torch's shape: that of grad_output[k][0] less its first dim)
                f"detected: grad_output[{k}] has a shape of {g.shape[2:]} and output[{k}] has "
                f"a shape of {o.shape}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap.")
    sizes = sorted({g.shape[0] for g in gos})
    if len(sizes) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    if retain_graph is None:
        retain_graph = create_graph
    rows = [grad(outputs, inputs, [g[b] for g in gos],
                 retain_graph=retain_graph if b == sizes[0] - 1 else True,
                 create_graph=create_graph, allow_unused=allow_unused,
                 materialize_grads=materialize_grads)
            for b in range(sizes[0])]
    return tuple(None if column[0] is None else stack(list(column))
                 for column in zip(*rows)) if rows else \
        tuple(None for _ in _as_tuple(inputs))


def _results(inputs, collect, allow_unused, materialize_grads, as_gradient):
    """autograd.grad's tuple: ``as_gradient(g, t)`` of each input's collected gradient, or
    for an input the graph did not reach zeros (``materialize_grads``), None, or torch's
    error unless ``allow_unused``."""
    result = []
    for i, t in enumerate(inputs):
        g = collect.get(id(t))
        if g is not None:
            result.append(as_gradient(g, t))
        elif not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been "
                               "used in the graph. Set allow_unused=True if this is the desired "
                               "behavior.")
        else:
            result.append(_make(np.zeros_like(t._array())) if materialize_grads else None)
    return tuple(result)


def _grad_graph(outputs, inputs, grad_outputs, retain_graph, allow_unused, materialize_grads):
    """autograd.grad(create_graph=True): the gradients are Tensors with their own graph."""
    collect = {}

    def leaf_root(t, g):
        collect[id(t)] = g if id(t) not in collect else collect[id(t)] + g

    with enable_grad():
        roots, seeds = _roots(outputs, grad_outputs, inputs, leaf_root, True)
        if roots:
            run_backward_graph(roots, seeds, retain_graph, inputs, collect)
        return _results(inputs, collect, allow_unused, materialize_grads, _graph_gradient)


def _graph_gradient(g, t):
    if tuple(g.shape) != t._data.shape:
        g = reshape(g, t._data.shape)
    return to_dtype(g, t.dtype)
