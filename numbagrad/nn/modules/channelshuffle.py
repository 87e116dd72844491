"""torch.nn.modules.channelshuffle: the channel shuffle, the same class as numbagrad.nn's."""

from ..more_layers import ChannelShuffle

__all__ = ["ChannelShuffle"]
