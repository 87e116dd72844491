"""Shape and indexing functions beyond the basics: stacking, flips, rolls, scatter, take and kin."""

__all__ = []

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {}
