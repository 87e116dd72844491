"""torch.backends: the accelerator queries and flags of a CPU-only build."""

from . import cudnn, mps  # noqa: F401
