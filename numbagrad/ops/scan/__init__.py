"""Scans, sorting and selections: cumsum, sort, topk, median, unique, quantile and kin."""
