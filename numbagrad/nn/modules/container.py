"""torch.nn.modules.container: containers, the same classes as numbagrad.nn's."""

from ..layers import ModuleDict, ModuleList, Sequential
from ..param_containers import ParameterDict, ParameterList

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
