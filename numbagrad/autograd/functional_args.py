"""The argument handling of numbagrad.autograd.functional: torch's helpers of
torch/autograd/functional.py, one for one (tuples in and out, inputs prepared for grad,
zeros for outputs independent of an input, torch's messages)."""

from ..factories import zeros_like
from ..ops.shape.join import stack
from ..tensor import Tensor
from .api import grad


def _as_tuple_nocheck(x):
    if isinstance(x, tuple):
        return x
    elif isinstance(x, list):
        return tuple(x)
    else:
        return (x,)


def _as_tuple(inp, arg_name=None, fn_name=None):
    """Ensure ``inp`` is a tuple of Tensors; returns (was it a tuple, the tuple)."""
    if arg_name is None and fn_name is None:
        return _as_tuple_nocheck(inp)

    is_inp_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_inp_tuple = False

    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            if is_inp_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                    f"Tensors but the value at index {i} has type {type(el)}.")
            else:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                    f"Tensors but the given {arg_name} has type {type(el)}.")

    return is_inp_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: ``to_unpack`` is one flag, or (outputs flag, inputs flag) for the
    nested tuples of jacobian/hessian."""
    if isinstance(to_unpack, tuple):
        assert len(to_unpack) == 2
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    else:
        if not to_unpack:
            res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """New Tensor objects for the inputs (so the function's own captures of the same tensors are
    told apart, as torch.autograd.functional does): a differentiable view when
    ``create_graph`` must keep the input's history, a detached tensor requiring grad iff
    ``need_graph`` otherwise."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    """Detach the results unless the user asked for their graph."""
    if isinstance(inputs[0], Tensor):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        else:
            return inputs
    else:
        return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    """``v`` (a tuple of Tensors) must match ``other`` in length and in every size."""
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        else:
            raise RuntimeError("The given v should contain a single Tensor.")

    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = ""
            if is_other_tuple:
                prepend = f"Entry {idx} in "
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {el_other.size()} but got "
                f"{el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    """In strict mode, raise torch's error for the first tensor that does not require grad."""
    if not strict:
        return

    if input_type not in ["outputs", "grad_inputs", "jacobian", "hessian"]:
        raise RuntimeError("Invalid input_type to _check_requires_grad")
    for i, inp in enumerate(inputs):
        if inp is None:
            # This can only be reached for grad_inputs.
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}."
                " This is not allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect to input {i}"
                    " is independent of the input. This is not allowed in strict mode."
                    " You should ensure that your function is thrice differentiable and that"
                    " the hessian depends on the inputs.")
            elif input_type == "jacobian":
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided"
                    f" function with respect to input {i} is independent of the input. This is"
                    " not allowed in strict mode. You should ensure that your function is twice"
                    " differentiable and that the jacobian depends on the inputs (this would be"
                    " violated by a linear function for example).")
            elif input_type == "grad_inputs":
                raise RuntimeError(
                    f"The gradient with respect to input {i} is independent of the inputs of"
                    " the user-provided function. This is not allowed in strict mode.")
            else:
                raise RuntimeError(
                    f"Output {i} of the user-provided function does not require gradients."
                    " The outputs must be computed in a differentiable manner from the input"
                    " when running in strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    """autograd.grad that accepts ``None`` (and non-differentiable tensors) among the outputs
    and skips them; returns None for inputs nothing depends on (allow_unused=True)."""
    assert isinstance(outputs, tuple)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    assert isinstance(grad_outputs, tuple)
    assert len(outputs) == len(grad_outputs)

    new_outputs = ()
    new_grad_outputs = ()
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs += (out,)
            new_grad_outputs += (grad_out,)

    if len(new_outputs) == 0:
        # No differentiable output, we don't need to call the autograd engine
        return (None,) * len(inputs)
    if is_grads_batched:
        return _batched_grad(new_outputs, inputs, new_grad_outputs, create_graph, retain_graph)
    return grad(new_outputs, inputs, new_grad_outputs, allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph)


def _batched_grad(outputs, inputs, grad_outputs, create_graph, retain_graph):
    """What ``autograd.grad(..., is_grads_batched=True)`` returns, one backward per row of the
    batched ``grad_outputs`` (torch runs them at once under vmap): per input, the stacked
    gradients, or None when no row reached it."""
    n = grad_outputs[0].shape[0]
    rows = []
    for b in range(n):
        # every row but the last needs the graph again
        retain = True if b < n - 1 else retain_graph
        rows.append(grad(outputs, inputs, tuple(g[b] for g in grad_outputs),
                         allow_unused=True, create_graph=create_graph, retain_graph=retain))
    res = []
    for i, inp in enumerate(inputs):
        col = [r[i] for r in rows]
        if n == 0 or all(g is None for g in col):
            res.append(None)
        else:
            res.append(stack([zeros_like(inp) if g is None else g for g in col], dim=0))
    return tuple(res)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Replace the Nones in ``grads`` by zeros shaped like ``refs``, or raise torch's error in
    strict mode; ``stage`` names the backward call, for the message."""
    if stage not in ["back", "back_trick", "double_back", "double_back_trick"]:
        raise RuntimeError(f"Invalid stage argument '{stage}' to _fill_in_zeros")

    res = ()
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(
                        "The output of the user-provided function is independent of "
                        f"input {i}. This is not allowed in strict mode.")
                elif stage == "back_trick":
                    raise RuntimeError(
                        f"The gradient with respect to the input is independent of entry {i}"
                        " in the grad_outputs when using the double backward trick to compute"
                        " forward mode gradients. This is not allowed in strict mode.")
                elif stage == "double_back":
                    raise RuntimeError(
                        "The jacobian of the user-provided function is independent of "
                        f"input {i}. This is not allowed in strict mode.")
                else:
                    raise RuntimeError(
                        "The hessian of the user-provided function is independent of "
                        f"entry {i} in the grad_jacobian. This is not allowed in strict "
                        "mode as it prevents from using the double backward trick to "
                        "replace forward mode AD.")

            grads_i = zeros_like(refs[i])
        else:
            if strict and create_graph and not grads_i.requires_grad:
                if "double" not in stage:
                    raise RuntimeError(
                        "The jacobian of the user-provided function is independent of "
                        f"input {i}. This is not allowed in strict mode when create_graph=True.")
                else:
                    raise RuntimeError(
                        "The hessian of the user-provided function is independent of "
                        f"input {i}. This is not allowed in strict mode when create_graph=True.")

        res += (grads_i,)

    return res


def _preprocess_v(v, ref, is_ref_tuple, create_graph, none_message, fn_name):
    """Shared by jvp/vjp/hvp/vhp: check ``v`` against ``ref`` (or that it may be None)."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, ref, is_ref_tuple)
    elif len(ref) != 1 or ref[0].nelement() != 1:
        raise RuntimeError(none_message)
    return v
