"""torch.nn.modules.rnn: recurrent layers, the same classes as numbagrad.nn's."""

from ..recurrent import GRUCell, LSTMCell, RNNCell
from ..recurrent_layers import GRU, LSTM, RNN, RNNBase

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"]
