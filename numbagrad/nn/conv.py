"""Convolution and pooling layers: Conv1d, Conv2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d,
with torch's constructor checks, parameter shapes, default initialisation and reprs."""

import math

from ..ops.nn import conv_functional as _conv
from .layers import _kaiming_bound, _uniform
from .module import Module, Parameter


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__()
        n = self._n
        kernel_size = _ntuple(kernel_size, n)
        stride = _ntuple(stride, n)
        dilation = _ntuple(dilation, n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ntuple(padding, n)
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        if padding_mode != "zeros":
            raise NotImplementedError(f"padding_mode='{padding_mode}' is not supported by "
                                      f"numbagrad yet: only padding_mode='zeros' is")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = False
        self.output_padding = (0,) * n
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_uniform(shape, _kaiming_bound(self._bound()), dtype))
        if bias:
            self.bias = Parameter(_uniform((out_channels,), self._bound(), dtype))
        else:
            self.register_parameter("bias", None)

    def _bound(self):
        """torch's kaiming_uniform_(a=sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the
        bias the same bound."""
        fan_in = self.in_channels // self.groups * math.prod(self.kernel_size)
        return 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0

    def reset_parameters(self):
        bound = self._bound()
        self.weight._array()[...] = _uniform(self.weight.shape, _kaiming_bound(bound),
                                             self.weight.dtype)
        if self.bias is not None:
            self.bias._array()[...] = _uniform(self.bias.shape, bound, self.bias.dtype)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """A 1-D convolution layer: learned filters ``weight`` and ``bias``, as ``conv1d``.

    Same as ``torch.nn.Conv1d``; ``padding_mode`` other than ``"zeros"`` raises
    NotImplementedError.
    """

    _n = 1

    def forward(self, input):  # noqa: A002 - torch's names
        """``conv1d`` of ``input`` with this layer's weight, bias and settings.

        Args:
            input: (N, in_channels, *spatial) or unbatched (in_channels, *spatial),
                with 1 spatial dimension.

        Returns:
            (N, out_channels, *spatial out), or without N for unbatched input.
        """
        return _conv.conv1d(input, self.weight, self.bias, self.stride, self.padding,
                            self.dilation, self.groups)


class Conv2d(_ConvNd):
    """A 2-D convolution layer: learned filters ``weight`` and ``bias``, as ``conv2d``.

    Same as ``torch.nn.Conv2d``; ``padding_mode`` other than ``"zeros"`` raises
    NotImplementedError.
    """

    _n = 2

    def forward(self, input):  # noqa: A002
        """``conv2d`` of ``input`` with this layer's weight, bias and settings.

        Args:
            input: (N, in_channels, *spatial) or unbatched (in_channels, *spatial),
                with 2 spatial dimensions.

        Returns:
            (N, out_channels, *spatial out), or without N for unbatched input.
        """
        return _conv.conv2d(input, self.weight, self.bias, self.stride, self.padding,
                            self.dilation, self.groups)


class MaxPool2d(Module):
    """Max pooling over a 2-D signal, as ``max_pool2d``.

    Same as ``torch.nn.MaxPool2d``.
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):  # noqa: A002
        """``max_pool2d`` of ``input`` with this layer's settings.

        Args:
            input: (N, C, H, W) or (C, H, W).

        Returns:
            The pooled tensor; with ``return_indices``, a pair (pooled, indices).
        """
        return _conv.max_pool2d(input, self.kernel_size, self.stride, self.padding,
                                self.dilation, ceil_mode=self.ceil_mode,
                                return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Average pooling over a 2-D signal, as ``avg_pool2d``.

    Same as ``torch.nn.AvgPool2d``.
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):  # noqa: A002
        """``avg_pool2d`` of ``input`` with this layer's settings.

        Args:
            input: (N, C, H, W) or (C, H, W).

        Returns:
            The pooled tensor.
        """
        return _conv.avg_pool2d(input, self.kernel_size, self.stride, self.padding,
                                self.ceil_mode, self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average pooling of a 2-D signal into an ``output_size`` grid, as ``adaptive_avg_pool2d``.

    Same as ``torch.nn.AdaptiveAvgPool2d``.
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        """``adaptive_avg_pool2d`` of ``input`` to this layer's ``output_size``.

        Args:
            input: (N, C, H, W) or (C, H, W).

        Returns:
            The pooled tensor, of spatial size ``output_size``.
        """
        return _conv.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


__all__ = ["Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]
