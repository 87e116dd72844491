"""Linear algebra beyond products: einsum, tensordot, decompositions and solvers (torch.linalg's
front ends)."""

__all__ = []

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {}
