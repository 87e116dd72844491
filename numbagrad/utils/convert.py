"""Weights between numbagrad and PyTorch in one process: a state_dict (or any dict, list or
tuple holding tensors, such as a checkpoint dict) converted tensor by tensor, in the same
dtypes, into fresh memory. Both frameworks name and lay out a module's weights alike, so a
converted state_dict loads with the other side's ``load_state_dict``. torch is imported only
when a conversion runs."""

from collections.abc import Mapping

import numpy as np

from .. import dtypes
from ..tensor import Tensor, _make


def _convert(obj, is_tensor, convert):
    if is_tensor(obj):
        return convert(obj)
    if isinstance(obj, Mapping):
        items = [(k, _convert(v, is_tensor, convert)) for k, v in obj.items()]
        try:
            return type(obj)(items)  # dict and OrderedDict stay what they were
        except TypeError:
            return dict(items)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_convert(v, is_tensor, convert) for v in obj)
    return obj  # numbers, strings, None: the same in both frameworks


def to_torch_state_dict(state_dict):
    """``state_dict`` with each numbagrad tensor replaced by a torch tensor of the same dtype,
    shape and values (a copy, not requiring grad), for ``torch_module.load_state_dict`` or
    ``torch.save``. The torch equivalent: ``torch.from_numpy(t.detach().numpy().copy())``
    per tensor."""
    import torch

    return _convert(state_dict, lambda v: isinstance(v, Tensor),
                    lambda t: torch.from_numpy(np.array(t._array())))


def from_torch_state_dict(state_dict):
    """``state_dict`` (a torch module's ``state_dict()``, or ``torch.load(path,
    weights_only=True)``'s result) with each torch tensor replaced by a numbagrad tensor of
    the same dtype, shape and values (a copy, on the CPU), for numbagrad's
    ``load_state_dict`` or ``numbagrad.save``. bfloat16 tensors raise a TypeError: convert
    them with ``.float()`` first. The NumPy equivalent: ``t.detach().cpu().numpy().copy()``."""
    import torch

    def convert(t):
        if t.dtype == torch.bfloat16:
            dtypes.refuse_unsupported(dtypes.bfloat16)
        arr = np.array(t.detach().cpu().numpy())
        dtypes.from_numpy_dtype(arr.dtype)  # a TypeError for dtypes numbagrad cannot hold
        return _make(arr)

    return _convert(state_dict, lambda v: isinstance(v, torch.Tensor), convert)


__all__ = ["from_torch_state_dict", "to_torch_state_dict"]
