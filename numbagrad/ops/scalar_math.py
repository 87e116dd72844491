"""Scalar @njit functions the pointwise math ops' formulas call (bound in every generated kernel:
numbagrad.ops.kernelgen's header)."""

__all__ = []
