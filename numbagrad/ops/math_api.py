"""Pointwise math beyond the basics: trigonometric, hyperbolic, rounding, remainders, comparisons
and logical functions, torch's function and in-place forms."""

__all__ = []

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {}
