"""Creation, random sampling, dtypes and devices beyond the basics: tril, triu, diag, meshgrid,
randperm, device and kin."""

__all__ = []

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {}
