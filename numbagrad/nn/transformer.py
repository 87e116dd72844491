"""The Transformer layers: TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer,
TransformerDecoder, Transformer."""

__all__ = []
