"""numbagrad.nn: for now, the functional activations (modules arrive with the nn issue)."""

from . import functional  # noqa: F401
