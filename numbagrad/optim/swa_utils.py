"""torch.optim.swa_utils: AveragedModel (a running average of a model's parameters, for SWA
and EMA), SWALR and update_bn."""

import copy
import itertools
import math

import numpy as np

from ..core.grad_mode import no_grad
from ..factories import tensor
from ..nn.module import Module
from .lr_scheduler import LRScheduler
from .optimizer import Optimizer


def get_ema_multi_avg_fn(decay=0.999):
    def ema_update(ema_param_list, current_param_list, _):
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            p_ema._array()[...] = (p_ema._array() * decay
                                   + p_model._array() * (1 - decay)).astype(p_ema._data.dtype)
    return ema_update


def get_ema_avg_fn(decay=0.999):
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are the average of those it was updated with
    (``update_parameters``): equal weights by default, or ``avg_fn``/``multi_avg_fn``."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        self.register_buffer("n_averaged", tensor(0))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        def tensors(m):
            return itertools.chain(m.parameters(), m.buffers()) if self.use_buffers \
                else m.parameters()
        mine, theirs = list(tensors(self.module)), list(tensors(model))
        n = int(self.n_averaged.item())
        with no_grad():
            if n == 0:
                for p_avg, p in zip(mine, theirs):
                    p_avg._array()[...] = p._data
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn(mine, theirs, self.n_averaged)
            else:
                for p_avg, p in zip(mine, theirs):
                    if self.avg_fn is None:
                        new = p_avg + (p - p_avg) / (n + 1)
                    else:
                        new = self.avg_fn(p_avg, p, self.n_averaged)
                    p_avg._array()[...] = np.asarray(new._data, p_avg._data.dtype)
                    p_avg._vc[0] += 1
        if not self.use_buffers:  # the buffers follow the model's
            for b_avg, b in zip(self.module.buffers(), model.buffers()):
                b_avg._array()[...] = b._data
        self.n_averaged._array()[()] = n + 1


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` (cos or linear), then
    hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        swa_lrs = swa_lr if isinstance(swa_lr, (list, tuple)) else \
            [swa_lr] * len(optimizer.param_groups)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must by one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]


def update_bn(loader, model, device=None):
    """Recompute the BatchNorm running statistics of ``model`` over ``loader``."""
    momenta = {}
    for module in model.modules():
        if hasattr(module, "running_mean") and hasattr(module, "momentum"):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]
