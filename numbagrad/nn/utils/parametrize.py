"""numbagrad.nn.utils.parametrize: register_parametrization."""

__all__ = []
