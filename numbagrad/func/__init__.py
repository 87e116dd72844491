"""numbagrad.func: torch.func's function transforms (transforms.py: grad, vjp, jvp, jacrev,
jacfwd, hessian, value_and_grad) and vmap, functional_call, stack_module_state, linearize
(batching.py), replace_all_batch_norm_modules_ (batch_norm.py)."""

from .batch_norm import replace_all_batch_norm_modules_
from .batching import functional_call, linearize, stack_module_state, vmap
from .transforms import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    value_and_grad,
    vjp,
)

__all__ = ["grad", "grad_and_value", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian", "vmap", "functional_call", "stack_module_state", "linearize",
           "replace_all_batch_norm_modules_"]
