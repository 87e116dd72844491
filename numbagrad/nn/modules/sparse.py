"""torch.nn.modules.sparse: embeddings, the same classes as numbagrad.nn's."""

from ..normalization import Embedding
from ..spatial_norm import EmbeddingBag

__all__ = ["Embedding", "EmbeddingBag"]
