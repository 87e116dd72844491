"""Special functions: lgamma, digamma, polygamma, erfinv and kin."""

__all__ = []

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {}
