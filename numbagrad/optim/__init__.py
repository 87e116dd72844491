"""numbagrad.optim: torch.optim's optimizers and learning-rate schedulers.

SGD, Adam, AdamW, Adagrad and RMSprop update all the parameters of a group (of one dtype) in
one call of a Numba kernel, in place, with torch's arithmetic in the parameters' dtype
(``_kernels``); Adafactor, Adadelta, Adamax, NAdam, RAdam, Rprop and ASGD update each parameter with
NumPy in place, in torch's order of operations.
"""

from . import (
           lr_scheduler,  # noqa: F401
           swa_utils,  # noqa: F401,E402 - uses the schedulers and nn
)
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .cyclic_lr import CyclicLR
from .elementwise_optimizers import ASGD, Adadelta, Adamax, NAdam, RAdam, Rprop
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .stateless import swap_in_optimizer_params_and_state

lr_scheduler.CyclicLR = CyclicLR

__all__ = ["Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "ASGD", "LBFGS", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "lr_scheduler", "swa_utils",
           "swap_in_optimizer_params_and_state"]
