"""Connectionist Temporal Classification: F.ctc_loss and nn.CTCLoss, as torch's.

The per-sample loss and its gradient with respect to ``log_probs`` are the @njit kernels of
ops/nn/ctc.py, wired as a custom autograd Function whose node is named torch's
``CtcLossBackward0``; the reductions are ordinary ops on top, as torch composes them
('mean' divides each loss by its target length clamped to 1, then averages). torch has no
second derivative here: the gradient, made with create_graph=True, refuses a backward."""

import numpy as np

from .. import dtypes
from ..autograd.function import Function
from ..ops.elementwise.pointwise import clamp, where
from ..ops.nn import ctc as kernels
from ..ops.reduce.reductions import mean
from ..ops.reduce.reductions import sum as _sum
from ..tensor import Tensor, _make
from .loss import _Loss

__all__ = ["CTCLoss"]


def _name_node(t, name):
    """Show torch's grad_fn name on the node of custom Function output ``t``."""
    if t._tape is not None:
        t._tape.names[t._node] = name
    return t


class _CtcLossGrad(Function):
    """The gradient, scaled by the upstream one; it has no derivative of its own (torch's
    _ctc_loss_backward neither), so a backward through it raises torch's error."""

    @staticmethod
    def forward(ctx, grad, log_probs):
        return _make(grad.astype(log_probs._data.dtype))

    @staticmethod
    def backward(ctx, _):
        raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


class _CtcLoss(Function):
    @staticmethod
    def forward(ctx, log_probs, targets, offsets, target_lengths, input_lengths, blank,
                zero_infinity):
        lp = np.asarray(log_probs._data, np.float64)
        nll, log_alpha = kernels.ctc_alpha(lp, targets, offsets, target_lengths,
                                           input_lengths, blank)
        ctx.save_for_backward(log_probs)
        ctx.args = (lp, targets, offsets, target_lengths, input_lengths, blank, nll, log_alpha,
                    zero_infinity)
        return _make(nll.astype(log_probs._data.dtype))

    @staticmethod
    def backward(ctx, grad_loss):
        (log_probs,) = ctx.saved_tensors
        (lp, targets, offsets, target_lengths, input_lengths, blank, nll, log_alpha,
         zero_infinity) = ctx.args
        g = np.asarray(grad_loss._data, np.float64).reshape(-1)
        grad = kernels.ctc_grad(lp, targets, offsets, target_lengths, input_lengths, blank,
                                nll, log_alpha, g, zero_infinity)
        out = _CtcLossGrad.apply(grad, log_probs)
        return (_name_node(out, "torch::autograd::NotImplemented"),
                None, None, None, None, None, None)


def _lengths(lengths, name, batch):
    """Lengths as an int64 array of the batch's size (a tensor, a tuple/list, or a number)."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.is_floating_point or lengths.dtype is dtypes.bool_:
            raise RuntimeError(f"{name} must be integral")
        arr = np.asarray(lengths._data).reshape(-1).astype(np.int64)
    else:
        arr = np.asarray(lengths, np.int64).reshape(-1)
    if arr.size != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return arr


def _flat_targets(targets, target_lengths, batch):
    """(flat int64 labels, each sample's offset into them), checked as torch checks them."""
    data = np.asarray(targets._data)
    check = " (while checking arguments for ctc_loss_allocate_outputs)"
    if data.ndim == 1:
        offsets = np.concatenate(([0], np.cumsum(target_lengths)[:-1])).astype(np.int64)
        total = int(target_lengths.sum())
        if data.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {data.shape[0]} for argument #2 'targets'" + check)
        flat = data.astype(np.int64)
    else:
        longest = int(target_lengths.max()) if batch else 0
        if data.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension "
                               f"1, but got size {data.shape[1]} for argument #2 'targets'"
                               + check)
        flat = data.astype(np.int64).reshape(-1)
        offsets = np.arange(batch, dtype=np.int64) * data.shape[1]
    return flat, offsets


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    r"""The Connectionist Temporal Classification loss (torch.nn.functional.ctc_loss).

    ``log_probs``: (T, N, C) or unbatched (T, C) log-probabilities; ``targets``: padded
    (N, S) or the N target sequences concatenated (1-d); ``input_lengths`` and
    ``target_lengths``: tensors or sequences of N ints. An impossible alignment gives an
    infinite loss, replaced by zero (with a zero gradient) when ``zero_infinity``."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    max_t, batch, n_class = log_probs.shape
    if not 0 <= blank < n_class:
        raise RuntimeError("blank must be in label range")
    in_lens = _lengths(input_lengths, "input_lengths", batch)
    tg_lens = _lengths(target_lengths, "target_lengths", batch)
    for b in range(batch):
        if in_lens[b] > max_t:
            raise RuntimeError(f"Expected input_lengths to have value at most {max_t}, but got "
                               f"value {in_lens[b]} (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
    flat, offsets = _flat_targets(targets, tg_lens, batch)
    if flat.size and (flat.min() < 0 or flat.max() >= n_class):
        raise RuntimeError(f"numbagrad: ctc_loss targets must be class indices in "
                           f"[0, {n_class})")
    loss = _name_node(_CtcLoss.apply(log_probs, flat, offsets, tg_lens, in_lens, blank,
                                     zero_infinity), "CtcLossBackward0")
    if zero_infinity:
        loss = where(loss == float("inf"), _make(np.zeros((), loss._data.dtype)), loss)
    if reduction == "mean":
        lengths = clamp(_make(tg_lens.astype(loss._data.dtype)), min=1)
        loss = mean(loss / lengths)
    elif reduction == "sum":
        loss = _sum(loss)
    elif unbatched:
        loss = loss.squeeze(0)
    return loss


class CTCLoss(_Loss):
    """The connectionist temporal classification loss of log-probabilities and target sequences.

    Same as ``torch.nn.CTCLoss``.
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        """The CTC loss: ``ctc_loss`` with this module's settings.

        Args:
            log_probs: log-probabilities (log_softmax over classes), (T, N, C) or (T, C) unbatched.
            targets: the target sequences (no blanks), (N, S) padded, or concatenated 1-D.
            input_lengths: the length of each input sequence, (N) (each at most T).
            target_lengths: the length of each target sequence, (N).

        Returns:
            A 0-d tensor, unless ``reduction`` is 'none'; then the loss of each sample.
        """
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)
