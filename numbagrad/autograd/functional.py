"""numbagrad.autograd.functional: torch.autograd.functional's vjp, jvp, jacobian, hessian, vhp
and hvp, built on ``numbagrad.autograd.grad``.

This module mirrors torch/autograd/functional.py (torch 2.13) function by function: the same
signatures, the same tuple-in/tuple-out structure, the same input preprocessing (inputs are
detached and made to require grad, or viewed when ``create_graph`` keeps their history), the
same zero filling for outputs independent of an input, and the same error messages for
``strict=True``, ``v=None`` and bad arguments. The differences:

* Everything is computed by reverse mode. torch's ``vectorize=True`` batches the vector-Jacobian
  products with ``vmap``; here it loops over the rows of the standard basis, which gives the same
  values (and keeps torch's argument checks: ``strict=True`` with ``vectorize=True`` raises).
* ``strategy="forward-mode"`` (jacobian) and ``outer_jacobian_strategy="forward-mode"``
  (hessian) run the reverse-mode code too (the same values; torch batches its forward-mode
  columns with vmap, which has no batching rules here). torch's
  restrictions on forward mode are kept (it needs ``vectorize=True``, and refuses
  ``strict=True`` and ``create_graph=True``), and so is the shape of what it returns (lists
  for tuple inputs, results requiring grad when an input does), so that a script behaves here
  as it does with torch.
* An output with no elements gets a block of zeros in the Jacobian (torch raises there).
* ``jvp`` uses the double-backward trick, as torch does; it and ``hvp``/``vhp``/``hessian``
  need ``create_graph=True`` in ``numbagrad.autograd.grad``.
"""

import numpy as np

from ..core import grad_mode
from ..factories import from_numpy, zeros, zeros_like
from ..ops.shape.join import split, stack
from ..tensor import Tensor
from .functional_args import (
    _as_tuple,
    _autograd_grad,
    _check_requires_grad,
    _fill_in_zeros,
    _grad_postprocess,
    _grad_preprocess,
    _preprocess_v,
    _tuple_postprocess,
)

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function "
                 "is a single Tensor with a single element.")


# ---- public API ---------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """The dot product of ``v`` with the Jacobian of ``func`` at ``inputs``; returns
    ``(func_output, vjp)`` as torch.autograd.functional.vjp does."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)

        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)

        v = _preprocess_v(v, outputs, is_outputs_tuple, create_graph,
                          "The vector v can only be None if the user-provided function returns "
                          "a single Tensor with a single element.", "vjp")

    enable_grad = True if create_graph else grad_mode.is_grad_enabled()
    with grad_mode.set_grad_enabled(enable_grad):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        vjp = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")

    # Cleanup objects and return them to the user
    outputs = _grad_postprocess(outputs, create_graph)
    vjp = _grad_postprocess(vjp, create_graph)

    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(vjp,
                                                                             is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Jacobian of ``func`` at ``inputs`` times ``v``; returns ``(func_output, jvp)`` as
    torch.autograd.functional.jvp does, by the same double-backward trick."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)

        v = _preprocess_v(v, inputs, is_inputs_tuple, create_graph, _V_NONE_INPUT, "jvp")

        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # The backward is linear so the value of grad_outputs is not important as
        # it won't appear in the double backward graph. We only need to ensure that
        # it does not contain inf or nan.
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)

        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)

    if create_graph:
        with grad_mode.enable_grad():
            grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
            jvp = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    else:
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        jvp = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")

    # Cleanup objects and return them to the user
    outputs = _grad_postprocess(outputs, create_graph)
    jvp = _grad_postprocess(jvp, create_graph)

    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(jvp,
                                                                             is_outputs_tuple)


def _construct_standard_basis_for(tensors, tensor_numels):
    """The N x N identity (N = sum of numels) split by columns into one (N, numel) chunk per
    tensor, each in its tensor's dtype."""
    assert len(tensors) == len(tensor_numels)
    assert len(tensors) > 0
    total_numel = sum(tensor_numels)
    chunks = []
    start = 0
    for tensor, numel in zip(tensors, tensor_numels):
        chunk = np.zeros((total_numel, numel), tensor.dtype.np)
        chunk[np.arange(start, start + numel), np.arange(numel)] = 1
        chunks.append(from_numpy(chunk))
        start += numel
    return tuple(chunks)


def _jacfwd(func, inputs, strict=False, vectorize=False):
    """torch's forward-mode jacobian, computed here by reverse mode: torch's argument checks,
    then the reverse-mode code, with what torch's forward mode hands back: lists where it
    builds lists (tuple inputs), and results that keep their graph when an input requires
    grad (the dual tensors carry the primals' history), or when the function makes its inputs
    require grad (hessian's forward-over-reverse does)."""
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` "
                           'and `strategy="forward-mode"` are not supported together (yet). '
                           "Please either set `strict=False` or "
                           '`strategy="reverse-mode"`.')
    is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        # torch's message, missing space included
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian is" "only implemented for `vectorize=True`.")
    keep_graph = getattr(func, "_makes_inputs_require_grad", False) or \
        any(inp.requires_grad for inp in inputs_t)
    # output by output (vectorize=False): a forward-mode column of one output never depends on
    # the others, so it requires grad only if that output's derivative does
    res = jacobian(func, inputs, create_graph=keep_graph, strict=False, vectorize=False,
                   strategy="reverse-mode")
    if is_inputs_tuple:
        is_outputs_tuple = isinstance(res[0], tuple)
        res = [list(r) for r in res] if is_outputs_tuple else list(res)
    return res


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: a Tensor, a tuple per input or per output, or a
    tuple (per output) of tuples (per input), as torch.autograd.functional.jacobian returns."""
    assert strategy in ("forward-mode", "reverse-mode"), (
        'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
        'function has more outputs than inputs, "forward-mode" tends to be more performant. '
        'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                      'and `strategy="forward-mode"` are not supported together '
                                      "(yet). Please either set `create_graph=False` or "
                                      '`strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)

    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)

        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)

        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` "
                                   "and `vectorized=True` are not supported together. "
                                   "Please either set `strict=False` or "
                                   "`vectorize=False`.")
            # torch's NOTE [Computing jacobian with vmap and grad for multiple outputs]: one
            # batched grad of the flattened outputs against the standard basis split across
            # the outputs, then each input's (sum of numels, *input.shape) block is split by
            # output. The batch is a loop here (_batched_grad).
            output_numels = tuple(output.numel() for output in outputs)
            grad_outputs = _construct_standard_basis_for(outputs, output_numels)
            flat_outputs = tuple(output.reshape(-1) for output in outputs)

            def vjp(grad_output):
                vj = list(_autograd_grad(flat_outputs, inputs, grad_output,
                                         create_graph=create_graph, is_grads_batched=True))
                for el_idx, vj_el in enumerate(vj):
                    if vj_el is not None:
                        continue
                    vj[el_idx] = zeros_like(inputs[el_idx]).expand(
                        (sum(output_numels),) + tuple(inputs[el_idx].shape))
                return tuple(vj)

            jacobians_of_flat_output = vjp(grad_outputs)

            jacobian_input_output = []
            for jac_input_i, input_i in zip(jacobians_of_flat_output, inputs):
                jacobian_input_i_output = []
                for jac, output_j in zip(split(jac_input_i, list(output_numels), dim=0),
                                         outputs):
                    jacobian_input_i_output.append(
                        jac.reshape(tuple(output_j.shape) + tuple(input_i.shape)))
                jacobian_input_output.append(jacobian_input_i_output)

            # outer list per input, inner per output: transpose to (output, input)
            jacobian_output_input = tuple(zip(*jacobian_input_output))
            jacobian_output_input = _grad_postprocess(jacobian_output_input, create_graph)
            return _tuple_postprocess(jacobian_output_input, (is_outputs_tuple, is_inputs_tuple))

        jacobian = ()
        for i, out in enumerate(outputs):
            jac_i = tuple([] for _ in range(len(inputs)))
            for j in range(out.nelement()):
                vj = _autograd_grad((out.reshape(-1)[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)

                for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            # torch's message names the output's index i here
                            raise RuntimeError(
                                "The jacobian of the user-provided function is "
                                f"independent of input {i}. This is not allowed in "
                                "strict mode when create_graph=True.")
                        jac_i_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is "
                                f"independent of input {el_idx}. This is not allowed in "
                                "strict mode.")
                        jac_i_el.append(zeros_like(inp_el))

            jacobian += (tuple(_stack_rows(jac_i_el, out, inputs[el_idx])
                               for (el_idx, jac_i_el) in enumerate(jac_i)),)

        jacobian = _grad_postprocess(jacobian, create_graph)

        return _tuple_postprocess(jacobian, (is_outputs_tuple, is_inputs_tuple))


def _stack_rows(rows, out, inp):
    """Stack one output's per-element gradients into its (*out.shape, *inp.shape) block. An
    output without elements has no rows: torch fails there (stack of an empty list); its
    block of zeros is returned instead."""
    shape = tuple(out.size()) + tuple(inp.size())
    if not rows:
        return zeros(shape, dtype=inp.dtype)
    return stack(rows, dim=0).view(shape)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of the scalar function ``func`` at ``inputs`` (a Tensor, or a tuple of
    tuples per pair of inputs), as torch.autograd.functional.hessian: the jacobian of the
    jacobian, the inner one with create_graph=True."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    assert outer_jacobian_strategy in ("forward-mode", "reverse-mode"), (
        'Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function",
                                        "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)

        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")

        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")

        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            # _grad_preprocess requires create_graph=True and input to require_grad
            # or else the input will be detached
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    # read by the forward-mode stand-in (_jacfwd): torch's results require grad there
    jac_func._makes_inputs_require_grad = outer_jacobian_strategy == "forward-mode"

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _single_output(outputs, is_outputs_tuple, strict, fn_name):
    """hvp/vhp: the function must return one Tensor with one element."""
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``v`` times the Hessian of the scalar function ``func`` at ``inputs``; returns
    ``(func_output, vhp)`` as torch.autograd.functional.vhp does."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _preprocess_v(v, inputs, is_inputs_tuple, create_graph, _V_NONE_INPUT, "vhp")

        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vhp")
        _single_output(outputs, is_outputs_tuple, strict, "vhp")

        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)

    enable_grad = True if create_graph else grad_mode.is_grad_enabled()
    with grad_mode.set_grad_enabled(enable_grad):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        vhp = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")

    outputs = _grad_postprocess(outputs, create_graph)
    vhp = _grad_postprocess(vhp, create_graph)

    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(vhp,
                                                                             is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Hessian of the scalar function ``func`` at ``inputs`` times ``v``; returns
    ``(func_output, hvp)`` as torch.autograd.functional.hvp does (double-backward trick)."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _preprocess_v(v, inputs, is_inputs_tuple, create_graph, _V_NONE_INPUT, "hvp")

        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "hvp")
        _single_output(outputs, is_outputs_tuple, strict, "hvp")

        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)

        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)

        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        # torch checks ``jac`` again here (not ``double_back``); kept as is
        _check_requires_grad(jac, "hessian", strict=strict)

    enable_grad = True if create_graph else grad_mode.is_grad_enabled()
    with grad_mode.set_grad_enabled(enable_grad):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        hvp = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")

    outputs = _grad_postprocess(outputs, create_graph)
    hvp = _grad_postprocess(hvp, create_graph)

    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(hvp,
                                                                             is_inputs_tuple)
