"""torch.autograd.Variable: the legacy wrapper, now a Tensor itself (every Tensor is an
instance; ``Variable(t, requires_grad=True)`` returns a leaf sharing t's memory)."""

from ..tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """The legacy wrapper: ``Variable(t, flag)`` is ``t.detach().requires_grad_(flag)``.

    Same as ``torch.autograd.Variable``; every tensor is an instance.
    """

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            return Tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
