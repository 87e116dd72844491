"""The machinery every op goes through, knowing no op: the op record (defop), the one
path from a result to a node (record), the kernel ABI, generator, tables and caches, the
formula functions kernels call, and the matrix product routine."""
