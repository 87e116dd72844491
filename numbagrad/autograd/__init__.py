"""numbagrad.autograd: backward(), grad mode switches, and the tape machinery beneath them."""

from ..core import grad_mode  # noqa: F401 - numbagrad.autograd.grad_mode, its old home
from ..core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from . import (
    anomaly,  # noqa: F401
    anomaly_mode,  # noqa: F401 - torch.autograd.anomaly_mode
    engine,  # noqa: F401
    forward_ad,  # noqa: F401 - torch.autograd.forward_ad
    functional,  # noqa: F401 - torch.autograd.functional
    graph,  # noqa: F401 - torch.autograd.graph
    profiler,  # noqa: F401 - torch.autograd.profiler
)
from .anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .api import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import gradcheck, gradgradcheck
from .variable import Variable

__all__ = ["Variable", "backward", "grad", "Function", "FunctionCtx", "once_differentiable",
           "gradcheck",
           "gradgradcheck", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "no_grad",
           "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode"]
