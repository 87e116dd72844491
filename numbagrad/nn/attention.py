"""nn.MultiheadAttention."""

__all__ = []
