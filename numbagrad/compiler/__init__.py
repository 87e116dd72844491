"""numbagrad.compile: tracing a function, replaying the trace (the scalar stream, fused
regions, the nodes handed back to eager's kernels) and its guards."""
