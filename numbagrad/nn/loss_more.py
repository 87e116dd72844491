"""Loss modules beyond the basics: margin, ranking, embedding, Poisson and Gaussian NLL,
NLLLoss2d (their arguments, defaults and reprs as torch's)."""

import warnings

from . import functional as F  # noqa: N812 - torch's idiom
from .loss import NLLLoss, _Loss, _WeightedLoss
from .spatial_norm import PairwiseDistance


class MarginRankingLoss(_Loss):
    """``max(0, -y * (x1 - x2) + margin)``: a ranking loss of two inputs and labels of +-1.

    Same as ``torch.nn.MarginRankingLoss``.
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        """``F.margin_ranking_loss`` with this module's settings.

        Args:
            input1: the first scores.
            input2: the second scores, of ``input1``'s shape.
            target: 1 where ``input1`` should rank higher, -1 where ``input2`` should.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``input1``'s shape.
        """
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """The hinge embedding loss: ``x`` for label 1, ``max(0, margin - x)`` for label -1.

    Same as ``torch.nn.HingeEmbeddingLoss``.
    """

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):  # noqa: A002 - torch's names
        """``F.hinge_embedding_loss`` with this module's settings.

        Args:
            input: the distances or scores.
            target: 1 or -1 per element, of ``input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``input``'s shape.
        """
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """The two-class logistic loss ``log(1 + exp(-y * x))`` for labels of +-1.

    Same as ``torch.nn.SoftMarginLoss``.
    """

    def forward(self, input, target):  # noqa: A002
        """``F.soft_margin_loss`` with this module's settings.

        Args:
            input: the predictions.
            target: 1 or -1 per element, of ``input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``input``'s shape.
        """
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """The multi-label one-versus-all loss, a logistic loss per class averaged over the classes.

    Same as ``torch.nn.MultiLabelSoftMarginLoss``.
    """

    def forward(self, input, target):  # noqa: A002
        """``F.multilabel_soft_margin_loss`` with this module's settings.

        Args:
            input: logits, (N, C) or (C).
            target: 0 or 1 per class, of ``input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            sample.
        """
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """A loss on the cosine similarity: ``1 - cos`` for label 1, ``max(0, cos - margin)`` for -1.

    Same as ``torch.nn.CosineEmbeddingLoss``.
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        """``F.cosine_embedding_loss`` with this module's settings.

        Args:
            input1: the first embeddings, (N, D) or (D).
            input2: the second embeddings, of ``input1``'s shape.
            target: 1 (should be similar) or -1 (dissimilar) per pair, (N) or ().

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            sample.
        """
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """The triplet loss ``max(d(a, p) - d(a, n) + margin, 0)`` of anchors, positives and negatives.

    Same as ``torch.nn.TripletMarginLoss``.
    """

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        """``F.triplet_margin_loss`` with this module's settings.

        Args:
            anchor: the anchor embeddings, (N, D) or (D).
            positive: embeddings that should be near the anchors, of ``anchor``'s shape.
            negative: embeddings that should be far from them, of ``anchor``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            sample.
        """
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet loss ``max(d(a, p) - d(a, n) + margin, 0)`` with any distance ``d`` (a
    ``PairwiseDistance`` module by default, a submodule when it is a module).

    Same as ``torch.nn.TripletMarginWithDistanceLoss``.
    """

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = distance_function if distance_function is not None \
            else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        """``F.triplet_margin_with_distance_loss`` with this module's settings.

        Args:
            anchor: the anchor embeddings.
            positive: embeddings that should be near the anchors.
            negative: embeddings that should be far from them.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            sample.
        """
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-class multi-label hinge loss: each target class against each other class.

    Same as ``torch.nn.MultiLabelMarginLoss``.
    """

    def forward(self, input, target):  # noqa: A002
        """``F.multilabel_margin_loss`` with this module's settings.

        Args:
            input: scores, (N, C) or (C).
            target: class indices of ``input``'s shape, each row's targets first, ended by -1.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            sample.
        """
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """``NLLLoss`` under its deprecated name (constructing one warns, as torch's).

    Same as ``torch.nn.NLLLoss2d``.

    Args:
        weight: a weight per class, a 1-D tensor of C values (default None: all 1).
        size_average: deprecated; with ``reduce``, sets ``reduction`` (default None).
        ignore_index: a target value that counts for nothing (default -100).
        reduce: deprecated; with ``size_average``, sets ``reduction`` (default None).
        reduction: 'mean', 'sum' or 'none' (default 'mean').
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see https://pytorch.org/docs/main/nn.html"
                      "#torch.nn.NLLLoss for more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class PoissonNLLLoss(_Loss):
    """The negative log likelihood of targets under Poisson distributions of the input rates.

    Same as ``torch.nn.PoissonNLLLoss``.
    """

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        """``F.poisson_nll_loss`` with this module's settings.

        Args:
            log_input: the predicted rates (their logarithms when ``log_input`` is set).
            target: Poisson-distributed counts, of ``log_input``'s shape.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``log_input``'s shape.
        """
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """The negative log likelihood of targets under Gaussians of the input means and variances.

    Same as ``torch.nn.GaussianNLLLoss``.
    """

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):  # noqa: A002
        """``F.gaussian_nll_loss`` with this module's settings.

        Args:
            input: the predicted means.
            target: the samples, of ``input``'s shape.
            var: the predicted variances (non-negative): of ``input``'s shape, or that
                shape without its last dimension or with one dimension of size 1; or a
                float.

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            element, of ``input``'s shape.
        """
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss of class scores and target classes.

    Same as ``torch.nn.MultiMarginLoss``.
    """

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        self.p, self.margin = p, margin

    def forward(self, input, target):  # noqa: A002
        """``F.multi_margin_loss`` with this module's settings.

        Args:
            input: scores, (N, C) or (C).
            target: class indices in [0, C), (N) or ().

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each
            sample.
        """
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


__all__ = ["MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
           "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
           "PoissonNLLLoss", "GaussianNLLLoss", "MultiMarginLoss",
           "TripletMarginWithDistanceLoss", "MultiLabelMarginLoss", "NLLLoss2d"]
