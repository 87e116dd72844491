"""numbagrad.nn.utils.rnn: PackedSequence and the padding / packing helpers.

Each conversion is one index_select over the rows (a padding row appended where padding is
written), so that it is a single differentiable node whatever the number of sequences."""

from collections import namedtuple

import numpy as np

from ... import dtypes
from ...ops.index.indexing import index_select
from ...ops.shape.join import cat
from ...ops.shape.movement import reshape, transpose
from ...tensor import Tensor, _make


def _int64(values):
    return _make(np.asarray(values, np.int64).reshape(-1))


def invert_permutation(permutation):
    if permutation is None:
        return None
    perm = np.asarray(permutation._array() if isinstance(permutation, Tensor) else permutation)
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size)
    return _int64(inverse)


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices",
                                                    "unsorted_indices"])):
    """The time steps of a batch of sequences, sorted by decreasing length, packed row after
    row in ``data``; ``batch_sizes[t]`` is how many sequences are still running at step t."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            raise RuntimeError("PackedSequence: batch_sizes is required (build one with "
                               "pack_padded_sequence or pack_sequence)")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes,
                                                          self.sorted_indices,
                                                          self.unsorted_indices)

    def cpu(self):
        return self

    def double(self):
        return self.to(dtype=dtypes.float64)

    def float(self):  # noqa: A003 - torch's name
        return self.to(dtype=dtypes.float32)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _lengths_array(lengths):
    if isinstance(lengths, Tensor):
        return np.asarray(lengths._array(), np.int64).reshape(-1)
    return np.asarray(list(lengths), np.int64).reshape(-1)


def _batch_sizes(sorted_lengths):
    steps = int(sorted_lengths[0]) if sorted_lengths.size else 0
    return np.array([(sorted_lengths > t).sum() for t in range(steps)], np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):  # noqa: A002
    """Pack a padded (T, B, *) batch (B, T, * with batch_first) of the given lengths."""
    lens = _lengths_array(lengths)
    batch_dim = 0 if batch_first else 1
    if lens.size != input.shape[batch_dim]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lens.size} (batch_size={input.shape[batch_dim]})")
    if enforce_sorted:
        if np.any(lens[1:] > lens[:-1]):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        order = np.arange(lens.size)
        sorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = _int64(order)
    lens_sorted = lens[order]
    if lens_sorted.size and lens_sorted[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    steps = input.shape[1 - batch_dim]
    if lens_sorted.size and lens_sorted[0] > steps:
        raise RuntimeError(f"start ({steps}) + length (1) exceeds dimension size ({steps}).")
    batch_sizes = _batch_sizes(lens_sorted)
    time_major = transpose(input, 0, 1) if batch_first else input
    width = time_major.shape[1]
    rows = reshape(time_major, (-1, *time_major.shape[2:]))
    # row t * B + b of the time-major batch, for the b-th longest sequence still running at t
    picks = [t * width + order[b] for t, n in enumerate(batch_sizes) for b in range(n)]
    data = index_select(rows, 0, _int64(picks))
    return PackedSequence(data, _int64(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded batch, lengths) in the original order."""
    data, batch_sizes = sequence.data, np.asarray(sequence.batch_sizes._array(), np.int64)
    steps, width = batch_sizes.size, int(batch_sizes[0]) if batch_sizes.size else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    unsorted = (np.arange(width) if sequence.unsorted_indices is None
                else np.asarray(sequence.unsorted_indices._array(), np.int64))
    lengths_sorted = np.array([(batch_sizes > b).sum() for b in range(width)], np.int64)
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)])
    pad_row = offsets[-1]  # the appended row of padding_value
    picks = np.full((steps, width), pad_row, np.int64)
    for t, n in enumerate(batch_sizes):
        picks[t, :n] = offsets[t] + np.arange(n)
    picks = picks[:, unsorted]  # column b of the result is sequence b of the original order
    if batch_first:
        picks = picks.T
    filler = _make(np.full((1, *data.shape[1:]), padding_value, data.dtype.np))
    padded = index_select(cat([data, filler], 0), 0, _int64(picks))
    padded = reshape(padded, (*picks.shape, *data.shape[1:]))
    return padded, _int64(lengths_sorted[unsorted])


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of different lengths (L_i, *) into (T, B, *) (B, T, * with
    batch_first), padded with padding_value on padding_side."""
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    try:
        sequences = tuple(sequences)
    except TypeError:
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}") from None
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences[1:]:
        if tuple(s.shape[1:]) != trailing:  # torch's copy into the padded slice fails
            d = next(i for i in range(len(trailing), 0, -1)
                     if i > s.ndim - 1 or s.shape[i] != trailing[i - 1])
            got = s.shape[d] if d < s.ndim else 1
            raise RuntimeError(f"The size of tensor a ({trailing[d - 1]}) must match the size "
                               f"of tensor b ({got}) at non-singleton dimension {d}")
    lengths = [s.shape[0] for s in sequences]
    steps, total = max(lengths), sum(lengths)
    picks = np.full((steps, len(sequences)), total, np.int64)
    start = 0
    for b, n in enumerate(lengths):
        first = 0 if padding_side == "right" else steps - n
        picks[first:first + n, b] = start + np.arange(n)
        start += n
    if batch_first:
        picks = picks.T
    dt = sequences[0].dtype  # the first sequence's dtype, as torch's
    filler = _make(np.full((1, *trailing), padding_value, dt.np))
    joined = cat([s if s.dtype is dt else s.to(dt) for s in (*sequences, filler)], 0)
    out = index_select(joined, 0, _int64(picks))
    return reshape(out, (*picks.shape, *trailing))


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = transpose(padded_sequences, 0, 1)
    return [padded_sequences[b, :int(n)] for b, n in enumerate(_lengths_array(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of (L_i, *) sequences (decreasing lengths unless enforce_sorted=False)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]
