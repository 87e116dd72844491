"""nn.RNN, nn.LSTM and nn.GRU: stacked, optionally bidirectional recurrent layers with torch's
parameter names, shapes, gate order and init, composed from table ops.

Each layer and direction projects the inputs of all time steps with one addmm, then runs the
hidden-to-hidden products step by step. Padded and packed inputs share one loop: a padded batch
is a packed one whose batch size never shrinks."""

import math
import warnings

import numpy as np

from ..factories import zeros
from ..ops.index.indexing import index_select
from ..ops.shape.join import cat, split, stack, unbind
from ..ops.shape.movement import squeeze, unsqueeze
from ..tensor import Tensor
from . import functional as F  # noqa: N812 - torch's idiom
from .layers import _uniform
from .module import Module, Parameter
from .utils.rnn import PackedSequence

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_tanh_step(x_gates, h, w_hh, b_hh):
    return F.tanh(x_gates + F.linear(h, w_hh, b_hh)), None


def _rnn_relu_step(x_gates, h, w_hh, b_hh):
    return F.relu(x_gates + F.linear(h, w_hh, b_hh)), None


def _gru_step(x_gates, h, w_hh, b_hh):
    ir, iz, in_ = x_gates.chunk(3, 1)
    hr, hz, hn = F.linear(h, w_hh, b_hh).chunk(3, 1)
    reset = F.sigmoid(ir + hr)
    update = F.sigmoid(iz + hz)
    new = F.tanh(in_ + reset * hn)
    return (h - new) * update + new, None


def _lstm_step(x_gates, h, w_hh, b_hh, c, w_hr):
    gates = x_gates + F.linear(h, w_hh, b_hh)
    ingate, forget, cell, outgate = gates.chunk(4, 1)
    c = F.sigmoid(forget) * c + F.sigmoid(ingate) * F.tanh(cell)
    h = F.sigmoid(outgate) * F.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


class RNNBase(Module):
    """The base of ``RNN``, ``LSTM`` and ``GRU``: stacked, maybe bidirectional recurrent layers.

    Same as ``torch.nn.RNNBase``.

    Args:
        mode: "RNN_TANH", "RNN_RELU", "LSTM" or "GRU".
        input_size: the number of features of each input step.
        hidden_size: the number of features of the hidden state (a positive int).
        num_layers: the number of stacked layers (default 1).
        bias: whether the layers have biases ``bias_ih`` and ``bias_hh`` (default True).
        batch_first: whether batched input and output are (batch, seq, feature) rather
            than (seq, batch, feature) (default False).
        dropout: the probability of dropout on the outputs of every layer but the last, in
            training (default 0.0).
        bidirectional: whether each layer also runs backwards (default False).
        proj_size: the size each layer's hidden state is projected to (``weight_hr``),
            below ``hidden_size`` (default 0: no projection).
        device: the device; only the CPU (default None).
        dtype: the parameters' dtype (default None: the default dtype).
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        if (not isinstance(dropout, (int, float)) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        k = 1.0 / math.sqrt(hidden_size)
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(_uniform(shape, k, dtype)))
                    self._flat_weights_names.append(name + suffix)

    def reset_parameters(self):
        """Draw every weight and bias again from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        k = 1.0 / math.sqrt(self.hidden_size)
        for w in self.parameters():
            w._array()[...] = _uniform(w.shape, k, w.dtype)

    def flatten_parameters(self):
        """A no-op: the weights are never fused into one buffer here."""

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters per layer and direction, as lists in torch's order."""
        per = len(self._flat_weights_names) // (self.num_layers * (1 + self.bidirectional))
        w = self._flat_weights
        return [w[i:i + per] for i in range(0, len(w), per)]

    def _layer_weights(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        return tuple(getattr(self, name + suffix, None)
                     for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- forward ------------------------------------------------------------------------------
    def _step_fn(self):
        return {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "GRU": _gru_step,
                "LSTM": _lstm_step}[self.mode]

    def _check_input(self, input, batch_sizes):  # noqa: A002 - torch's names
        weight = self.weight_ih_l0
        if input.dtype is not weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.ndim}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _check_hidden(self, hx, expected, what="hidden"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected {what} size {expected}, got {list(hx.shape)}")

    def _run(self, rows, batch_sizes, hs, cs, padded):
        """rows: the inputs of all time steps, step after step (batch_sizes[t] rows each);
        hs, cs: the L*D initial states. Returns the last layer's output ((T, B, *) for a
        padded batch, packed rows otherwise) and the final states (L*D, B, *)."""
        directions = 2 if self.bidirectional else 1
        step = self._step_fn()
        h_last, c_last = [], []
        for layer in range(self.num_layers):
            outs_by_dir = []
            for direction in range(directions):
                index = layer * directions + direction
                outs, h_n, c_n = _run_direction(rows, batch_sizes,
                                                self._layer_weights(layer, direction),
                                                hs[index], cs[index] if cs else None, step,
                                                direction == 1)
                # torch's layout: the steps stacked (padded) or concatenated (packed)
                outs_by_dir.append(stack(outs, 0) if padded else cat(outs, 0))
                h_last.append(h_n)
                c_last.append(c_n)
            output = cat(outs_by_dir, -1) if directions == 2 else outs_by_dir[0]
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                output = F.dropout(output, self.dropout, True)
            rows = output.reshape(-1, output.shape[-1]) if padded else output
        return output, stack(h_last, 0), stack(c_last, 0) if cs else None

    def forward(self, input, hx=None):  # noqa: A002, C901 - torch's names; one entry point
        """Run the layers over the sequence ``input`` from the initial state ``hx``.

        Args:
            input: (seq, batch, input_size), (batch, seq, input_size) with ``batch_first``, or
                (seq, input_size) unbatched; or a PackedSequence.
            hx: the initial hidden state, (num_layers * directions, batch, proj_size or
                hidden_size), without the batch dimension for unbatched input; for LSTM a
                pair (h_0, c_0), c_0 with hidden_size features. Default None: zeros.

        Returns:
            A pair (output, h_n), for LSTM (output, (h_n, c_n)); output holds the last layer's
            hidden state at every step (a PackedSequence for packed input).
        """
        lstm = self.mode == "LSTM"
        directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        unbatched = False
        if packed:
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in np.asarray(batch_sizes_t._array())]
            batch = batch_sizes[0]
            self._check_input(data, batch_sizes)
        else:
            if input.ndim not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                                 f"{input.ndim}D tensor instead")
            unbatched = input.ndim == 2
            x = unsqueeze(input, 1) if unbatched else input
            if self.batch_first and not unbatched:
                x = x.transpose(0, 1)
            self._check_input(x, None)
            if x.shape[0] == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            batch, sorted_indices, unsorted_indices = x.shape[1], None, None
            batch_sizes = [batch] * x.shape[0]
        dt = input.data.dtype if packed else input.dtype
        hidden_shape = (self.num_layers * directions, batch, real_hidden)
        cell_shape = (self.num_layers * directions, batch, self.hidden_size)
        if hx is None:
            h0 = zeros(hidden_shape, dtype=dt)
            c0 = zeros(cell_shape, dtype=dt) if lstm else None
        else:
            if lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise RuntimeError("LSTM expects hx to be a tuple (h_0, c_0)")
                h0, c0 = hx
            else:
                if not isinstance(hx, Tensor):
                    raise TypeError(f"{type(self).__name__}: hx should be a Tensor, got "
                                    f"{type(hx).__name__}")
                h0, c0 = hx, None
            want = 2 if unbatched else 3
            for h in (h0, c0) if lstm else (h0,):
                if h.ndim != want:
                    kind = "unbatched 2-D" if unbatched else "batched 3-D"
                    name = "hx and cx" if lstm else "hx"
                    raise RuntimeError(f"For {kind} input, {name} should also be {want}-D but "
                                       f"got {h.ndim}-D tensor")
            if unbatched:
                h0 = unsqueeze(h0, 1)
                c0 = unsqueeze(c0, 1) if lstm else None
            if sorted_indices is not None:  # the states follow the sequences into sorted order
                h0 = index_select(h0, 1, sorted_indices)
                c0 = index_select(c0, 1, sorted_indices) if lstm else None
            self._check_hidden(h0, hidden_shape, "hidden[0]" if lstm else "hidden")
            if lstm:
                self._check_hidden(c0, cell_shape, "hidden[1]")
        rows = data if packed else x.reshape(-1, x.shape[-1])
        outs, h_n, c_n = self._run(rows, batch_sizes, unbind(h0, 0),
                                   unbind(c0, 0) if lstm else None, not packed)
        if packed:
            output = PackedSequence(outs, batch_sizes_t, sorted_indices, unsorted_indices)
            if unsorted_indices is not None:
                h_n = index_select(h_n, 1, unsorted_indices)
                c_n = index_select(c_n, 1, unsorted_indices) if lstm else None
        else:
            output = outs
            if unbatched:
                output = squeeze(output, 1)
                h_n = squeeze(h_n, 1)
                c_n = squeeze(c_n, 1) if lstm else None
            elif self.batch_first:
                output = output.transpose(0, 1)
        return (output, (h_n, c_n)) if lstm else (output, h_n)


def _split_rows(rows, batch_sizes):
    """The per-step blocks of rows: a packed sequence's steps, or a padded batch's."""
    if len(set(batch_sizes)) == 1:
        return list(unbind(rows.reshape(len(batch_sizes), batch_sizes[0], rows.shape[-1]), 0))
    return list(split(rows, batch_sizes, 0))


def _run_direction(rows, batch_sizes, weights, h0, c0, step, reverse):
    """One layer in one direction over the steps; returns (per-step outputs, h_n, c_n)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    projected = _split_rows(F.linear(rows, w_ih, b_ih), batch_sizes)  # one addmm for all steps
    lstm = c0 is not None
    outs = [None] * len(batch_sizes)
    if reverse:
        # the shortest sequences start first; the others join as the batch grows
        n = batch_sizes[-1]
        h = h0[:n] if n < h0.shape[0] else h0
        c = (c0[:n] if n < c0.shape[0] else c0) if lstm else None
        for t in range(len(batch_sizes) - 1, -1, -1):
            bs = batch_sizes[t]
            if bs > h.shape[0]:
                h = cat([h, h0[h.shape[0]:bs]], 0)
                c = cat([c, c0[c.shape[0]:bs]], 0) if lstm else None
            h, c = step(projected[t], h, w_hh, b_hh, *((c, w_hr) if lstm else ()))
            outs[t] = h
        return outs, h, c
    # forward: sequences that end leave their final state behind as the batch shrinks
    h, c = h0, c0
    done_h, done_c = [], []
    for t, bs in enumerate(batch_sizes):
        if bs < h.shape[0]:
            done_h.append(h[bs:])
            h = h[:bs]
            if lstm:
                done_c.append(c[bs:])
                c = c[:bs]
        h, c = step(projected[t], h, w_hh, b_hh, *((c, w_hr) if lstm else ()))
        outs[t] = h
    if done_h:
        h = cat([h, *reversed(done_h)], 0)
        c = cat([c, *reversed(done_c)], 0) if lstm else None
    return outs, h, c


class RNN(RNNBase):
    """A multi-layer Elman RNN (tanh or relu) over a sequence.

    Same as ``torch.nn.RNN``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """A multi-layer long short-term memory RNN over a sequence.

    Same as ``torch.nn.LSTM``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """A multi-layer gated recurrent unit RNN over a sequence.

    Same as ``torch.nn.GRU``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


__all__ = ["RNNBase", "RNN", "LSTM", "GRU"]
