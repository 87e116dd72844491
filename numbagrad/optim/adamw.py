"""AdamW (torch.optim.AdamW): Adam with decoupled weight decay, default weight_decay 1e-2."""

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam whose weight decay multiplies the parameters by ``1 - lr * weight_decay`` first.

    Examples:
        >>> import numbagrad as torch
        >>> w = torch.nn.Parameter(torch.tensor([1.]))
        >>> opt = torch.optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> (w * 0).sum().backward()
        >>> opt.step()
        >>> w.detach()
        tensor([0.9500])
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
