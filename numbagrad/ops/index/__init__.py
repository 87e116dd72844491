"""Indexing: how torch reads an index, and the index nodes."""
