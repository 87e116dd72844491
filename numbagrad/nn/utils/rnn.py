"""numbagrad.nn.utils.rnn: pad_sequence, pack_padded_sequence, pad_packed_sequence."""

__all__ = []
