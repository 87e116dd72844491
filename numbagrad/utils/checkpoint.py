"""numbagrad.utils.checkpoint: torch.utils.checkpoint's interface.

``checkpoint(fn, *args)`` here runs ``fn`` once with gradients recorded as usual: values and
gradients (first and higher order) are the plain call's, but activations are kept rather
than recomputed in the backward pass, so it saves no memory. What torch's reentrant variant
does differently that user code can see is kept: it records nothing when no tensor argument
requires grad (a closure's parameters then get no gradient), and accepts no keyword
arguments for ``fn``.
"""

import warnings

from ..core.grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["checkpoint"]


def _noop_context_fn():
    return None


def checkpoint(function, *args, use_reentrant=None, context_fn=_noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """``function(*args, **kwargs)``, recorded for autograd; see the module docstring."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    kwargs.pop("preserve_rng_state", True)  # draws are not replayed: nothing to preserve
    if not use_reentrant:
        return function(*args, **kwargs)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if context_fn is not _noop_context_fn or debug:
        raise ValueError("Passing `context_fn` or `debug` is only supported when "
                         "use_reentrant=False.")
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)
        with no_grad():
            return function(*args)
    return function(*args)
