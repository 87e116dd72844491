"""torch's ``out=`` keyword on the top-level functions whose own definitions leave it out:
each is wrapped once, at import, to compute its result and write it into ``out`` (resized to
fit, with torch's checks: ops/out_api.py). Pointwise math takes ``out=`` in its own
definition (ops/elementwise/pointwise.py, ops/elementwise/math_api.py)."""

import functools
import inspect
import sys

from .core.grad_mode import is_grad_enabled
from .ops.linalg.common import return_type
from .ops.out_api import check_out, write_out
from .tensor import Tensor

# torch's out= on the package's own functions (numbagrad/__init__.py); every other module
# declares its functions' beside them, as OUT_FORMS (name -> "one" result, "several" or
# "factory"), gathered by install()
_PACKAGE_OUT_FORMS = {"argmax": "one", "argmin": "one"}
# where torch's autograd refusal names another ATen op than the function (its out variant runs
# that op: torch.lu_solve is linalg_lu_solve)
_ATEN_NAME = {"lu_solve": "linalg_lu_solve"}


# ops whose out= must have the result's dtype, and torch's message when it has not
# (out's dtype first, the result's second)
_SAME_DTYPE = dict.fromkeys(
    ("matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "addmm", "addmv", "addbmm",
     "baddbmm", "softmax", "log_softmax", "matrix_power", "kron", "lu_solve"),
    "Expected out tensor to have dtype {r.c_name}, but got {o.c_name} instead")
_SAME_DTYPE.update(dict.fromkeys(("clamp", "clip", "hardshrink"),
                                 "Found dtype {o.scalar_name} but expected {r.scalar_name}"))
_SAME_DTYPE["where"] = "Expected out type to be {r.scalar_name} but got {o.scalar_name}"
_SAME_DTYPE["any"] = "any only supports bool tensor for result, got: {o.scalar_name}"
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
        check_out(_ATEN_NAME.get(name, name), out, *args)
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


# ---- numbagrad.linalg and numbagrad.special -------------------------------------------------
# What torch checks on each out tensor, in order: (test, message). "same": out's dtype must be
# the result's; "kind": no cast to a lower kind (float into int); "float": out must be floating.
# The message is formatted with o (out's dtype) and r (the result's).
_SAME = (("same", "Expected out tensor to have dtype {r.c_name}, but got {o.c_name} instead"),)


def _castable(prefix):
    return (("kind", prefix + ": Expected result to be safely castable from {r.scalar_name} "
                      "dtype, but got result with dtype {o.scalar_name}"),)


def _norm(name):
    return (("same", f"linalg.{name} expected out tensor dtype {{r.scalar_name}} but got: "
                     "{o.scalar_name}"),)


# The grad entry: the ATen op torch names in check_out's error (it runs the op's out variant
# under another name: linalg.inv is linalg_inv_ex); _COPY: torch composes the op and copies
# the result into out, differentiably (no error, out gets CopyBackwards); _FREE: ops without
# a derivative, which write out with no check at all.
# _ADOPT: an op without a derivative; out takes the result's node (torch's NotImplemented) as
# its history when an input requires grad, with no error until a backward reaches it.
_COPY, _FREE, _ADOPT = object(), object(), object()

# torch.linalg: name -> (grad, dtype rules, number of outs when a tuple)
_LINALG = {
    "cholesky": ("linalg_cholesky_ex", _SAME, 0),
    "cholesky_ex": ("linalg_cholesky_ex", _SAME, 2),
    "cross": ("linalg_cross", _SAME, 0),
    "det": ("_linalg_det", _SAME, 0),
    "eigh": ("_linalg_eigh", _SAME, 2),
    "eigvalsh": ("_linalg_eigh", _SAME, 0),
    "inv": ("linalg_inv_ex", _SAME, 0),
    "inv_ex": ("linalg_inv_ex", _SAME, 2),
    "ldl_solve": (_ADOPT, _SAME, 0),
    "lu_solve": ("linalg_lu_solve", _SAME, 0),
    "matmul": ("matmul", _SAME, 0),
    "matrix_norm": (_COPY, _norm("matrix_norm"), 0),
    "matrix_power": ("matmul", _castable("matrix_power") + _SAME, 0),
    "matrix_rank": (_COPY, _castable("torch.linalg.matrix_rank"), 0),
    "multi_dot": ("mm", (("same", "multi_dot(): expected out tensor to have dtype {r.c_name} "
                                  "but got {o.c_name}"),), 0),
    "norm": (_COPY, _norm("norm"), 0),
    "pinv": ("linalg_pinv", _castable("linalg.pinv"), 0),
    "qr": ("linalg_qr", _SAME, 2),
    "slogdet": ("_linalg_slogdet", _SAME, 2),
    "solve": ("_linalg_solve_ex", _SAME, 0),
    "solve_ex": ("_linalg_solve_ex", _SAME, 2),
    "solve_triangular": ("linalg_solve_triangular", (
        ("same", "expected scalar type {r.scalar_name} but found {o.scalar_name}"),), 0),
    "svd": ("_linalg_svd", _SAME, 3),
    "svdvals": ("_linalg_svd", _SAME, 0),
    "vecdot": ("sum", (("same", "linalg.vecdot: Expected out of dtype{r.scalar_name} but found "
                                "{o.scalar_name}"),), 0),
    "vector_norm": ("linalg_vector_norm", _SAME, 0),
}
# torch.special: pointwise, so any cast that keeps the kind (write_out's check); the grad
# entry is the op torch runs (special.expit is sigmoid), special_<name> for its own ops
_SPECIAL = {name: (grad or f"special_{name}", (), 0) for name, grad in (
    ("digamma", "digamma"), ("psi", "digamma"), ("entr", ""), ("erf", "erf"), ("erfc", "erfc"),
    ("erfcx", ""), ("erfinv", "erfinv"), ("exp2", "exp2"), ("expit", "sigmoid"),
    ("expm1", "expm1"), ("gammainc", "igamma"), ("gammaincc", "igammac"),
    ("gammaln", "lgamma"), ("i0", "i0"), ("i0e", ""), ("i1", ""), ("i1e", ""),
    ("log1p", "log1p"), ("log_ndtr", ""), ("logit", "logit"), ("ndtri", ""),
    ("polygamma", "polygamma"), ("sinc", "sinc"), ("xlog1py", ""), ("xlogy", "xlogy"),
    ("zeta", ""))}
_SPECIAL.update(dict.fromkeys((
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"), (_FREE, (), 0)))
_SPECIAL.update({
    "ndtr": (_COPY, (), 0),
    "round": ("round", (("same", "Found dtype {o.scalar_name} but expected {r.scalar_name}"),), 0),
    "logsumexp": ("logsumexp", (("float", "logsumexp(): Expected floating point type for result "
                                          "tensor, but got: {o.scalar_name}"),), 0),
    # (torch's message names the result's dtype twice)
    "multigammaln": ("mvlgamma", (("kind", "mvlgamma: result type {r.scalar_name} can't be cast "
                                           "to the desired output type {r.scalar_name}"),), 0),
})
_NAMESPACES = {"linalg": _LINALG, "special": _SPECIAL}
# the order torch resizes a tuple's outs in (its resize warnings' order), when not the tuple's
_RESIZE_ORDER = {"linalg_eigh": (1, 0), "linalg_svd": (0, 2, 1)}


def _out_tensors(op, out, n, position):
    """``out`` as a list of tensors, with torch's TypeErrors for anything else; ``n`` outs
    make a tuple (0: one tensor), ``position`` is out's index among the op's arguments."""
    if not n:
        if not isinstance(out, Tensor):
            raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
        return [out]
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{op}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != n:
        raise TypeError(f"expected tuple of {n} elements but got {len(out)}")
    for i, o in enumerate(out):
        if not isinstance(o, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {position}, but got "
                            f"{type(o).__name__}")
    return list(out)


def _tensor_arguments(args, kwargs):
    """The tensors among the arguments, those of a list (multi_dot's) included."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, (tuple, list)):
            yield from (t for t in a if isinstance(t, Tensor))
        elif isinstance(a, Tensor):
            yield a


def _check_dtype(rules, out, result):
    o, r = out.dtype, result.dtype
    for test, message in rules:
        if (test == "same" and o is not r) or (test == "kind" and r._kind > o._kind) or \
                (test == "float" and not o.is_floating_point):
            raise RuntimeError(message.format(o=o, r=r))


def _copy_into(out, result):
    """out = result as torch's composite ops write it: resized, then ``out.copy_(result)``,
    which records CopyBackwards when result requires grad."""
    if is_grad_enabled() and out.requires_grad and out.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    write_out(out, result.detach())
    if is_grad_enabled() and result.requires_grad:
        out.copy_(result)
    return out


def _adopt(out, result, op):
    """out = result, and result's node (an op without a derivative: NotImplemented) becomes
    out's history, as torch's out variant leaves it; an out that requires grad is refused."""
    if is_grad_enabled() and out.requires_grad:
        raise RuntimeError(f"aten::{op}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    write_out(out, result)
    if result.requires_grad:
        out._tape, out._node, out._requires_grad = result._tape, result._node, True
    return out


def _with_out_namespaced(fn, op, grad, rules, n):
    """``fn`` of numbagrad.linalg or numbagrad.special taking ``out=``; ``op``: its name in
    torch's messages (linalg_eigh, special_erf)."""
    position = sum(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                   for p in _parameters(fn).values())

    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        outs = _out_tensors(op, out, n, position)
        if grad is not _COPY and grad is not _FREE and grad is not _ADOPT:
            inputs = tuple(_tensor_arguments(args, kwargs))
            for o in outs:
                check_out(grad, o, *inputs)
        if op == "special_logsumexp" and out.dtype.scalar_name in ("Float", "Double"):
            # torch reduces in out's dtype (numbagrad's kernels have no float16: computed in
            # the input's dtype and cast, torch's float16 rounding may differ by an ulp)
            if args and isinstance(args[0], Tensor):
                args = (args[0].to(out.dtype), *args[1:])
            elif isinstance(kwargs.get("input"), Tensor):
                kwargs["input"] = kwargs["input"].to(out.dtype)
        result = fn(*args, **kwargs)
        results = tuple(result) if n else (result,)
        # matrix_power's powers 0 and 1 are a copy, cast to out's dtype
        power = args[1] if len(args) > 1 else kwargs.get("n")
        checks = rules[:1] if op == "linalg_matrix_power" and power in (0, 1) else rules
        for o, r in zip(outs, results):
            _check_dtype(checks, o, r)
        write = _copy_into if grad is _COPY else write_out if grad is not _ADOPT else \
            functools.partial(_adopt, op=op)
        for i in _RESIZE_ORDER.get(op, range(len(outs))):
            write(outs[i], results[i])
        return _out_type(op, result)(*outs) if n else out

    return _with_out_parameter(call, fn)


def install(package_name="numbagrad", also=("numbagrad.functional",)):
    """Wrap the package's functions that take ``out=`` in torch but not in their definition;
    ``also``: modules re-exporting them, which keep the same objects (torch.functional.norm
    is torch.norm)."""
    package = sys.modules[package_name]
    for name, kind in _declared(package_name).items():
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
    for namespace, table in _NAMESPACES.items():
        module = sys.modules.get(f"{package_name}.{namespace}")
        for name, (grad, rules, n) in table.items():
            fn = getattr(module, name, None)
            if fn is None or "out" in _parameters(fn):
                continue
            wrapped = _with_out_namespaced(fn, f"{namespace}_{name}", grad, rules, n)
            # (pickle finds it where users do: linalg.cross wraps ops' linalg_cross)
            wrapped.__module__, wrapped.__qualname__ = module.__name__, name
            setattr(module, name, wrapped)


def _declared(package_name):
    """Every out form declared: the package's own and each of its loaded modules'
    OUT_FORMS (read from the module's dict: a module's __getattr__ is not asked)."""
    forms = dict(_PACKAGE_OUT_FORMS)
    prefix = package_name + "."
    for name, module in sorted(sys.modules.items()):
        if name.startswith(prefix):
            forms.update(getattr(module, "__dict__", {}).get("OUT_FORMS", {}))
    return forms


def _parameters(fn):
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
