"""weight_norm and spectral_norm as torch.nn.utils's (the hook-based forms): the weight is
recomputed before each forward from the parameters they register."""

import numpy as np

from ...core.grad_mode import no_grad
from ...factories import _normal_array
from ...ops.linalg.matmul import dot, mv
from ...ops.reduce.reductions import sum as _sum
from ...ops.shape.movement import permute, reshape
from ...tensor import _make
from ..module import Parameter


def _norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every dim but ``dim`` (kept as size-1 dims)."""
    if dim == -1:
        return (v * v).sum().sqrt()
    dims = tuple(d for d in range(v.ndim) if d != dim)
    return _sum(v * v, dims, keepdim=True).sqrt() if dims else (v * v).sqrt()


class WeightNorm:
    def __init__(self, name, dim):
        self.name, self.dim = name, dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Reparameterize ``module.<name>`` as g * v / ||v||: registers ``<name>_g`` and
    ``<name>_v`` and recomputes the weight before every forward."""
    weight = module._parameters.pop(name)
    if dim is None:
        dim = -1
    elif dim < 0:
        dim += weight.ndim
    fn = WeightNorm(name, dim)
    with no_grad():
        g = _norm_except_dim(weight, dim)
    module.register_parameter(name + "_g", Parameter(g.detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    object.__setattr__(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    module.__dict__.setdefault("_weight_norm_hooks", {})[name] = fn
    return module


def remove_weight_norm(module, name="weight"):
    """Undo ``weight_norm``: the weight becomes one parameter again, with its current value.

    Same as ``torch.nn.utils.remove_weight_norm``."""
    fn = module.__dict__.get("_weight_norm_hooks", {}).pop(name, None)
    if fn is None:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    weight = fn.compute_weight(module)
    for key, hook in list(module._forward_pre_hooks.items()):
        if hook is fn:
            del module._forward_pre_hooks[key]
    del module._parameters[name + "_g"], module._parameters[name + "_v"]
    module.__dict__.pop(name, None)
    module.register_parameter(name, Parameter(weight.detach()))
    return module


def _normalize(a, eps):
    return a / max(float(np.linalg.norm(a)), eps)


class SpectralNorm:
    def __init__(self, name, n_power_iterations, dim, eps):
        self.name, self.n_power_iterations, self.dim, self.eps = (
            name, n_power_iterations, dim, eps)

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            order = [self.dim] + [d for d in range(weight.ndim) if d != self.dim]
            weight = permute(weight, *order)
        return reshape(weight, (weight.shape[0], -1))

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            w = np.asarray(mat._data)
            un, vn = u._array(), v._array()
            for _ in range(self.n_power_iterations):  # in place: the buffers are the state
                vn[:] = _normalize(w.T @ un, self.eps)
                un[:] = _normalize(w @ vn, self.eps)
            u._vc[0] += 1
            v._vc[0] += 1
        u_c, v_c = _make(u._array().copy()), _make(v._array().copy())
        sigma = dot(u_c, mv(mat, v_c))
        return weight / sigma

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name,
                           self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration
    (one step per training forward): registers ``<name>_orig`` and buffers ``<name>_u``,
    ``<name>_v``.

    Args:
        module: the module whose parameter is normalized.
        name: the parameter's name (default 'weight').
        n_power_iterations: power-iteration steps per training forward, positive
            (default 1).
        eps: the epsilon of the vector normalizations (default 1e-12).
        dim: the dimension of the output channels (default None: 1 for ConvTranspose
            modules, else 0).

    Returns:
        ``module``, changed in place.
    """
    if n_power_iterations <= 0:
        raise ValueError("Expected n_power_iterations to be positive, but got "
                         f"n_power_iterations={n_power_iterations}")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    weight = module._parameters.pop(name)
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    mat = np.asarray(fn.reshape_weight_to_matrix(weight.detach())._data)
    h, w = mat.shape
    u = _normalize(_normal_array((h,), mat.dtype), eps)
    v = _normalize(_normal_array((w,), mat.dtype), eps)
    module.register_parameter(name + "_orig", Parameter(weight.detach()))
    object.__setattr__(module, name, weight.detach())
    module.register_buffer(name + "_u", _make(u))
    module.register_buffer(name + "_v", _make(v))
    module.register_forward_pre_hook(fn)
    return module


__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm"]
