"""numbagrad.optim: torch.optim's optimizers and learning-rate schedulers.

Every optimizer updates all the parameters of a group (of one dtype) in one call of a Numba
kernel, in place, with torch's arithmetic in the parameters' dtype (``_kernels``).
"""

from . import lr_scheduler  # noqa: F401
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "LBFGS", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
