"""Reductions, scans and sorting: cumsum, sort, topk, median, unique and kin."""

__all__ = []

# Tensor methods this module adds: name -> function (bound in numbagrad/_methods.py)
TENSOR_METHODS = {}
