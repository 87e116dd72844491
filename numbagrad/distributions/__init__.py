"""numbagrad.distributions: torch.distributions."""

__all__ = []
