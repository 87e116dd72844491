"""CrossMapLRN2d: the legacy local response normalization across channels, a custom Function
(grad_fn CrossMapLRN2dBackward) whose forward and backward follow torch's own Python ones
step by step in the input's dtype, quirks included: a channel's window never drops channel 0
once it held it, and the backward uses the symmetric window."""

import numpy as np

from ..autograd.function import Function
from ..tensor import _make
from .module import Module


def _forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):  # noqa: A002 - torch's names
    if input.ndim != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
    x = input._array()
    t = x.dtype.type
    square = x * x
    channels = x.shape[1]
    pre_pad = int((size - 1) / 2 + 1)
    scale = np.empty_like(x)
    scale[:, 0] = 0
    for c in range(min(pre_pad, channels)):
        scale[:, 0] += square[:, c]
    for c in range(1, channels):
        scale[:, c] = scale[:, c - 1]
        if c < channels - pre_pad + 1:
            scale[:, c] += square[:, c + pre_pad - 1]
        if c > pre_pad:
            scale[:, c] -= square[:, c - pre_pad]
    scale *= t(alpha / size)
    scale += t(k)
    out = np.power(scale, t(-beta)) * x
    ctx.args = (size, alpha, beta, scale)
    ctx.save_for_backward(input)
    ctx.out = out
    return _make(out)


def _backward(ctx, grad_output):
    (input,) = ctx.saved_tensors
    size, alpha, beta, scale = ctx.args
    x, out, g = input._array(), ctx.out, grad_output._array()
    t = x.dtype.type
    n_, channels = x.shape[:2]
    padded = np.zeros((channels + size - 1, *x.shape[2:]), x.dtype)
    ratio = t(2 * alpha * beta / size)
    inverse_pre_pad = int(size - (size - 1) / 2)
    grad_input = np.power(scale, t(-beta)) * g
    for n in range(n_):
        center = padded[inverse_pre_pad:inverse_pre_pad + channels]
        np.multiply(g[n], out[n], out=center)
        center /= scale[n]
        accum = padded[:size - 1].sum(0)
        for c in range(channels):
            accum += padded[c + size - 1]
            grad_input[n, c] += (-ratio * x[n, c]) * accum  # addcmul's (value * t1) * t2
            accum -= padded[c]
    return _make(grad_input), None, None, None, None


# torch's Function is named CrossMapLRN2d, as the module: its node's name comes from it
_CrossMapLRN2dFunction = type("CrossMapLRN2d", (Function,), {
    "forward": staticmethod(_forward), "backward": staticmethod(_backward),
    "__module__": __name__})


class CrossMapLRN2d(Module):
    """Local response normalization across channels of (N, C, H, W) input, as torch's legacy
    layer computes it.

    Same as ``torch.nn.CrossMapLRN2d``.

    Args:
        size: the number of neighbouring channels in each channel's window.
        alpha: the multiplicative factor of the window's sum of squares (default 1e-4).
        beta: the exponent (default 0.75).
        k: the additive constant (default 1).
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):  # noqa: A002
        """Local response normalization of ``input`` across channels, with this layer's settings.

        Args:
            input: (N, C, H, W).

        Returns:
            A tensor of ``input``'s shape.
        """
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ = ["CrossMapLRN2d"]
