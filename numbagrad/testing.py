"""numbagrad.testing: torch.testing.assert_close, with torch's default tolerances per dtype and
its AssertionError messages."""

import collections.abc
import math

import numpy as np

from .tensor import Tensor

__all__ = ["assert_close"]

# (rtol, atol) by dtype name; integers and bool compare exactly
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5),
               "complex128": (1e-7, 1e-7)}


class _MismatchError(Exception):
    """A mismatch found deep in nested inputs: the exception type, message and item path."""

    def __init__(self, kind, message, path=()):
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, path


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` (tensors, numbers, or sequences and mappings of
    them) are close: ``|actual - expected| <= atol + rtol * |expected|`` elementwise, with
    shapes and (``check_dtype``) dtypes equal. Default tolerances follow the dtypes, as in
    torch: float32 (1.3e-6, 1e-5), float64 (1e-7, 1e-7), integers and bool exactly."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    try:
        _compare(actual, expected, (), dict(rtol=rtol, atol=atol, equal_nan=equal_nan,
                                            check_dtype=check_dtype))
    except _MismatchError as failure:
        message = failure.message
        if failure.kind is AssertionError and msg is not None:
            message = msg(message) if callable(msg) else msg
        elif failure.path:
            message += "\n\nThe failure occurred for item " + "".join(
                f"[{p!r}]" for p in failure.path)
        raise failure.kind(message) from None


def _compare(actual, expected, path, options):
    if _is_tensor_like(actual) and _is_tensor_like(expected):
        if type(actual) is not type(expected) and not (
                isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            _unsupported(actual, expected, path)
        return _compare_tensors(_as_array(actual), _as_array(expected),
                                _dtype_name(actual), _dtype_name(expected), options, path)
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, options, path)
    if isinstance(actual, collections.abc.Mapping) and isinstance(
            expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            missing, extra = set(expected) - set(actual), set(actual) - set(expected)
            raise _MismatchError(AssertionError,
                           f"The keys of the mappings do not match:\nMissing keys in the actual "
                           f"mapping: {sorted(missing)}\nExtra keys in the actual mapping: "
                           f"{sorted(extra)}", path)
        for key in expected:
            _compare(actual[key], expected[key], path + (key,), options)
        return None
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _MismatchError(AssertionError, f"The length of the sequences mismatch: "
                           f"{len(actual)} != {len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), options)
        return None
    _unsupported(actual, expected, path)


def _unsupported(actual, expected, path):
    raise _MismatchError(TypeError, f"No comparison pair was able to handle inputs of type "
                   f"{_type_repr(actual)} and {_type_repr(expected)}.", path)


def _type_repr(x):
    return "<class 'torch.Tensor'>" if type(x) is Tensor else repr(type(x))


def _is_tensor_like(x):
    return isinstance(x, (Tensor, np.ndarray))


def _is_number(x):
    return isinstance(x, (int, float, complex, np.number, np.bool_)) and not isinstance(
        x, np.ndarray)


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _as_array(x):
    return np.asarray(x._data if isinstance(x, Tensor) else x)


def _dtype_name(x):
    return x.dtype.name if isinstance(x, Tensor) else np.dtype(x.dtype).name


def _dtype_repr(x_dtype_name):
    return "torch." + x_dtype_name


def _tolerances(names, rtol, atol):
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(n, (0.0, 0.0)) for n in names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _compare_tensors(a, e, a_dtype, e_dtype, options, path):
    if a.shape != e.shape:
        raise _MismatchError(AssertionError, f"The values for attribute 'shape' do not match: "
                       f"torch.Size({list(a.shape)}) != torch.Size({list(e.shape)}).", path)
    if options["check_dtype"] and a_dtype != e_dtype:
        raise _MismatchError(AssertionError, f"The values for attribute 'dtype' do not match: "
                       f"{_dtype_repr(a_dtype)} != {_dtype_repr(e_dtype)}.", path)
    rtol, atol = _tolerances({a_dtype, e_dtype}, options["rtol"], options["atol"])
    if a.dtype != e.dtype:  # (check_dtype=False) compared in the promoted dtype, as torch
        common = np.promote_types(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    matches = _isclose(a, e, rtol, atol, options["equal_nan"])
    if matches.all():
        return
    if a.ndim == 0:
        raise _MismatchError(AssertionError, _scalar_message(a.item(), e.item(), rtol, atol), path)
    raise _MismatchError(AssertionError, _tensor_message(a, e, matches, rtol, atol), path)


def _isclose(a, e, rtol, atol, equal_nan):
    if a.dtype == np.bool_ or (a.dtype.kind in "iu" and rtol == 0 and atol == 0):
        return np.asarray(a == e)
    with np.errstate(all="ignore"):
        # computed in the compared dtype (floats) or in float64, as torch.isclose
        ft = a.dtype.type if a.dtype.kind == "f" else np.float64
        af, ef = a.astype(ft), e.astype(ft)
        close = af == ef  # equal infinities too
        diff = np.abs(af - ef)
        allowed = ft(atol) + np.abs(ft(rtol) * ef)
        close |= np.isfinite(diff) & (diff <= allowed)
        if equal_nan:
            close |= np.isnan(af) & np.isnan(ef)
    return np.asarray(close)


def _tensor_message(a, e, matches, rtol, atol):
    total = matches.size
    mismatched = total - int(matches.sum())
    af, ef, mf = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if a.dtype.kind not in "fc":  # integers and bool: differences in int64, as torch
        af, ef = af.astype(np.int64), ef.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(af - ef)
        abs_diff[mf] = 0
        rel_diff = abs_diff / np.abs(ef)
        rel_diff[mf] = 0
    abs_i, rel_i = _argmax_nan_first(abs_diff), _argmax_nan_first(rel_diff)
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    return _message("Tensor-likes", extra, _item(abs_diff[abs_i]), _index(abs_i, a.shape), atol,
                    _item(rel_diff[rel_i]), _index(rel_i, a.shape), rtol)


def _argmax_nan_first(values):
    # torch.max propagates NaN: the first NaN is the greatest
    nan = np.flatnonzero(np.isnan(values)) if values.dtype.kind == "f" else ()
    return int(nan[0]) if len(nan) else int(np.argmax(values))


def _item(v):
    return v.item()


def _index(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _scalar_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = math.inf if expected == 0 else abs_diff / abs(expected)
    return _message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol,
                    rel_diff, None, rtol)


def _message(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_line(kind, diff, idx, tol):
        line = (f"{kind.title()} difference: {diff}" if idx is None else
                f"Greatest {kind} difference: {diff} at index {idx}")
        return line + ("" if equality else f" (up to {tol} allowed)") + "\n"

    out = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    out += diff_line("absolute", abs_diff, abs_idx, atol)
    out += diff_line("relative", rel_diff, rel_idx, rtol)
    return out.strip()


def _compare_numbers(actual, expected, options, path):
    if options["check_dtype"] and type(actual) is not type(expected):
        raise _MismatchError(AssertionError, f"The (d)types do not match: {type(actual)} != "
                       f"{type(expected)}.", path)
    kinds = {_number_dtype(actual), _number_dtype(expected)}
    rtol, atol = _tolerances(kinds, options["rtol"], options["atol"])
    a, e = np.asarray(actual), np.asarray(expected)
    if _isclose(a, e, rtol, atol, options["equal_nan"]).all():
        return
    raise _MismatchError(AssertionError, _scalar_message(actual, expected, rtol, atol), path)


def _number_dtype(x):
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, (int, np.integer)):
        return "int64"
    if isinstance(x, complex):
        return "complex128"
    return "float64" if isinstance(x, float) else np.dtype(type(x)).name
