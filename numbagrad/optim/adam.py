"""Adam (torch.optim.Adam): amsgrad, weight decay (L2 or decoupled), maximize."""

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

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam as torch.optim.Adam: per-parameter ``step`` counters (float32 scalar tensors), bias
    corrections computed in double precision, the update in the parameters' dtype.

    Examples:
        >>> import numbagrad as torch
        >>> w = torch.nn.Parameter(torch.tensor([1., -1.]))
        >>> opt = torch.optim.Adam([w], lr=0.1)
        >>> for _ in range(3):
        ...     opt.zero_grad()
        ...     (w ** 2).sum().backward()
        ...     opt.step()
        >>> w.detach()
        tensor([ 0.7016, -0.7016])
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        _check_unsupported(defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
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
            amsgrad = group["amsgrad"]
            beta1, beta2 = (_to_scalar(b) for b in group["betas"])
            lr = _to_scalar(group["lr"])
            exp_avgs, exp_avg_sqs, max_sqs, per_param = [], [], [], []
            corrections = {}
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = _zeros_like(p)
                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
                if amsgrad:
                    max_sqs.append(state["max_exp_avg_sq"])
                step = _increment(state["step"])
                row = corrections.get(step)
                if row is None:
                    bias_correction1 = 1 - beta1**step
                    bias_correction2 = 1 - beta2**step
                    step_size = lr / bias_correction1
                    row = corrections[step] = (-step_size, bias_correction2**0.5)
                per_param.append(row)
            weight_decay = group["weight_decay"]
            decoupled = group["decoupled_weight_decay"]
            hp = (1 - beta1, beta2, 1 - beta2, group["eps"], weight_decay,
                  1 - lr * weight_decay, weight_decay != 0 and not decoupled,
                  weight_decay != 0 and decoupled, amsgrad, group["maximize"], 1.0)
            _run(_kernels.ADAM, params, grads,
                 [exp_avgs, exp_avg_sqs, max_sqs if amsgrad else None], hp, per_param)
        return loss
