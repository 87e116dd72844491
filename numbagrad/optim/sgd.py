"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize (torch.optim.SGD)."""

import numpy as np

from ..core.grad_mode import enable_grad
from ..tensor import _make
from . import _kernels
from .optimizer import Optimizer, _check_unsupported, _params_with_grad, _run, _to_scalar, _use_grad

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum, as torch.optim.SGD: the momentum
    buffer starts as the first gradient, dampening applies from the second step.

    Examples:
        >>> import numbagrad as torch
        >>> w = torch.nn.Parameter(torch.tensor([1., 2.]))
        >>> opt = torch.optim.SGD([w], lr=0.1)
        >>> (w ** 2).sum().backward()
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_unsupported(defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

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
            momentum = group["momentum"]
            weight_decay = group["weight_decay"]
            lr = _to_scalar(group["lr"])
            hp = (-lr, momentum, 1 - group["dampening"], weight_decay, weight_decay != 0,
                  momentum != 0, group["nesterov"], group["maximize"])
            if momentum != 0:
                bufs, first = [], []
                for p in params:
                    buf = self.state[p].get("momentum_buffer")
                    first.append(buf is None)
                    if buf is None:  # becomes a copy of this step's gradient in the kernel
                        d = p._data
                        buf = _make(np.empty(np.shape(d), d.dtype))
                    bufs.append(buf)
                _run(_kernels.SGD, params, grads, [bufs], hp, first)
                for p, buf in zip(params, bufs):
                    self.state[p]["momentum_buffer"] = buf
            else:
                _run(_kernels.SGD, params, grads, [None], hp, None)
        return loss
