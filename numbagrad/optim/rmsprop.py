"""RMSprop (torch.optim.RMSprop): alpha, eps, weight decay, momentum, centered, maximize."""

from ..core.grad_mode import enable_grad
from ..tensor import Tensor
from . import _kernels
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_unsupported,
    _increment,
    _params_with_grad,
    _run,
    _step_tensor,
    _to_scalar,
    _use_grad,
    _zeros_like,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop as torch.optim.RMSprop (the square average starts at zero; ``centered``
    subtracts the squared running mean of the gradient)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)
        _check_unsupported(defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _step_tensor(float(p_state["step"]))

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
            _check_capturable(group)
            momentum, centered = group["momentum"], group["centered"]
            square_avgs, grad_avgs, bufs = [], [], []
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["square_avg"] = _zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = _zeros_like(p)
                    if centered:
                        state["grad_avg"] = _zeros_like(p)
                square_avgs.append(state["square_avg"])
                if momentum > 0:
                    bufs.append(state["momentum_buffer"])
                if centered:
                    grad_avgs.append(state["grad_avg"])
                _increment(state["step"])
            alpha, weight_decay = group["alpha"], group["weight_decay"]
            hp = (alpha, 1 - alpha, group["eps"], weight_decay, momentum,
                  -_to_scalar(group["lr"]), weight_decay != 0, centered, momentum > 0,
                  group["maximize"], 1.0)
            _run(_kernels.RMSPROP, params, grads,
                 [square_avgs, grad_avgs if centered else None, bufs if momentum > 0 else None],
                 hp, None)
        return loss
