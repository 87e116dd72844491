"""torch.nn.modules.rnn: recurrent layers, the same classes as numbagrad.nn's."""

from ..recurrent import GRUCell, LSTMCell, RNNCell, RNNCellBase
from ..recurrent_layers import GRU, LSTM, RNN, RNNBase

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
