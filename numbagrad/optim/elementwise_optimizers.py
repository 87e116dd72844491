"""Adadelta, Adamax, NAdam, RAdam, Rprop and ASGD, as torch.optim's single-tensor forms:
each parameter is updated in place with NumPy, step by step in torch's order and in the
parameter's dtype (torch's scalars, such as NAdam's mu_product and ASGD's eta, are 0-d
tensors of the step dtype here too, so they round as torch's do)."""

import numpy as np

from ..core.grad_mode import enable_grad
from .optimizer import (
    Optimizer,
    _check_unsupported,
    _increment,
    _params_with_grad,
    _step_tensor,
    _to_scalar,
    _use_grad,
    _zeros_like,
)


def _lerp(a, b, w):
    """a.lerp_(b, w) with torch's formula (exact at both ends), in a's dtype."""
    w = a.dtype.type(w)
    if w < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (b - a) * (a.dtype.type(1) - w)


def _check(name, value):
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name}: {value}")


def _check_betas(betas):
    for k in (0, 1):
        if not 0.0 <= betas[k] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {k}: {betas[k]}")


class _ElementwiseOptimizer(Optimizer):
    """One NumPy update per parameter: subclasses give ``_init(p)`` (the state) and
    ``_update(param, grad, state, group)`` on arrays."""

    def __init__(self, params, defaults):
        super().__init__(params, defaults)
        _check_unsupported(defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    @_use_grad
    def step(self, closure=None):
        """Perform a single optimization step (``closure`` re-evaluates the loss)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            params, grads = _params_with_grad(group)
            for p, g in zip(params, grads):
                state = self.state[p]
                if len(state) == 0:
                    state.update(self._init(p, group))
                grad = np.asarray(g._data, p._data.dtype)
                if group.get("maximize"):
                    grad = -grad
                param = p._array()
                self._update(param, grad, state, group)
                p._vc[0] += 1
        return loss


class Adadelta(_ElementwiseOptimizer):
    """Adadelta: steps scaled by running averages of squared gradients and squared updates.

    Same as ``torch.optim.Adadelta``; ``differentiable=True`` raises NotImplementedError.
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize,
                                  "capturable": capturable, "foreach": foreach,
                                  "differentiable": differentiable})

    def _init(self, p, group):
        return {"step": _step_tensor(), "square_avg": _zeros_like(p),
                "acc_delta": _zeros_like(p)}

    def _update(self, param, grad, state, group):
        _increment(state["step"])
        t = param.dtype.type
        lr, rho, eps, wd = (_to_scalar(group["lr"]), group["rho"], group["eps"],
                            group["weight_decay"])
        if wd != 0:
            grad = grad + t(wd) * param
        square_avg, acc_delta = state["square_avg"]._array(), state["acc_delta"]._array()
        square_avg *= t(rho)
        square_avg += (t(1 - rho) * grad) * grad  # addcmul's order: (value * t1) * t2
        std = np.sqrt(square_avg + t(eps))
        delta = np.sqrt(acc_delta + t(eps))
        delta /= std
        delta *= grad
        acc_delta *= t(rho)
        acc_delta += (t(1 - rho) * delta) * delta
        param -= t(lr) * delta


class Adamax(_ElementwiseOptimizer):
    """Adamax: Adam with the infinity norm of past gradients in place of the second moment.

    Same as ``torch.optim.Adamax``; ``differentiable=True`` raises NotImplementedError.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check_betas(betas)
        _check("weight_decay value", weight_decay)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _init(self, p, group):
        return {"step": _step_tensor(), "exp_avg": _zeros_like(p), "exp_inf": _zeros_like(p)}

    def _update(self, param, grad, state, group):
        step = _increment(state["step"])
        t = param.dtype.type
        (beta1, beta2), eps, wd = group["betas"], group["eps"], group["weight_decay"]
        lr = _to_scalar(group["lr"])
        if wd != 0:
            grad = grad + t(wd) * param
        exp_avg, exp_inf = state["exp_avg"]._array(), state["exp_inf"]._array()
        _lerp(exp_avg, grad, 1 - beta1)
        exp_inf *= t(beta2)
        np.maximum(exp_inf, np.abs(grad) + t(eps), out=exp_inf)
        clr = lr / (1 - beta1 ** step)
        param += (t(-clr) * exp_avg) / exp_inf  # addcdiv's order: (value * t1) / t2


class NAdam(_ElementwiseOptimizer):
    """NAdam: Adam with Nesterov momentum (and momentum decay).

    Same as ``torch.optim.NAdam``; ``differentiable=True`` raises NotImplementedError.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check_betas(betas)
        _check("weight_decay value", weight_decay)
        _check("momentum_decay value", momentum_decay)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "momentum_decay": momentum_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize, "foreach": foreach,
                                  "capturable": capturable, "differentiable": differentiable})

    def _init(self, p, group):
        return {"step": _step_tensor(), "mu_product": _step_tensor(1.0),
                "exp_avg": _zeros_like(p), "exp_avg_sq": _zeros_like(p)}

    def _update(self, param, grad, state, group):
        step = _increment(state["step"])
        t = param.dtype.type
        (beta1, beta2), eps, wd = group["betas"], group["eps"], group["weight_decay"]
        lr, decay = _to_scalar(group["lr"]), group["momentum_decay"]
        bias_correction2 = 1 - beta2 ** step
        if wd != 0:
            if group["decoupled_weight_decay"]:
                param *= t(1 - lr * wd)
            else:
                grad = grad + t(wd) * param
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        mu_product = state["mu_product"]._array()
        mu_product[()] = mu_product * mu_product.dtype.type(mu)  # a 0-d tensor in torch
        exp_avg, exp_avg_sq = state["exp_avg"]._array(), state["exp_avg_sq"]._array()
        _lerp(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= t(beta2)
        exp_avg_sq += (t(1 - beta2) * grad) * grad
        denom = np.sqrt(exp_avg_sq / t(bias_correction2)) + t(eps)
        mp = mu_product.item()
        mu_product_next = mp * mu_next
        param += (t(-lr * (1.0 - mu) / (1.0 - mp)) * grad) / denom
        param += (t((-lr * mu_next) / (1.0 - mu_product_next)) * exp_avg) / denom


class RAdam(_ElementwiseOptimizer):
    """RAdam: Adam with the variance of the adaptive step rectified in early steps.

    Same as ``torch.optim.RAdam``; ``differentiable=True`` raises NotImplementedError.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check_betas(betas)
        _check("weight_decay value", weight_decay)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize, "foreach": foreach,
                                  "capturable": capturable, "differentiable": differentiable})

    def _init(self, p, group):
        return {"step": _step_tensor(), "exp_avg": _zeros_like(p), "exp_avg_sq": _zeros_like(p)}

    def _update(self, param, grad, state, group):
        step = _increment(state["step"])
        t = param.dtype.type
        (beta1, beta2), eps, wd = group["betas"], group["eps"], group["weight_decay"]
        lr = _to_scalar(group["lr"])
        if wd != 0:
            if group["decoupled_weight_decay"]:
                param *= t(1 - lr * wd)
            else:
                grad = grad + t(wd) * param
        exp_avg, exp_avg_sq = state["exp_avg"]._array(), state["exp_avg_sq"]._array()
        _lerp(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= t(beta2)
        exp_avg_sq += (t(1 - beta2) * grad) * grad
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected = exp_avg / t(bias_correction1)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = (((rho_t - 4) * (rho_t - 2) * rho_inf)
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = t(bias_correction2 ** 0.5) / (np.sqrt(exp_avg_sq) + t(eps))
            param -= corrected * t(lr) * adaptive * t(rect)
        else:
            param -= corrected * t(lr)


class Rprop(_ElementwiseOptimizer):
    """Rprop: per-element step sizes grown or shrunk by the sign of successive gradients.

    Same as ``torch.optim.Rprop``; ``differentiable=True`` raises NotImplementedError.
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, {"lr": lr, "etas": etas, "step_sizes": step_sizes,
                                  "foreach": foreach, "maximize": maximize,
                                  "differentiable": differentiable, "capturable": capturable})

    def _init(self, p, group):
        return {"step": _step_tensor(), "prev": _zeros_like(p),
                "step_size": _zeros_like(p, _to_scalar(group["lr"]))}

    def _update(self, param, grad, state, group):
        _increment(state["step"])
        t = param.dtype.type
        (etaminus, etaplus), (lo, hi) = group["etas"], group["step_sizes"]
        prev, step_size = state["prev"]._array(), state["step_size"]._array()
        sign = np.sign(grad * prev)
        factor = np.where(sign > 0, t(etaplus), np.where(sign < 0, t(etaminus), t(1)))
        step_size *= factor
        np.clip(step_size, t(lo), t(hi), out=step_size)
        grad = np.where(factor == t(etaminus), t(0), grad)
        param -= np.sign(grad) * step_size
        prev[...] = grad


class ASGD(_ElementwiseOptimizer):
    """Averaged stochastic gradient descent: SGD that keeps a running average of the parameters.

    Same as ``torch.optim.ASGD``; ``differentiable=True`` raises NotImplementedError.
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check("learning rate", lr)
        _check("weight_decay value", weight_decay)
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _init(self, p, group):
        return {"step": _step_tensor(), "eta": _step_tensor(_to_scalar(group["lr"])),
                "mu": _step_tensor(1.0), "ax": _zeros_like(p)}

    def _update(self, param, grad, state, group):
        step = _increment(state["step"])
        t = param.dtype.type
        lr, lambd, alpha, t0, wd = (_to_scalar(group["lr"]), group["lambd"], group["alpha"],
                                    group["t0"], group["weight_decay"])
        if wd != 0:
            grad = grad + t(wd) * param
        eta, mu = state["eta"]._array(), state["mu"]._array()
        eta_value = eta.item()
        param *= t(1 - lambd * eta_value)
        param -= t(eta_value) * grad
        ax = state["ax"]._array()
        if mu.item() != 1:
            ax += (param - ax) * t(mu.item())
        else:
            ax[...] = param
        eta[()] = lr / ((1 + lambd * lr * step) ** alpha)
        mu[()] = 1 / max(1, step - t0)


__all__ = ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"]
