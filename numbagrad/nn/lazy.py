"""Lazy modules: UninitializedParameter / UninitializedBuffer, and the layers whose input
size is the channel count (or last dim) of their first input: LazyLinear, LazyConv1d/2d/3d,
LazyConvTranspose1d/2d/3d, LazyBatchNorm1d/2d/3d, LazyInstanceNorm1d/2d/3d. As torch's
LazyModuleMixin: the first call sizes the placeholders in place (same objects, so an optimizer
made before it keeps them), runs the layer's reset_parameters (torch's random draws, in its
order) and turns the module into its ``cls_to_become``."""

import numpy as np

from .. import dtypes
from ..tensor import Tensor, _init_tensor, _make
from .conv import Conv1d, Conv2d
from .layers import Linear
from .module import Parameter
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _NormBase
from .spatial_layers import Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .spatial_norm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d


def _empty(dtype):
    return np.empty(0, (dtypes.as_dtype(dtype) or dtypes.get_default_dtype()).np)


class UninitializedParameter(Parameter):
    """A parameter of no size yet, a lazy module's until its first call: ``materialize(shape)``
    gives it one and makes it a ``Parameter``. Until then it holds no elements (shape (0,);
    torch's refuses any use instead).

    Same as ``torch.nn.UninitializedParameter``.

    Args:
        requires_grad: whether the parameter requires grad (default True).
        device: accepted for torch's signature and ignored.
        dtype: its dtype (default None: the default dtype).
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        super().__init__(_empty(dtype), requires_grad)

    def materialize(self, shape, device=None, dtype=None):
        """Give the parameter ``shape`` (uninitialised values) and make it a ``Parameter``."""
        dt = dtypes.as_dtype(dtype).np if dtype is not None else self._data.dtype
        self._data = np.empty(tuple(shape), dt)
        self.__class__ = self.cls_to_become

    def __deepcopy__(self, memo):
        # a new placeholder (Parameter's own copy would pass data where this takes flags)
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, dtype=self.dtype)
        return memo[id(self)]

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__


class UninitializedBuffer(Tensor):
    """A buffer of no size yet, a lazy module's until its first call: ``materialize(shape)``
    gives it one and makes it a ``Tensor`` (shape (0,) until then, as UninitializedParameter).

    Same as ``torch.nn.UninitializedBuffer``.

    Args:
        requires_grad: whether the buffer requires grad (default False).
        device: accepted for torch's signature and ignored.
        dtype: its dtype (default None: the default dtype).
        persistent: accepted for torch's signature and ignored here.
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        _init_tensor(self, _empty(dtype))
        self.requires_grad = requires_grad

    def materialize(self, shape, device=None, dtype=None):
        """Give the buffer ``shape`` (uninitialised values) and make it a ``Tensor``."""
        UninitializedParameter.materialize(self, shape, device, dtype)

    __deepcopy__ = UninitializedParameter.__deepcopy__
    __repr__ = UninitializedParameter.__repr__
    __str__ = __repr__


class _LazyMixin:
    """torch's LazyModuleMixin: ``initialize_parameters(input)`` before the first forward,
    then the module is its ``cls_to_become``."""

    cls_to_become = None

    def has_uninitialized_params(self):
        return any(isinstance(t, (UninitializedParameter, UninitializedBuffer))
                   for t in (*self._parameters.values(), *self._buffers.values()))

    def forward(self, *args, **kwargs):
        self.initialize_parameters(*args, **kwargs)
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {type(self).__name__} has not been fully initialized")
        self.__class__ = self.cls_to_become
        return self.forward(*args, **kwargs)


class LazyLinear(_LazyMixin, Linear):
    """Linear whose in_features is the last dim of its first input.

    Same as ``torch.nn.LazyLinear``.
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, device, dtype)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def initialize_parameters(self, input):  # noqa: A002
        """Give the parameters their shapes from the first input (called by the first forward).

        Args:
            input: the first input; its last dimension becomes ``in_features``.
        """
        if self.has_uninitialized_params():
            self.in_features = int(input.shape[-1])
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()


# ---- convolutions ----------------------------------------------------------------------------
class _LazyConvMixin(_LazyMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        # torch builds the layer with no channels and no bias, then puts placeholders in
        self.cls_to_become.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups,
                                    False, padding_mode, device, dtype)
        self._placeholders(out_channels, bias, dtype)

    def _placeholders(self, out_channels, bias, dtype):
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def initialize_parameters(self, input, *args, **kwargs):  # noqa: A002
        """Give the parameters their shapes from the first input (called by the first forward)."""
        if self.has_uninitialized_params():
            n = self._n
            if input.ndim not in (n + 1, n + 2):
                raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input "
                                   f"to {type(self).__name__}, but got input of size: "
                                   f"{input.shape}")
            self.in_channels = int(input.shape[1] if input.ndim == n + 2 else input.shape[0])
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyConvTransposeMixin(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        self.cls_to_become.__init__(self, 0, 0, kernel_size, stride, padding, output_padding,
                                    groups, False, dilation, padding_mode, device, dtype)
        self._placeholders(out_channels, bias, dtype)


class LazyConv1d(_LazyConvMixin, Conv1d):
    """Conv1d whose in_channels is the channel count of its first input.

    Same as ``torch.nn.LazyConv1d``.
    """

    cls_to_become = Conv1d


class LazyConv2d(_LazyConvMixin, Conv2d):
    """Conv2d whose in_channels is the channel count of its first input.

    Same as ``torch.nn.LazyConv2d``.
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConvMixin, Conv3d):
    """Conv3d whose in_channels is the channel count of its first input.

    Same as ``torch.nn.LazyConv3d``.
    """

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTransposeMixin, ConvTranspose1d):
    """ConvTranspose1d whose in_channels is the channel count of its first input.

    Same as ``torch.nn.LazyConvTranspose1d``.
    """

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeMixin, ConvTranspose2d):
    """ConvTranspose2d whose in_channels is the channel count of its first input.

    Same as ``torch.nn.LazyConvTranspose2d``.
    """

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeMixin, ConvTranspose3d):
    """ConvTranspose3d whose in_channels is the channel count of its first input.

    Same as ``torch.nn.LazyConvTranspose3d``.
    """

    cls_to_become = ConvTranspose3d


# ---- batch and instance norms ----------------------------------------------------------------
class _LazyNormMixin(_LazyMixin):
    # the lazy instance norms too default to affine and running statistics (torch's do)
    def __init__(self, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        # torch builds the layer with no affine and no statistics, then puts placeholders in
        _NormBase.__init__(self, 0, eps, momentum, False, False, dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = _make(np.array(0, np.int64))

    def initialize_parameters(self, input):  # noqa: A002
        """Give the parameters their shapes from the first input (called by the first forward)."""
        # torch sizes what is uninitialized only: with neither affine nor running statistics,
        # num_features stays 0
        if self.has_uninitialized_params():
            self.num_features = int(input.shape[1])
            for t in (self.weight, self.bias, self.running_mean, self.running_var):
                if t is not None:
                    t.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormMixin, BatchNorm1d):
    """BatchNorm1d whose num_features is the channel count (dim 1) of its first input.

    Same as ``torch.nn.LazyBatchNorm1d``.
    """

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormMixin, BatchNorm2d):
    """BatchNorm2d whose num_features is the channel count (dim 1) of its first input.

    Same as ``torch.nn.LazyBatchNorm2d``.
    """

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormMixin, BatchNorm3d):
    """BatchNorm3d whose num_features is the channel count (dim 1) of its first input.

    Same as ``torch.nn.LazyBatchNorm3d``.
    """

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNormMixin, InstanceNorm1d):
    """InstanceNorm1d whose num_features is the channel count (dim 1) of its first input.

    Same as ``torch.nn.LazyInstanceNorm1d``.
    """

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormMixin, InstanceNorm2d):
    """InstanceNorm2d whose num_features is the channel count (dim 1) of its first input.

    Same as ``torch.nn.LazyInstanceNorm2d``.
    """

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormMixin, InstanceNorm3d):
    """InstanceNorm3d whose num_features is the channel count (dim 1) of its first input.

    Same as ``torch.nn.LazyInstanceNorm3d``.
    """

    cls_to_become = InstanceNorm3d


__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyLinear", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
