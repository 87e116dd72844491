"""Activation modules beyond the basics: ReLU6, PReLU, SELU, Hardswish, GLU, Softmin and kin."""

__all__ = []
