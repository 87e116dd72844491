"""numbagrad.utils.checkpoint: torch.utils.checkpoint."""

__all__ = []
