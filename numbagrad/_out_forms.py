"""torch's ``out=`` keyword on the top-level functions whose own definitions leave it out:
each is wrapped once, at import, to compute its result and write it into ``out`` (resized to
fit, with torch's checks: ops/out_api.py). Pointwise math takes ``out=`` in its own
definition (ops/pointwise.py, ops/math_api.py)."""

import functools
import inspect
import sys

from .ops.linalg_common import return_type
from .ops.out_api import check_out, write_out
from .tensor import Tensor

# functions of one result
_ONE = (
    "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "all", "amax", "amin", "baddbmm",
    "bitwise_and", "bitwise_not", "bitwise_xor", "bmm", "bucketize", "cat", "ceil", "cholesky",
    "cholesky_inverse", "cholesky_solve", "clamp", "clip", "column_stack", "concat",
    "concatenate", "cross", "cumprod", "cumsum", "diag", "digamma", "dot", "dstack", "eq",
    "erfinv", "fix", "float_power", "floor_divide", "fmax", "fmin", "fmod", "frac", "gather",
    "ge", "greater", "greater_equal", "gt", "histc", "hstack", "i0", "index_select", "inner",
    "inverse", "isneginf", "isposinf", "kron", "le", "lerp", "less", "less_equal", "lgamma",
    "logcumsumexp", "logical_and", "logical_not", "logical_or", "logit", "logsumexp", "lt",
    "masked_select", "matmul", "matrix_power", "mm", "multinomial", "mv", "mvlgamma",
    "nan_to_num", "nanmean", "nanquantile", "narrow_copy", "ne", "nonzero", "norm",
    "not_equal", "outer", "polygamma", "pow", "quantile", "remainder", "round", "row_stack",
    "searchsorted", "sgn", "sinc", "stack", "std", "take_along_dim", "tril", "triu", "trunc",
    "var", "vdot", "vstack", "where", "xlogy", "sum", "mean", "prod", "nansum", "argmax",
    "argmin", "diff", "clamp_min", "clamp_max", "square", "logical_xor", "bitwise_or", "msort",
    "softmax", "log_softmax", "index_add",
)
# functions of several results (out= a tuple of tensors)
_SEVERAL = ("aminmax", "cummax", "cummin", "kthvalue", "max", "min", "mode", "sort", "std_mean",
            "svd", "topk", "var_mean")
# factories: the result takes out's dtype unless dtype= is given
_FACTORIES = ("arange", "empty", "eye", "full", "linspace", "logspace", "ones", "rand",
              "randint", "randn", "randperm", "tril_indices", "triu_indices", "zeros")


# ops whose out= must have the result's dtype, and torch's message when it has not
# (out's dtype first, the result's second)
_SAME_DTYPE = dict.fromkeys(
    ("matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "addmm", "addmv", "addbmm",
     "baddbmm", "softmax", "log_softmax", "matrix_power", "kron"),
    "Expected out tensor to have dtype {r.c_name}, but got {o.c_name} instead")
_SAME_DTYPE.update(dict.fromkeys(("clamp", "clip"), "Found dtype {o.scalar_name} but expected "
                                                     "{r.scalar_name}"))
_SAME_DTYPE["where"] = "Expected out type to be {r.scalar_name} but got {o.scalar_name}"
# reductions and scans computed in out's dtype: any cast (a float sum into an int64 out)
_CAST_ANY = {"sum", "prod", "nansum", "cumsum", "cumprod"}
# joins: a cast that changes kind is torch's TypeError naming cat
_JOINS = {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
          "row_stack"}


def _write(name, out, result):
    """``result`` into ``out`` with the checks of op ``name``."""
    if name in _SAME_DTYPE and out.dtype is not result.dtype:
        raise RuntimeError(_SAME_DTYPE[name].format(o=out.dtype, r=result.dtype))
    if name in _JOINS and result.dtype._kind > out.dtype._kind:
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{out.dtype.scalar_name}")
    return write_out(out, result, cast_any=name in _CAST_ANY)


def _with_out(fn, name, kind):
    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if kind == "factory":
            check_out(name, out)
            if kwargs.get("dtype") is None:
                kwargs["dtype"] = out.dtype
            # (torch's arange resizes with the warning, the other factories silently)
            return write_out(out, fn(*args, **kwargs), warn=name == "arange")
        if kind == "several" and isinstance(out, (tuple, list)):
            for o in out:
                check_out(name, o, *args)
            result = fn(*args, **kwargs)
            if not isinstance(result, tuple) or len(result) != len(out):
                raise TypeError(f"{name}(): argument 'out' must be a tuple of "
                                f"{len(result) if isinstance(result, tuple) else 1} Tensors")
            written = [write_out(o, r) for o, r in zip(out, result)]
            # (torch names the out variant's tuple <name>_out: max_out, sort_out)
            return _out_type(name, result)(*written) if hasattr(result, "_fields") \
                else tuple(written)
        if kind == "several" and isinstance(out, Tensor):
            # max(x, out=t) and min(x, out=t): the reduction over all elements, one result
            result = fn(*args, **kwargs)
            if isinstance(result, tuple):
                raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not Tensor")
            check_out(name, out, *args)
            return write_out(out, result)
        check_out(name, out, *args)
        return _write(name, out, fn(*args, **kwargs))

    return _with_out_parameter(call, fn)


def _with_out_parameter(call, fn):
    """``call`` showing ``fn``'s signature plus a keyword-only ``out=None``."""
    try:
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.kind != p.VAR_KEYWORD]
        extra = [p for p in sig.parameters.values() if p.kind == p.VAR_KEYWORD]
        out_param = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
        call.__signature__ = sig.replace(parameters=params + [out_param] + extra)
    except (TypeError, ValueError):  # (a builtin without a signature keeps its own)
        pass
    return call


_OUT_TYPES = {}


def _out_type(name, result):
    """torch's named tuple of an out variant: ``<name>_out`` with the fields of ``result``."""
    key = (name, result._fields)
    if key not in _OUT_TYPES:
        _OUT_TYPES[key] = return_type(f"{name}_out", result._fields)
    return _OUT_TYPES[key]


def install(package_name="numbagrad", also=("numbagrad.functional",)):
    """Wrap the package's functions that take ``out=`` in torch but not in their definition;
    ``also``: modules re-exporting them, which keep the same objects (torch.functional.norm
    is torch.norm)."""
    package = sys.modules[package_name]
    for names, kind in ((_ONE, "one"), (_SEVERAL, "several"), (_FACTORIES, "factory")):
        for name in names:
            fn = getattr(package, name, None)
            if fn is None or "out" in _parameters(fn):
                continue
            wrapped = _with_out(fn, name, kind)
            wrapped.__module__ = package_name  # (pickle finds it where users do)
            setattr(package, name, wrapped)
            for other in also:
                module = sys.modules.get(other)
                if module is not None and getattr(module, name, None) is fn:
                    setattr(module, name, wrapped)


def _parameters(fn):
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
