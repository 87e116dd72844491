"""Modules for power-average pooling (LPPool1d/2d/3d), max unpooling (MaxUnpool1d/2d/3d),
channel shuffling (ChannelShuffle), fractional max pooling (FractionalMaxPool2d/3d) and the
randomized leaky ReLU (RReLU), with torch's constructor arguments and reprs."""

from . import functional as F  # noqa: N812 - torch's idiom
from .module import Module


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):  # noqa: A002 - torch's names
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling over a 1-D signal.

    Same as ``torch.nn.LPPool1d``.
    """

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over a 2-D signal.

    Same as ``torch.nn.LPPool2d``.
    """

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over a 3-D signal.

    Same as ``torch.nn.LPPool3d``.
    """

    _fn = staticmethod(F.lp_pool3d)


class _MaxUnpoolNd(Module):
    _fn = None
    _n = 0

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._n

        def tup(v):
            return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n
        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input, indices, output_size=None):  # noqa: A002
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of MaxPool1d: the values at their indices, zeros elsewhere.

    Same as ``torch.nn.MaxUnpool1d``.
    """

    _fn, _n = staticmethod(F.max_unpool1d), 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of MaxPool2d: the values at their indices, zeros elsewhere.

    Same as ``torch.nn.MaxUnpool2d``.
    """

    _fn, _n = staticmethod(F.max_unpool2d), 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of MaxPool3d: the values at their indices, zeros elsewhere.

    Same as ``torch.nn.MaxUnpool3d``.
    """

    _fn, _n = staticmethod(F.max_unpool3d), 3


class RReLU(Module):
    """Randomized leaky ReLU: in training, slopes drawn from U(lower, upper) for the elements
    <= 0 (torch's random stream); in eval, the middle slope.

    Same as ``torch.nn.RReLU``.
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):  # noqa: A002
        """``rrelu`` of ``input``: random negative slopes in [lower, upper] in training, their mean
        in eval mode.

        Args:
            input: the input tensor.

        Returns:
            A tensor of ``input``'s shape (``input`` itself when ``inplace``).
        """
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                            else "")


class ChannelShuffle(Module):
    """Splits the channels in ``groups`` and interleaves them, as ``channel_shuffle``.

    Same as ``torch.nn.ChannelShuffle``.
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):  # noqa: A002
        """``channel_shuffle`` of ``input`` in this layer's ``groups``.

        Args:
            input: (N, C, *) with C divisible by ``groups``.

        Returns:
            A tensor of ``input``'s shape.
        """
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class _FractionalMaxPoolNd(Module):
    _n = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        n, name = self._n, type(self).__name__
        if n == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             f"ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):  # noqa: A002
        fn = F.fractional_max_pool2d if self._n == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over a 2-D signal, as ``fractional_max_pool2d`` (new random
    windows each call unless ``_random_samples`` is given).

    Same as ``torch.nn.FractionalMaxPool2d``.
    """

    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over a 3-D signal, as ``fractional_max_pool3d``.

    Same as ``torch.nn.FractionalMaxPool3d``.
    """

    _n = 3


__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d", "ChannelShuffle", "LPPool1d",
           "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "RReLU"]
