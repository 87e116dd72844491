"""torch.nn.modules.adaptive: the adaptive softmax, the same class as numbagrad.nn's."""

from ..adaptive import AdaptiveLogSoftmaxWithLoss

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
