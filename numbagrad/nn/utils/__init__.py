"""numbagrad.nn.utils: gradient clipping, parameter vectors, weight and spectral norm,
parametrizations, and rnn's padding and packing."""

from . import parametrize, rnn  # noqa: F401

__all__ = ["parametrize", "rnn"]
