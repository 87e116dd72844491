"""Loss modules beyond the basics: margin, ranking, embedding, Poisson and Gaussian NLL, CTC."""

__all__ = []
