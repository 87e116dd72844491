"""Reductions and softmax."""
