"""torch.backends: the accelerator queries of a CPU-only build."""

from . import mps  # noqa: F401
