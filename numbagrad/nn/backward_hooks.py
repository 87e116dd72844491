"""Module full backward hooks, as torch's torch.utils.hooks.BackwardHook.

A module with full backward (pre) hooks passes its Tensor arguments, and then its Tensor
outputs, through an identity Function (BackwardHookFunction). The outputs' node runs first in
the backward: it records grad_output and runs the pre hooks, which may replace it. The
inputs' node then holds the gradients w.r.t. the module's inputs: it calls
``hook(module, grad_input, grad_output)``, whose returned tuple replaces grad_input. When no
input requires grad, the hooks run at the outputs' node with grad_input all None.
"""

import warnings

from ..autograd.function import Function
from ..core import grad_mode
from ..tensor import Tensor

__all__ = ["BackwardHook"]

_NO_INPUT_GRAD = ("Full backward hook is firing when gradients are computed with respect to "
                  "module outputs since no inputs require gradients. See https://docs.pytorch."
                  "org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
                  "register_full_backward_hook for more details.")


_FORBIDDEN = ("This view was created inside a custom Function (or because an input was "
              "returned as-is) and the autograd logic to handle view+inplace would override "
              "the custom backward associated with the custom Function, leading to incorrect "
              "gradients. This behavior is forbidden. You can fix this by cloning the output "
              "of the custom Function.")


class _InplaceForbidden(list):
    """The version counter of an identity Function's output: torch forbids modifying it in
    place (the custom backward would be bypassed), so a bump under grad mode raises torch's
    error; one under no_grad (or through a detached alias) fails the backward instead."""

    __slots__ = ("index", "version")

    def __setitem__(self, key, value):
        if grad_mode.state.enabled:
            raise RuntimeError(f"Output {self.index} of BackwardHookFunction is a view and is "
                               f"being modified inplace. {_FORBIDDEN}")
        super().__setitem__(key, value)

    def check(self):
        if self[0] != self.version:
            raise RuntimeError(f"Output {self.index} of BackwardHookFunction is a view and its "
                               "base or another view of its base has been modified inplace. "
                               + _FORBIDDEN)


class BackwardHookFunction(Function):
    """Identity on Tensors; its backward hands the gradients to ``on_grad`` (which returns
    the gradients to pass on)."""

    @staticmethod
    def forward(ctx, on_grad, *tensors):
        ctx.on_grad = on_grad
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.on_grad(grads))


def _through_identity(values, on_grad):
    """``values`` (a tuple) with its Tensors passed through one BackwardHookFunction, the
    positions of those Tensors and their version counters; unchanged (positions None) when
    none requires grad."""
    index = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
    if not (grad_mode.state.enabled and any(values[i].requires_grad for i in index)):
        return values, None, ()
    outs = BackwardHookFunction.apply(on_grad, *[values[i] for i in index])
    new, counters = list(values), []
    for k, (i, t) in enumerate(zip(index, outs)):
        counter = _InplaceForbidden(t._vc)
        counter.index, counter.version = k, t._vc[0]
        t._vc = counter
        new[i] = t
        counters.append(counter)
    return tuple(new), index, counters


class BackwardHook:
    """One call's backward hooks: ``setup_inputs`` before the forward, ``setup_outputs``
    after it (torch's BackwardHook)."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.n_inputs = 0
        self.input_index = None
        self.n_outputs = 0
        self.output_index = None
        self.grad_outputs = None
        self.input_counters = self.output_counters = ()

    @staticmethod
    def _pack(index, grads, n):
        out = [None] * n
        for i, g in zip(index, grads):
            out[i] = g
        return tuple(out)

    def setup_inputs(self, args):
        self.n_inputs = len(args)
        args, self.input_index, self.input_counters = _through_identity(args,
                                                                         self._on_input_grad)
        return args

    def setup_outputs(self, result):
        is_tuple = isinstance(result, tuple)
        values = result if is_tuple else (result,)
        self.n_outputs = len(values)
        values, self.output_index, self.output_counters = _through_identity(
            values, self._on_output_grad)
        return values if is_tuple else values[0]

    def _on_output_grad(self, grads):
        for counter in self.output_counters:
            counter.check()
        self.grad_outputs = self._pack(self.output_index, grads, self.n_outputs)
        for hook in self.pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError("Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(new)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = new
        passed = self.grad_outputs
        if self.input_index is None:  # no input requires grad: the hooks fire here
            warnings.warn(_NO_INPUT_GRAD, UserWarning, stacklevel=2)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and
                                            all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(passed[i] for i in self.output_index)

    def _on_input_grad(self, grads):
        for counter in self.input_counters:
            counter.check()
        if self.grad_outputs is None:  # the outputs' node did not run
            return grads
        res = self._pack(self.input_index, grads, self.n_inputs)
        for hook in self.hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)
