"""Activation modules beyond the basics: ReLU6, PReLU, SELU, CELU, Hardswish, GLU, Softmin,
Softmax2d and kin (torch's constructor arguments, defaults and reprs)."""

from ..factories import full
from . import functional as F  # noqa: N812 - torch's idiom
from .layers import _activation, _inplace_of, _with_inplace
from .module import Module, Parameter

ReLU6 = _activation("ReLU6", F.relu6, "Applies ``min(max(x, 0), 6)`` element-wise.",
                    ("inplace",), (False,), _with_inplace(None), _inplace_of(F.relu6))
SELU = _activation("SELU", F.selu, "Applies SELU element-wise: ``scale * elu(x, alpha)`` with "
                   "the self-normalizing constants.", ("inplace",), (False,), _with_inplace(None),
                   F.selu_)
CELU = _activation("CELU", F.celu, "Applies CELU element-wise: ``max(0, x) + min(0, alpha * "
                   "(exp(x / alpha) - 1))``.", ("alpha", "inplace"), (1.0, False),
                   _with_inplace(lambda m: f"alpha={m.alpha}"), F.celu_)
Softsign = _activation("Softsign", F.softsign, "Applies ``x / (1 + |x|)`` element-wise.")
Hardsigmoid = _activation("Hardsigmoid", F.hardsigmoid,
                          "Applies ``relu6(x + 3) / 6`` element-wise.", ("inplace",), (False,),
                          lambda m: "", _inplace_of(F.hardsigmoid))
Hardswish = _activation("Hardswish", F.hardswish, "Applies ``x * relu6(x + 3) / 6`` element-wise.",
                        ("inplace",), (False,), lambda m: "", _inplace_of(F.hardswish))
LogSigmoid = _activation("LogSigmoid", F.logsigmoid,
                         "Applies ``log(sigmoid(x))`` element-wise, computed stably.")
Tanhshrink = _activation("Tanhshrink", F.tanhshrink, "Applies ``x - tanh(x)`` element-wise.")
Softshrink = _activation("Softshrink", F.softshrink,
                         "Shrinks each element toward 0 by ``lambd``; 0 within [-lambd, lambd].",
                         ("lambd",), (0.5,), lambda m: str(m.lambd))
Hardshrink = _activation("Hardshrink", F.hardshrink,
                         "Zeroes the elements within [-lambd, lambd] and keeps the others.",
                         ("lambd",), (0.5,), lambda m: str(m.lambd))
Threshold = _activation("Threshold", F.threshold,
                        "Keeps the elements above ``threshold`` and replaces the others by "
                        "``value``.", ("threshold", "value", "inplace"), (None, None, False),
                        _with_inplace(lambda m: f"threshold={m.threshold}, value={m.value}"),
                        F.threshold_)
Softmin = _activation("Softmin", F.softmin, "Applies softmin along ``dim``: ``softmax(-x)``.",
                      ("dim",), (None,), lambda m: f"dim={m.dim}")
GLU = _activation("GLU", F.glu, "Gated linear unit: the first half along ``dim`` times the "
                  "sigmoid of the second half.", ("dim",), (-1,), lambda m: f"dim={m.dim}")


class PReLU(Module):
    """x where positive, else a learned slope times x (one slope, or one per channel)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype))

    def reset_parameters(self):
        """Set the slopes back to ``init``."""
        self.weight.data.fill_(self.init)

    def forward(self, input):  # noqa: A002 - torch's names
        """``prelu`` of ``input`` with this layer's learned slope(s).

        Args:
            input: the input tensor; with more than one slope, its dimension 1 has
                ``num_parameters`` channels.

        Returns:
            A tensor of ``input``'s shape.
        """
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) input, at each location.

    Same as ``torch.nn.Softmax2d``.

    Args:
        *args: none are accepted (any raises TypeError): the module has no settings.
        **kwargs: none are accepted either.
    """

    def forward(self, input):  # noqa: A002
        """The softmax over the channel dimension (-3) at each location.

        Args:
            input: (N, C, H, W) or (C, H, W).

        Returns:
            A tensor of ``input``'s shape.
        """
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             f"instead")
        return F.softmax(input, -3)


__all__ = ["Softmax2d", "ReLU6", "SELU", "CELU", "Softsign", "Hardsigmoid", "Hardswish",
           "LogSigmoid", "Tanhshrink", "Softshrink", "Hardshrink", "Threshold", "Softmin", "GLU",
           "PReLU"]
