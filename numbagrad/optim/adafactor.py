"""Adafactor (torch.optim.Adafactor): torch's single-tensor form in NumPy, in place and in the
parameter's dtype; the second moment of a matrix (or a stack of them) is kept factored as
row and column means over its last two dims."""

import numpy as np

from ..tensor import Tensor, _make
from .elementwise_optimizers import _ElementwiseOptimizer, _lerp
from .optimizer import _increment, _step_tensor, _to_scalar

__all__ = ["Adafactor"]


def _norm(a, **kw):
    """torch.norm(a, 2) in a's dtype."""
    return np.sqrt(np.sum(a * a, **kw, dtype=a.dtype))


class Adafactor(_ElementwiseOptimizer):
    """Adafactor: Adam-like steps with a factored second moment, relative step sizes and
    update clipping at ``d``.

    Same as ``torch.optim.Adafactor``.
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize})

    def _init(self, p, group):
        g = p.grad._data
        if g.ndim > 1:  # the row and column factors, each with one of the last two dims 1
            return {"step": _step_tensor(),
                    "row_var": _make(np.zeros((*g.shape[:-1], 1), g.dtype)),
                    "col_var": _make(np.zeros((*g.shape[:-2], 1, g.shape[-1]), g.dtype))}
        return {"step": _step_tensor(), "variance": _make(np.zeros(g.shape, g.dtype))}

    def _update(self, param, grad, state, group):
        t = param.dtype.type
        step = _increment(state["step"])
        lr, eps1, eps2 = _to_scalar(group["lr"]), *group["eps"]
        if eps1 is None:
            # torch takes the machine epsilon of the group's first parameter with a gradient
            first = next(p for p in group["params"] if p.grad is not None)
            eps1 = float(np.finfo(first._data.dtype).eps)
        one_minus_beta2_t = step ** group["beta2_decay"]
        rho_t = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, float(_norm(param)) / (param.size ** 0.5)) * rho_t
        if group["weight_decay"] != 0:
            param *= t(1 - lr * group["weight_decay"])
        if grad.ndim > 1:
            row_var, col_var = state["row_var"]._array(), state["col_var"]._array()
            _lerp(row_var, _norm(grad, axis=-1, keepdims=True) ** 2 / t(grad.shape[-1]),
                  one_minus_beta2_t)
            _lerp(col_var, _norm(grad, axis=-2, keepdims=True) ** 2 / t(grad.shape[-2]),
                  one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate /= np.maximum(row_var.mean(axis=-2, keepdims=True), t(eps1))
        else:
            variance = state["variance"]._array()
            _lerp(variance, grad * grad, one_minus_beta2_t)
            var_estimate = variance.copy()
        # eps1 squared: the square root after it keeps eps1's magnitude
        update = t(1) / np.sqrt(np.maximum(var_estimate, t(eps1 * eps1)))
        update *= grad
        denom = max(1.0, float(_norm(update)) / ((update.size ** 0.5) * group["d"]))
        param += t(-alpha / denom) * update
