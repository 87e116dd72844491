"""torch.nn.functional's activations beyond the basics: relu6, selu, hardswish, glu, softmin and
kin."""

__all__ = []
