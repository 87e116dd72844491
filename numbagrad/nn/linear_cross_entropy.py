"""LinearCrossEntropyLoss: a linear layer and the cross entropy of its logits, as
nn.functional.linear_cross_entropy (torch's reference path; ``options`` other than None, its
chunked path, raises NotImplementedError)."""

import math

from . import functional as F  # noqa: N812 - torch's idiom
from .layers import Linear
from .loss import _WeightedLoss


class LinearCrossEntropyLoss(_WeightedLoss):
    """A linear layer (``self.linear``, in_features to num_classes * prod(out_features)) and
    the cross entropy of its logits, as ``linear_cross_entropy``.

    Same as ``torch.nn.LinearCrossEntropyLoss`` with ``options=None`` (its chunked path
    raises NotImplementedError).
    """

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes, self.out_features = num_classes, out_features
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        # one 2-d Linear, its weight reshaped to (C, *out_features, in_features) per call
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes),
                             bias=bias, dtype=dtype)
        self.options = options

    def forward(self, input, target):  # noqa: A002
        """The cross entropy of ``self.linear``'s logits of ``input``, as ``linear_cross_entropy``.

        Args:
            input: the features, (..., in_features).
            target: class indices in [0, num_classes) (positions ``ignore_index`` names are
                skipped).

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each sample.
        """
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = self.linear.bias.reshape((self.num_classes, *self.out_features)) \
            if self.linear.bias is not None else None
        return F.linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias,
                                      weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")


__all__ = ["LinearCrossEntropyLoss"]
