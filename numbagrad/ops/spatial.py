"""torch.nn.functional's padding, pooling, interpolation, normalization and distance functions
beyond the basics."""

__all__ = []
