"""The loss Modules of torch.nn: constructor arguments (the deprecated size_average/reduce
included), class weights registered as buffers, and reprs as torch's (``MSELoss()``)."""

from ..ops.nn.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    huber_loss,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)
from ..ops.nn.loss_common import legacy_get_string
from ..ops.nn.nll_loss import cross_entropy, kl_div, nll_loss
from .module import Module

__all__ = ["L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "BCELoss", "BCEWithLogitsLoss",
           "CrossEntropyLoss", "NLLLoss", "KLDivLoss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = legacy_get_string(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """The mean (or summed) absolute error between input and target.

    Same as ``torch.nn.L1Loss``.
    """

    def forward(self, input, target):  # noqa: A002 - torch's names
        """``F.l1_loss`` with this module's settings.

        Args:
            input: the predictions.
            target: the targets, of ``input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``input``'s shape.
        """
        return l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """The mean (or summed) squared error between input and target.

    Same as ``torch.nn.MSELoss``.

    Examples:
        >>> import numbagrad as torch
        >>> loss = torch.nn.MSELoss()
        >>> loss(torch.tensor([1., 2.]), torch.tensor([1., 4.]))
        tensor(2.)
    """

    def forward(self, input, target):  # noqa: A002
        """``F.mse_loss`` with this module's settings.

        Args:
            input: the predictions.
            target: the targets, of ``input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``input``'s shape.
        """
        return mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """The smooth L1 loss: squared below ``beta``, absolute above, as ``smooth_l1_loss``.

    Same as ``torch.nn.SmoothL1Loss``.
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):  # noqa: A002
        """``F.smooth_l1_loss`` with this module's settings.

        Args:
            input: the predictions.
            target: the targets, of ``input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``input``'s shape.
        """
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """The Huber loss: squared below ``delta``, ``delta``-scaled absolute above.

    Same as ``torch.nn.HuberLoss``.
    """

    def __init__(self, reduction="mean", delta=1.0):
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):  # noqa: A002
        """``F.huber_loss`` with this module's settings.

        Args:
            input: the predictions.
            target: the targets, of ``input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``input``'s shape.
        """
        return huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_WeightedLoss):
    """The binary cross entropy between probabilities and targets.

    Same as ``torch.nn.BCELoss``.
    """

    def forward(self, input, target):  # noqa: A002
        """``F.binary_cross_entropy`` with this module's settings.

        Args:
            input: probabilities in [0, 1].
            target: the targets in [0, 1], of ``input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``input``'s shape.
        """
        return binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """The binary cross entropy of ``sigmoid(input)`` and the targets, computed stably.

    Same as ``torch.nn.BCEWithLogitsLoss``.
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):  # noqa: A002
        """``F.binary_cross_entropy_with_logits`` with this module's settings.

        Args:
            input: logits (the loss applies the sigmoid).
            target: the targets in [0, 1], of ``input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``input``'s shape.
        """
        return binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """The negative log likelihood of log-probabilities at the target classes.

    Same as ``torch.nn.NLLLoss``.
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):  # noqa: A002
        """``F.nll_loss`` with this module's settings.

        Args:
            input: log-probabilities, (N, C) or (N, C, d1, ...), or (C) unbatched.
            target: class indices in [0, C), (N) or (N, d1, ...), or () unbatched.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            sample.
        """
        return nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """The cross entropy between logits and class indices or class probabilities.

    Same as ``torch.nn.CrossEntropyLoss``.
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):  # noqa: A002
        """``F.cross_entropy`` with this module's settings.

        Args:
            input: unnormalized logits, (N, C) or (N, C, d1, ...), or (C) unbatched.
            target: class indices in [0, C) of shape (N) or (N, d1, ...), or class
                probabilities of ``input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            sample.
        """
        return cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence of the target from log-probabilities.

    Same as ``torch.nn.KLDivLoss``.
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):  # noqa: A002
        """``F.kl_div`` with this module's settings.

        Args:
            input: log-probabilities.
            target: probabilities (log-probabilities with ``log_target``), of ``input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``input``'s shape.
        """
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
