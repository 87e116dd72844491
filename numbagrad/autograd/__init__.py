"""numbagrad.autograd: backward(), grad mode switches, and the tape machinery beneath them."""

import numpy as np

from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled

__all__ = ["backward", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "inference_mode"]

_CREATE_GRAPH = ("numbagrad: create_graph=True (higher-order gradients) is not implemented yet; "
                 "it is tracked by the issue 'Autograd depth: create_graph and higher order'")


def _as_tuple(x):
    if x is None:
        return None
    from ..tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """torch.autograd.backward: accumulate d(sum of tensors * grad_tensors)/d(leaf) into .grad."""
    from ..tensor import Tensor, _accumulate_grad
    from .engine import run_backward

    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError("grad can be implicitly created only for scalar outputs"
                           if not grads else
                           f"Mismatch in number of elements: got {len(grads)} gradients for "
                           f"{len(tensors)} tensors")
    if create_graph:
        raise NotImplementedError(_CREATE_GRAPH)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in inputs:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots, seeds = [], []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        if g is None:
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                                   f"but got {t.dtype}")
            g = np.ones(np.shape(t._data), t._data.dtype)
        else:
            g = g._array() if isinstance(g, Tensor) else np.asarray(g)
            if g.shape != np.shape(t._data):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"torch.Size({list(g.shape)}) and output[{i}] has a shape of "
                                   f"torch.Size({list(np.shape(t._data))}).")
        if t._tape is None:  # backward from a leaf: its gradient is the seed itself
            if inputs is None or any(x is t for x in inputs):
                _accumulate_grad(t, g.reshape(-1))
            continue
        roots.append(t)
        seeds.append(g)
    if roots:
        run_backward(roots, seeds, retain_graph, inputs)
