# ruff: noqa: A002 - torch's argument names (input)
"""Transposed convolutions, 1-d/3-d/adaptive pooling, padding, upsampling, pixel shuffle and
fold/unfold modules, with torch's constructor arguments, defaults and reprs."""

import math

from ..core.docs import torch_doc
from ..ops.nn import conv_functional as _conv
from ..ops.nn import spatial as _sp
from .conv import AvgPool2d, _ConvNd, _ntuple
from .layers import _kaiming_bound, _uniform
from .module import Module, Parameter


# ---- transposed convolutions -----------------------------------------------------------------
class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        Module.__init__(self)
        n = self._n
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = True
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups, *self.kernel_size)
        self.weight = Parameter(_uniform(shape, _kaiming_bound(self._bound()), dtype))
        if bias:
            self.bias = Parameter(_uniform((out_channels,), self._bound(), dtype))
        else:
            self.register_parameter("bias", None)

    def _bound(self):
        # torch's fan_in is the weight's dim 1 times the kernel: out_channels // groups here
        fan_in = self.out_channels // self.groups * math.prod(self.kernel_size)
        return 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0

    def forward(self, input, output_size=None):
        """The layer's transposed convolution (``_fn``) of ``input`` with its weight, bias and
        settings.

        Args:
            input: (N, in_channels, *spatial) or unbatched (in_channels, *spatial), with the
                layer's number of spatial dimensions.
            output_size: the wanted size of the output: its spatial sizes, maybe after the
                input's leading (batch and) channel sizes; it picks the output padding and
                must lie within the sizes the stride allows. Default None: the layer's
                ``output_padding``.

        Returns:
            (N, out_channels, *spatial out), or without N for unbatched input.
        """
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding,
                              self._output_padding(input, output_size), self.groups,
                              self.dilation)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        n = self._n
        lead = 2 if input.ndim == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have "
                             f"{n} or {lead + n} elements (got {len(output_size)})")
        lo = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
              + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        hi = [lo[d] + self.stride[d] - 1 for d in range(n)]
        for d, size in enumerate(output_size):
            if size < lo[d] or size > hi[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {lo} to {hi} (for an input of "
                                 f"{tuple(input.shape[2:])})")
        return tuple(output_size[d] - lo[d] for d in range(n))


class Conv3d(_ConvNd):
    """Conv3d; a padding_mode other than "zeros" pads with F.pad first, as torch does."""

    _n = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in modes:
            raise ValueError(f"padding_mode must be one of {modes}, but got "
                             f"padding_mode='{padding_mode}'")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, "zeros", device, dtype)
        self.padding_mode = padding_mode

    def forward(self, input):
        """``conv3d`` of ``input`` with this layer's weight, bias and settings
        (its ``padding_mode``'s padding first).

        Args:
            input: (N, in_channels, *spatial) or unbatched (in_channels, *spatial),
                with 3 spatial dimensions.

        Returns:
            (N, out_channels, *spatial out), or without N for unbatched input.
        """
        if self.padding_mode == "zeros":
            return _sp.conv3d(input, self.weight, self.bias, self.stride, self.padding,
                              self.dilation, self.groups)
        if isinstance(self.padding, str):  # "same": torch's split of the total padding
            total = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            pads = [p for t in reversed(total) for p in (t // 2, t - t // 2)]
        else:
            pads = [p for p in reversed(self.padding) for _ in range(2)]
        x = _sp.pad(input, pads, mode=self.padding_mode)
        return _sp.conv3d(x, self.weight, self.bias, self.stride, 0, self.dilation,
                          self.groups)


class ConvTranspose1d(_ConvTransposeNd):
    """A 1-D transposed convolution layer, as ``conv_transpose1d``.

    Same as ``torch.nn.ConvTranspose1d``.
    """

    _n = 1
    _fn = staticmethod(_conv.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """A 2-D transposed convolution layer, as ``conv_transpose2d``.

    Same as ``torch.nn.ConvTranspose2d``.
    """

    _n = 2
    _fn = staticmethod(_conv.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """A 3-D transposed convolution layer, as ``conv_transpose3d``.

    Same as ``torch.nn.ConvTranspose3d``.
    """

    _n = 3
    _fn = staticmethod(_sp.conv_transpose3d)


# ---- pooling ---------------------------------------------------------------------------------
class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max pooling over a 1-D signal, as ``max_pool1d``.

    Same as ``torch.nn.MaxPool1d``.
    """

    _fn = staticmethod(_sp.max_pool1d)


class MaxPool3d(_MaxPoolNd):
    """Max pooling over a 3-D signal, as ``max_pool3d``.

    Same as ``torch.nn.MaxPool3d``.
    """

    _fn = staticmethod(_sp.max_pool3d)


class AvgPool1d(Module):
    """Average pooling over a 1-D signal, as ``avg_pool1d``.

    Same as ``torch.nn.AvgPool1d``.
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        """``avg_pool1d`` of ``input`` with this layer's settings.

        Args:
            input: (N, C, L) or (C, L).

        Returns:
            The pooled tensor.
        """
        return _sp.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """AvgPool2d's arguments and repr, over three spatial dims."""

    def forward(self, input):
        """``avg_pool3d`` of ``input`` with this layer's settings.

        Args:
            input: (N, C, D, H, W) or (C, D, H, W).

        Returns:
            The pooled tensor.
        """
        return _sp.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)


class _AdaptivePool(Module):
    _fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveMaxPool(_AdaptivePool):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling of a 1-D signal into ``output_size`` windows.

    Same as ``torch.nn.AdaptiveAvgPool1d``.
    """

    _fn = staticmethod(_sp.adaptive_avg_pool1d)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling of a 3-D signal into an ``output_size`` grid.

    Same as ``torch.nn.AdaptiveAvgPool3d``.
    """

    _fn = staticmethod(_sp.adaptive_avg_pool3d)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max pooling of a 1-D signal into ``output_size`` windows.

    Same as ``torch.nn.AdaptiveMaxPool1d``.
    """

    _fn = staticmethod(_sp.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Max pooling of a 2-D signal into an ``output_size`` grid.

    Same as ``torch.nn.AdaptiveMaxPool2d``.
    """

    _fn = staticmethod(_sp.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max pooling of a 3-D signal into an ``output_size`` grid.

    Same as ``torch.nn.AdaptiveMaxPool3d``.
    """

    _fn = staticmethod(_sp.adaptive_max_pool3d)


# ---- padding ---------------------------------------------------------------------------------
def _pad_tuple(padding, n):
    if isinstance(padding, (list, tuple)):
        if len(padding) != 2 * n:
            raise ValueError(f"Padding must be an int or a {2 * n}-element tuple, got "
                             f"{len(padding)} elements")
        return tuple(padding)
    return (padding,) * (2 * n)


class _PadNd(Module):
    _n = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _pad_tuple(padding, self._n)

    def forward(self, input):
        return _sp.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return _sp.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


# how each padding mode fills, for the classes' docstrings
_FILLS = {"constant": "with ``value``", "reflect": "by reflecting the input at its edges",
          "replicate": "by repeating the edge values", "circular": "by wrapping the input around"}


def _pad_class(name, n, mode, base=_PadNd, fill=None):
    fill = fill or _FILLS[mode]
    dims = "last dimension" if n == 1 else f"last {n} dimensions"
    doc = torch_doc(f"Pads the {dims} {fill}, by the amounts ``padding`` gives.",
                    f"torch.nn.{name}")
    return type(name, (base,), {"_n": n, "_mode": mode, "__module__": __name__, "__doc__": doc})


ConstantPad1d = _pad_class("ConstantPad1d", 1, "constant", _ConstantPadNd)
ConstantPad2d = _pad_class("ConstantPad2d", 2, "constant", _ConstantPadNd)
ConstantPad3d = _pad_class("ConstantPad3d", 3, "constant", _ConstantPadNd)
ReflectionPad1d = _pad_class("ReflectionPad1d", 1, "reflect")
ReflectionPad2d = _pad_class("ReflectionPad2d", 2, "reflect")
ReflectionPad3d = _pad_class("ReflectionPad3d", 3, "reflect")
ReplicationPad1d = _pad_class("ReplicationPad1d", 1, "replicate")
ReplicationPad2d = _pad_class("ReplicationPad2d", 2, "replicate")
ReplicationPad3d = _pad_class("ReplicationPad3d", 3, "replicate")
CircularPad1d = _pad_class("CircularPad1d", 1, "circular")
CircularPad2d = _pad_class("CircularPad2d", 2, "circular")
CircularPad3d = _pad_class("CircularPad3d", 3, "circular")


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


ZeroPad1d = _pad_class("ZeroPad1d", 1, "constant", _ZeroPadNd, "with zeros")
ZeroPad2d = _pad_class("ZeroPad2d", 2, "constant", _ZeroPadNd, "with zeros")
ZeroPad3d = _pad_class("ZeroPad3d", 3, "constant", _ZeroPadNd, "with zeros")


# ---- upsampling, pixel shuffle, fold ---------------------------------------------------------
class Upsample(Module):
    """Resizes its input to ``size`` or by ``scale_factor``, as ``interpolate``.

    Same as ``torch.nn.Upsample``.
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        """``interpolate`` of ``input`` with this layer's size or scale factor and mode.

        Args:
            input: (N, C, *spatial) with 1 to 3 spatial dimensions.

        Returns:
            The resized tensor.
        """
        return _sp.interpolate(input, self.size, self.scale_factor, self.mode,
                               self.align_corners,
                               recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Resizes 2-D images by nearest-neighbour interpolation.

    Same as ``torch.nn.UpsamplingNearest2d``.
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Resizes 2-D images by bilinear interpolation with ``align_corners=True``.

    Same as ``torch.nn.UpsamplingBilinear2d``.
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """Rearranges channels into space, as ``pixel_shuffle``.

    Same as ``torch.nn.PixelShuffle``.
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        """``pixel_shuffle`` of ``input`` by this layer's ``upscale_factor`` r.

        Args:
            input: (*, C * r * r, H, W).

        Returns:
            A tensor of shape (*, C, H * r, W * r).
        """
        return _sp.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearranges space into channels, as ``pixel_unshuffle``.

    Same as ``torch.nn.PixelUnshuffle``.
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        """``pixel_unshuffle`` of ``input`` by this layer's ``downscale_factor`` r.

        Args:
            input: (*, C, H * r, W * r).

        Returns:
            A tensor of shape (*, C * r * r, H, W).
        """
        return _sp.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class Fold(Module):
    """Sums sliding local blocks back into images, as ``fold``.

    Same as ``torch.nn.Fold``.
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        """``fold`` of ``input``'s sliding blocks into a tensor of ``output_size``.

        Args:
            input: (N, C * prod(kernel_size), L) or unbatched (C * prod(kernel_size), L), L the
                number of blocks.

        Returns:
            (N, C, *output_size), or without N for unbatched input.
        """
        return _sp.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                        self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extracts the sliding local blocks of images as columns, as ``unfold``.

    Same as ``torch.nn.Unfold``.
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        """``unfold`` of ``input`` into its sliding blocks.

        Args:
            input: (N, C, H, W) or unbatched (C, H, W).

        Returns:
            (N, C * prod(kernel_size), L), L the number of blocks; without N for unbatched input.
        """
        return _sp.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


__all__ = ["Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "MaxPool1d",
           "MaxPool3d", "AvgPool1d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "ConstantPad1d",
           "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
           "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
           "CircularPad1d", "CircularPad2d", "CircularPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle",
           "PixelUnshuffle", "Fold", "Unfold"]
