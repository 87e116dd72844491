"""numbagrad.linalg: torch.linalg."""

__all__ = []
