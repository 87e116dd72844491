"""What the linear algebra front ends share: torch's argument checks and messages, and small
differentiable helpers (triangles, diagonals) the derivative rules are written with."""

from collections import namedtuple

import numpy as np

from ...tensor import _make
from .node import LinAlgError


def check_float(m, name):
    if not m.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{m.dtype.scalar_name}")


def check_matrix(m, name):
    if m.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    check_float(m, name)


def check_square(m, name):
    if m.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if m.shape[-1] != m.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{m.shape[-2]} by {m.shape[-1]} matrices")
    check_float(m, name)


def batch_prefix(shape, flat_index):
    """torch's "(Batch element k): " before a batched input's error (none for one matrix)."""
    return f"(Batch element {flat_index}): " if len(shape) > 2 else ""


def lapack_info(a, routine):
    """The LAPACK ``info`` of ``routine`` ("getrf", "potrf") for each matrix of ``a`` (rarely
    needed: only to word an error as torch does), flat over the batch."""
    from scipy.linalg import lapack

    fn = lapack.get_lapack_funcs(routine, (a,))
    mats = a.reshape(-1, *a.shape[-2:])
    infos = []
    for m in mats:
        if routine == "potrf":
            info = fn(m, lower=True)[-1]
        else:
            info = fn(m)[-1]
        infos.append(int(info))
    return infos


def singular_error(a, name, message):
    """LinAlgError for the first singular matrix of ``a``, worded as torch's ``name``."""
    infos = lapack_info(a, "getrf")
    for k, info in enumerate(infos):
        if info > 0:
            raise LinAlgError(f"{name}: {batch_prefix(a.shape, k)}" + message.format(info))
    raise LinAlgError(f"{name}: " + message.format(0))


def const(value, dtype):
    return _make(np.asarray(value, dtype))





def diag_embed(v):
    """Matrices with ``v`` (..., n) on their diagonals, differentiable."""
    n = v.shape[-1]
    return v.unsqueeze(-1) * const(np.eye(n), v._data.dtype)



def return_type(name, fields):
    """A named tuple printed as torch's ``torch.return_types.<name>``."""
    cls = namedtuple(name, fields)

    def __repr__(self):  # noqa: N807 - the method's own name
        parts = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{name}(\n{parts})"

    cls.__repr__ = __repr__
    return cls
