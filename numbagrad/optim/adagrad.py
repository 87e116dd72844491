"""Adagrad (torch.optim.Adagrad): lr_decay, weight decay, initial accumulator value, eps."""

from ..core.grad_mode import enable_grad
from ..tensor import Tensor
from . import _kernels
from .optimizer import (
    Optimizer,
    _check_unsupported,
    _increment,
    _params_with_grad,
    _run,
    _step_tensor,
    _to_scalar,
    _use_grad,
    _zeros_like,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad as torch.optim.Adagrad: the state (step, sum) exists from construction on."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        _check_unsupported(defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor()
                state["sum"] = _zeros_like(p, initial_accumulator_value)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        for s in self.state.values():
            if "step" in s and not isinstance(s["step"], Tensor):
                s["step"] = _step_tensor(float(s["step"]))

    @_use_grad
    def step(self, closure=None):
        """Perform a single optimization step (``closure`` re-evaluates the loss)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()

        for group in self.param_groups:
            params, grads = _params_with_grad(group)
            if not params:
                continue
            lr, lr_decay = _to_scalar(group["lr"]), group["lr_decay"]
            sums, per_param = [], []
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["sum"] = _zeros_like(p, self.defaults["initial_accumulator_value"])
                sums.append(state["sum"])
                step = _increment(state["step"])
                per_param.append(-(lr / (1 + (step - 1) * lr_decay)))
            weight_decay = group["weight_decay"]
            hp = (group["eps"], weight_decay, weight_decay != 0, group["maximize"])
            _run(_kernels.ADAGRAD, params, grads, [sums], hp, per_param)
        return loss
