"""Linear algebra: products, decompositions, solvers and norms."""
