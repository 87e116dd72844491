"""torch's ``out=`` keyword: the result written into a given tensor, resized to fit."""

import warnings

import numpy as np

from ..core.grad_mode import is_grad_enabled
from ..tensor import Tensor


def check_out(name, out, *inputs):
    """torch's error for ``out=`` where autograd would have to record: any tensor argument
    (``out`` too) requiring grad while grad mode is on. Call it before computing."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if is_grad_enabled() and (out.requires_grad or any(
            isinstance(t, Tensor) and t.requires_grad for t in inputs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")


def into(name, out, fn, *args, **kw):
    """``fn(*args, **kw, out=out)`` as torch runs it: checked, computed, written into out."""
    check_out(name, out, *args)
    return write_out(out, fn(*args, **kw))


def write_out(out, result, cast_any=False, warn=True):
    """Write ``result`` into ``out`` as torch does: its dtype must cast to out's without
    changing kind (any cast with ``cast_any``: a reduction computed in out's dtype), a shape
    that differs resizes ``out`` (with torch's warning when ``out`` had elements, unless not
    ``warn``: factories resize silently). Returns ``out``."""
    if not cast_any and result.dtype._kind > out.dtype._kind:  # float into int, number into bool
        raise RuntimeError(f"result type {result.dtype.scalar_name} can't be cast to the "
                           f"desired output type {out.dtype.scalar_name}")
    shape = tuple(result.shape)
    if tuple(out.shape) != shape:
        if out._data.size and warn:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
                "outputs will not be resized unless they have zero elements. You can explicitly "
                "reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).", UserWarning, stacklevel=3)
        out._data = np.empty(shape, out._data.dtype)
    np.copyto(out._data, np.asarray(result._data), casting="unsafe")
    out._vc[0] += 1
    return out
