"""Elementwise ops: their records, front ends (promotion, broadcasting) and the pointwise
math, logic and special-function APIs built on them."""
