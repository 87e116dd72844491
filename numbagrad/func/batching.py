"""torch.func's vmap, functional_call, stack_module_state and linearize.

vmap has no batching rules: it calls ``func`` once per index of the mapped dimension and
stacks the results (torch's semantics and errors for in_dims/out_dims, pytrees of inputs and
outputs, nesting, ``chunk_size``). The result is what torch's vmap returns and is
differentiable, at the cost of one call per row.
"""

import contextlib

from ..factories import default_generator
from ..ops.shape.join import stack
from ..tensor import Tensor
from .transforms import _tree_flatten, _tree_unflatten, jvp


def _dims_for(in_dims, args):
    """in_dims broadcast over the flat leaves of ``args`` (torch's rules)."""
    if isinstance(in_dims, int) or in_dims is None:
        flat, _ = _tree_flatten(args)
        return [in_dims] * len(flat)
    if not isinstance(in_dims, tuple):
        raise ValueError(f"vmap(<function>, in_dims={in_dims}, ...)(<inputs>): expected "
                         "`in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    if len(in_dims) != len(args):
        raise ValueError(f"vmap(<function>, in_dims={in_dims}, ...)(<inputs>): in_dims is "
                         f"not compatible with the structure of `inputs`. in_dims has "
                         f"structure {_tree_flatten(in_dims)[1]} but inputs has structure "
                         f"{_tree_flatten(args)[1]}.")
    dims = []
    for d, a in zip(in_dims, args):
        n = len(_tree_flatten(a)[0])
        if isinstance(d, (int, type(None))):
            dims += [d] * n
        else:
            dims += _dims_for(tuple(d) if isinstance(d, list) else d,
                              tuple(a) if isinstance(a, list) else a)
    return dims


def _batch_size(flat, dims):
    sizes = []
    for x, d in zip(flat, dims):
        if d is None:
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap(<function>, in_dims={d}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {type(x)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the "
                             "respective in_dim")
        if not -x.ndim <= d < max(x.ndim, 1) or x.ndim == 0:
            raise ValueError(f"vmap(<function>, in_dims=..., ...)(<inputs>): Got in_dim={d} "
                             f"for some input, but that input is a Tensor of dimensionality "
                             f"{x.ndim} so expected in_dim to satisfy -{x.ndim} <= in_dim < "
                             f"{x.ndim}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError("vmap(<function>, in_dims=..., ...)(<inputs>): at least one input "
                         "must be a Tensor mapped over a dimension (in_dims not None)")
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.func.vmap: ``func`` mapped over a dimension of its inputs (one call per index,
    results stacked along ``out_dims``).

    Examples:
        >>> import numbagrad as torch
        >>> from numbagrad.func import vmap
        >>> vmap(torch.dot)(torch.ones(3, 2), torch.ones(3, 2))
        tensor([2., 2., 2.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. "
                         f"(got {chunk_size})")

    def wrapped(*args, **kwargs):
        flat, spec = _tree_flatten(args)
        dims = _dims_for(in_dims, args)
        n = _batch_size(flat, dims)
        results = []
        gen = default_generator()
        state = gen.get_state() if randomness == "same" else None
        for i in range(n):
            if state is not None:  # every row draws the same numbers
                gen.set_state(state)
            row = [x if d is None else x[(slice(None),) * (d % x.ndim) + (i,)]
                   for x, d in zip(flat, dims)]
            results.append(func(*_tree_unflatten(row, spec), **kwargs))
        out_flat, out_spec = _tree_flatten(results[0])
        per_row = [_tree_flatten(r)[0] for r in results]
        odims = [out_dims] * len(out_flat) if isinstance(out_dims, (int, type(None))) else \
            list(_tree_flatten(out_dims)[0])
        if len(odims) != len(out_flat):
            raise ValueError(f"vmap(<function>, ..., out_dims={out_dims})(<inputs>): "
                             f"out_dims is not compatible with the structure of `outputs`.")
        stacked = []
        for k, d in enumerate(odims):
            column = [r[k] for r in per_row]
            if d is None:
                stacked.append(column[0])
                continue
            if not isinstance(column[0], Tensor):
                raise ValueError(f"vmap(<function>, ...): `<function>` must only return "
                                 f"Tensors, got type {type(column[0])}. Did you mean to set "
                                 "out_dims= to None for output?")
            stacked.append(stack(column, d))
        return _tree_unflatten(stacked, out_spec)
    return wrapped


@contextlib.contextmanager
def _swapped(module, tensors):
    """The module's parameters and buffers named in ``tensors`` (dotted names) replaced."""
    saved = []
    try:
        for name, value in tensors.items():
            owner, _, attr = name.rpartition(".")
            mod = module.get_submodule(owner) if owner else module
            for store in (mod._parameters, mod._buffers):
                if attr in store:
                    saved.append((store, attr, store[attr]))
                    store[attr] = value
                    break
            else:
                saved.append((mod.__dict__, attr, mod.__dict__.get(attr)))
                mod.__dict__[attr] = value
        yield
    finally:
        for store, attr, old in reversed(saved):
            store[attr] = old


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module`` with its parameters and buffers replaced by the given tensors."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        tensors = dict(dicts)
    else:
        tensors = {}
        for d in dicts:
            clash = set(tensors) & set(d)
            if clash:
                raise ValueError(f"{sorted(clash)} appeared in multiple dictionaries; behavior "
                                 "of functional call is ambiguous")
            tensors.update(d)
    if strict:
        expected = {n for n, _ in module.named_parameters()} | \
            {n for n, _ in module.named_buffers()}
        missing, unexpected = sorted(expected - set(tensors)), sorted(set(tensors) - expected)
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n"
                               f"\tUnexpected key(s): {unexpected}.\n"
                               f"\tMissing key(s): {missing}.")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, tensors):
        return module(*args, **(kwargs or {}))


def stack_module_state(models):
    """(params, buffers): each name's tensors of the models stacked on a new first dim; the
    stacked parameters are new leaves requiring grad where the originals did.

    Args:
        models: a non-empty iterable of modules of one class, all in training or all in
            eval mode.

    Returns:
        A tuple (params, buffers) of dicts from each name to a tensor of shape
        (len(models), *the original shape).
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/"
                           "eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {n: stack([dict(m.named_parameters())[n].detach() for m in models])
              .requires_grad_(p.requires_grad) for n, p in models[0].named_parameters()}
    buffers = {n: stack([dict(m.named_buffers())[n] for m in models])
               for n, _ in models[0].named_buffers()}
    return params, buffers


def linearize(func, *primals):
    """(func(*primals), jvp_fn): ``jvp_fn(*tangents)`` is J @ tangents at the primals (each
    call recomputes it through jvp; torch traces the linear map once)."""
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return out, jvp_fn


__all__ = ["vmap", "functional_call", "stack_module_state", "linearize"]
