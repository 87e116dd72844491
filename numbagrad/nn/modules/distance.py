"""torch.nn.modules.distance: distances, the same classes as numbagrad.nn's."""

from ..spatial_norm import CosineSimilarity, PairwiseDistance

__all__ = ["PairwiseDistance", "CosineSimilarity"]
