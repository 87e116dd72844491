"""RNNCell, GRUCell, LSTMCell and Bilinear, composed from table ops exactly as torch's CPU
kernels compose them (so the grad_fn names are torch's: TanhBackward0, AddBackward0,
MulBackward0), with torch's parameter shapes and U(-1/sqrt(hidden), 1/sqrt(hidden)) init."""

import math

from ..factories import zeros
from . import functional as F  # noqa: N812 - torch's idiom
from .layers import _uniform
from .module import Module, Parameter
from .recurrent_layers import GRU, LSTM, RNN, RNNBase


class RNNCellBase(Module):
    """The cells' base: ``weight_ih``, ``weight_hh`` (and biases) of ``num_chunks`` gates,
    drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

    Same as ``torch.nn.RNNCellBase``.

    Args:
        input_size: the number of features of an input.
        hidden_size: the number of features of the hidden state.
        bias: whether the cell has the biases ``bias_ih`` and ``bias_hh``.
        num_chunks: the number of gates (1 for RNNCell, 3 for GRUCell, 4 for LSTMCell).
        device: accepted for torch's signature; numbagrad runs on the CPU.
        dtype: the parameters' dtype (the default dtype if None).
    """

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        k = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
        n = num_chunks * hidden_size
        self.weight_ih = Parameter(_uniform((n, input_size), k, dtype))
        self.weight_hh = Parameter(_uniform((n, hidden_size), k, dtype))
        if bias:
            self.bias_ih = Parameter(_uniform((n,), k, dtype))
            self.bias_hh = Parameter(_uniform((n,), k, dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)

    def reset_parameters(self):
        """Draw every weight and bias again from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        k = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for p in self.parameters():
            p._array()[...] = _uniform(tuple(p.shape), k, p.dtype)

    def _zeros(self, input):  # noqa: A002 - torch's names
        shape = (input.shape[0], self.hidden_size) if input.ndim == 2 else (self.hidden_size,)
        return zeros(shape, dtype=input.dtype)

    def _gates_of(self, input, hx):  # noqa: A002
        # torch's checks, naming the cell and the size (else a matmul error naming neither)
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        if input.ndim == 2 and hx.ndim == 2 and input.shape[0] != hx.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden0 batch "
                               f"size {hx.shape[0]}")
        if hx.ndim and hx.shape[-1] != self.hidden_size:
            raise RuntimeError(f"hidden0 has inconsistent hidden_size: got {hx.shape[-1]}, "
                               f"expected {self.hidden_size}")
        return (F.linear(input, self.weight_ih, self.bias_ih),
                F.linear(hx, self.weight_hh, self.bias_hh))

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or relu).

    Same as ``torch.nn.RNNCell``.
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):  # noqa: A002
        """One step.

        Args:
            input: ``(batch, input_size)`` or ``(input_size,)``.
            hx: the hidden state, ``(batch, hidden_size)`` or ``(hidden_size,)``; zeros if None.

        Returns:
            The next hidden state, of ``hx``'s shape.
        """
        if self.nonlinearity not in ("tanh", "relu"):  # torch checks it here, not in __init__
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        hx = self._zeros(input) if hx is None else hx
        i, h = self._gates_of(input, hx)
        return F.tanh(i + h) if self.nonlinearity == "tanh" else F.relu(i + h)


class GRUCell(RNNCellBase):
    """One step of a gated recurrent unit.

    Same as ``torch.nn.GRUCell``.
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002
        """One step.

        Args:
            input: ``(batch, input_size)`` or ``(input_size,)``.
            hx: the hidden state, ``(batch, hidden_size)`` or ``(hidden_size,)``; zeros if None.

        Returns:
            The next hidden state, of ``hx``'s shape.
        """
        hx = self._zeros(input) if hx is None else hx
        i, h = self._gates_of(input, hx)
        d = i.ndim - 1
        ir, iz, in_ = i.chunk(3, d)
        hr, hz, hn = h.chunk(3, d)
        reset = F.sigmoid(hr + ir)
        update = F.sigmoid(hz + iz)
        new = F.tanh(in_ + hn * reset)
        return (hx - new) * update + new


class LSTMCell(RNNCellBase):
    """One step of a long short-term memory cell: ``(h, c)`` to ``(h', c')``.

    Same as ``torch.nn.LSTMCell``.
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002
        """One step.

        Args:
            input: ``(batch, input_size)`` or ``(input_size,)``.
            hx: the pair ``(h, c)`` of hidden and cell states, each ``(batch, hidden_size)``
                or ``(hidden_size,)``; zeros if None.

        Returns:
            The next ``(h, c)``, each of the states' shape.
        """
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        h, c = hx
        gi, gh = self._gates_of(input, h)
        gates = gi + gh
        ingate, forget, cell, outgate = gates.chunk(4, gates.ndim - 1)
        cy = F.sigmoid(forget) * c + F.sigmoid(ingate) * F.tanh(cell)
        hy = F.sigmoid(outgate) * F.tanh(cy)
        return hy, cy


class Bilinear(Module):
    """y = x1^T A x2 + b, A (out, in1, in2), init U(-1/sqrt(in1), 1/sqrt(in1))."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        k = 1.0 / math.sqrt(in1_features) if in1_features > 0 else 0.0
        self.weight = Parameter(_uniform((out_features, in1_features, in2_features), k, dtype))
        if bias:
            self.bias = Parameter(_uniform((out_features,), k, dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, input1, input2):
        """``x1^T A x2 + b`` for each pair of rows.

        Args:
            input1: ``(..., in1_features)``.
            input2: ``(..., in2_features)``, the same leading shape.

        Returns:
            ``(..., out_features)``.
        """
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


__all__ = ["RNNCellBase", "RNNCell", "GRUCell", "LSTMCell", "Bilinear", "RNNBase", "RNN",
           "LSTM", "GRU"]
