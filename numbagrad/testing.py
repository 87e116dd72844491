"""numbagrad.testing: torch.testing.assert_close."""

__all__ = []
