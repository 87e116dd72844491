"""Modules for convolution in 1-3 dims, pooling, padding, upsampling, group and instance norm,
distances and dropout variants beyond the basics."""

__all__ = []
