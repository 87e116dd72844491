"""Scalar @njit special functions (lgamma, digamma, erfinv...) for the generated kernels
(bound in every generated kernel: numbagrad.ops.kernelgen's header)."""

__all__ = []
