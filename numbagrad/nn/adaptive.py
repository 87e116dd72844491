"""AdaptiveLogSoftmaxWithLoss (Grave et al.'s efficient softmax approximation), as torch's
module: a head over the shortlist and one cluster token per tail, each tail a two-layer
projection. Its submodules (and so its random draws) are torch's, in torch's order; the
per-row outputs are gathered with index ops where torch copies into a buffer in place."""

from collections import namedtuple

import numpy as np

from ..ops.index.indexing import gather, index_select
from ..ops.shape.join import cat
from ..tensor import _make
from . import functional as F  # noqa: N812 - torch's idiom
from .layers import Linear, ModuleList, Sequential
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """The adaptive softmax: frequent classes (below ``cutoffs[0]``) in the head, the others
    in tail clusters reached through the head's cluster tokens. ``forward(input, target)``
    gives (the target log-probabilities, their negative mean).

    Same as ``torch.nn.AdaptiveLogSoftmaxWithLoss``.
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > (n_classes - 1)
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = [*cutoffs, n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, dtype=dtype),
                                        Linear(hsz, osz, bias=False, dtype=dtype)))

    def reset_parameters(self):
        """Draw the head's and every tail cluster's weights again (default initialisation)."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        """The log-probability of each row's target class, and the loss.

        Args:
            input_: the features, (N, in_features), or (in_features) unbatched.
            target_: class indices in [0, n_classes), (N), or () unbatched.

        Returns:
            A named tuple (output, loss); output holds each row's target log-probability, (N) or
            (); loss is the mean of ``-output``.
        """
        if target_.ndim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.ndim > 0
        x = input_ if batched else input_.unsqueeze(0)
        target = np.asarray(target_._array()).reshape(-1)
        batch = target.shape[0]
        gather_inds = np.zeros(batch, np.int64)
        rows_seen, parts = [], []
        bounds = [0, *self.cutoffs]
        for i in range(len(bounds) - 1):
            rows = np.flatnonzero((target >= bounds[i]) & (target < bounds[i + 1]))
            if rows.size == 0:
                continue
            if i == 0:
                gather_inds[rows] = target[rows]
            else:
                cluster = self.tail[i - 1](index_select(x, 0, _make(rows)))
                gather_inds[rows] = self.shortlist_size + i - 1
                relative = _make((target[rows] - bounds[i]).reshape(-1, 1))
                parts.append(gather(F.log_softmax(cluster, dim=1), 1, relative).squeeze(1))
                rows_seen.append(rows)
            if i == 0:
                rows_seen.append(rows)
                parts.append(x.new_zeros(rows.size))
        if sum(r.size for r in rows_seen) != batch:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min()}, {target.max()}] were found. ")
        # each row's cluster term in row order (0 for the shortlist's rows)
        order = np.argsort(np.concatenate(rows_seen), kind="stable")
        output = index_select(cat(parts), 0, _make(order))
        head_logprob = F.log_softmax(self.head(x), dim=1)
        output = output + gather(head_logprob, 1, _make(gather_inds.reshape(-1, 1))).squeeze()
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):  # noqa: A002
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob
                         + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input):  # noqa: A002
        """The log-probabilities of every class, (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):  # noqa: A002
        """The most probable class of each row (the full distribution only where the head's
        best is a cluster token)."""
        head_output = self.head(input)
        output = np.argmax(head_output._array(), axis=1)
        outside = output >= self.shortlist_size
        if outside.any():
            rows = np.flatnonzero(outside)
            log_prob = self._get_full_log_prob(index_select(input, 0, _make(rows)),
                                               index_select(head_output, 0, _make(rows)))
            output[rows] = np.argmax(log_prob._array(), axis=1)
        return _make(output.astype(np.int64))


__all__ = ["AdaptiveLogSoftmaxWithLoss"]
