"""torch.nn.functional's activations, as thin names over the op front ends."""

from ..ops.pointwise import gelu, leaky_relu, relu, sigmoid, softplus, tanh  # noqa: F401
from ..ops.pointwise import unary as _unary
from ..ops.reduce import log_softmax, softmax  # noqa: F401


def silu(x):
    return _unary("silu", x)
