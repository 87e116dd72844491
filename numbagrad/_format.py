"""Print tensors exactly as torch 2.13 does (port of torch/_tensor_str.py)."""

import contextlib
import dataclasses
import math
from typing import Any

import numpy as np

__all__ = [
    "PrintOptions",
    "PRINT_OPTS",
    "set_printoptions",
    "get_printoptions",
    "printoptions",
    "format_tensor",
]


@dataclasses.dataclass
class PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = PrintOptions()


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
) -> None:
    """Same semantics as ``torch.set_printoptions``.

    Like torch, ``sci_mode`` is always overwritten (so any call without ``sci_mode`` resets it to
    automatic), and a ``profile`` is applied before the individual overrides.
    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80
        elif profile == "short":
            PRINT_OPTS.precision = 2
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 2
            PRINT_OPTS.linewidth = 80
        elif profile == "full":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = math.inf
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80

    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Current options as a dict that can be passed as ``**kwargs`` to set_printoptions()."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager that temporarily changes the print options."""
    old_kwargs = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old_kwargs)


class _Formatter:
    """Decides int_mode / sci_mode / column width from the (summarized) values.

    torch iterates 0-d tensors and formats them with ``Tensor.__format__``, which goes through
    ``.item()``: every value is formatted as a Python float (a float32 is widened exactly to
    float64) or a Python int/bool.  ``ndarray.tolist()`` gives exactly the same Python objects.
    """

    def __init__(self, data: np.ndarray):
        self.floating_dtype = data.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1

        flat = data.reshape(-1)
        if not self.floating_dtype:
            # ints and bools: plain str(), so a bool tensor containing False is 5 wide.
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        # torch.masked_select(t, isfinite(t) & t.ne(0)); -0.0 == 0 so it is dropped too.
        nonzero_finite_vals = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite_vals.size == 0:
            # No valid number: keep int_mode=True, sci_mode=False, width 1 -- even when
            # PRINT_OPTS.sci_mode is True (torch returns before looking at it).
            return

        # torch takes abs in the tensor dtype, then converts to double for min/max/ratio so
        # that e.g. half does not overflow at 1e8.  abs/min/max are exact in any dtype.
        nonzero_finite_abs = np.abs(nonzero_finite_vals).astype(np.float64)
        nonzero_finite_min = nonzero_finite_abs.min()
        nonzero_finite_max = nonzero_finite_abs.max()

        # `value != torch.ceil(value)` is evaluated in the tensor's own dtype.
        if np.any(nonzero_finite_vals != np.ceil(nonzero_finite_vals)):
            self.int_mode = False

        if PRINT_OPTS.sci_mode is None:
            with np.errstate(over="ignore"):
                ratio = nonzero_finite_max / nonzero_finite_min
            self.sci_mode = bool(
                ratio > 1000.0 or nonzero_finite_max > 1.0e8 or nonzero_finite_min < 1.0e-4
            )
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        # Widths are measured on the nonzero finite values only; zeros, nan and inf are
        # formatted later and simply padded (or overflow) to this width.
        prec = PRINT_OPTS.precision
        values = nonzero_finite_vals.tolist()
        if self.sci_mode:
            fmt = f"{{:.{prec}e}}"
            extra = 0
        elif self.int_mode:
            # integer-valued floats get a trailing "." -> +1 to the width
            fmt = "{:.0f}"
            extra = 1
        else:
            fmt = f"{{:.{prec}f}}"
            extra = 0
        for value in values:
            self.max_width = max(self.max_width, len(fmt.format(value)) + extra)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{PRINT_OPTS.precision}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _vector_str(data: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    # length includes spaces and comma between elements
    element_length = formatter.width() + 2
    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems

    if summarize and not edge:
        items = ["..."]
    elif summarize and data.shape[0] > 2 * edge:
        items = (
            [formatter.format(v) for v in data[:edge].tolist()]
            + [" ..."]
            + [formatter.format(v) for v in data[-edge:].tolist()]
        )
    else:
        items = [formatter.format(v) for v in data.tolist()]

    lines = [
        ", ".join(items[i : i + elements_per_line]) for i in range(0, len(items), elements_per_line)
    ]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(
    data: np.ndarray, indent: int, summarize: bool, formatter: _Formatter
) -> str:
    dim = data.ndim
    if dim == 0:
        return formatter.format(data.item())
    if dim == 1:
        return _vector_str(data, indent, summarize, formatter)

    edge = PRINT_OPTS.edgeitems
    n = data.shape[0]
    if summarize and n > 2 * edge:
        # With edgeitems == 0 both ranges are empty and this prints "[...]".
        slices = (
            [
                _tensor_str_with_formatter(data[i], indent + 1, summarize, formatter)
                for i in range(edge)
            ]
            + ["..."]
            + [
                _tensor_str_with_formatter(data[i], indent + 1, summarize, formatter)
                for i in range(n - edge, n)
            ]
        )
    else:
        slices = [
            _tensor_str_with_formatter(data[i], indent + 1, summarize, formatter) for i in range(n)
        ]
    # rows of a k-d tensor are separated by k-1 newlines (k-2 blank lines)
    tensor_str = ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices)
    return "[" + tensor_str + "]"


def _get_summarized_data(data: np.ndarray) -> np.ndarray:
    """The values the formatter sees when summarizing: only the printed edge items."""
    dim = data.ndim
    edge = PRINT_OPTS.edgeitems
    if dim == 0:
        return data
    if dim == 1:
        if data.shape[0] > 2 * edge:
            # torch.cat((t[:e], t[-e:])): for e == 0, t[-0:] is the *whole* vector, so the
            # formatter then looks at every value (nothing is printed but "[...]" anyway).
            return np.concatenate((data[:edge], data[-edge:]))
        return data
    if not edge:
        return np.empty((0,) * dim, dtype=data.dtype)
    n = data.shape[0]
    if n > 2 * edge:
        rows = list(range(edge)) + list(range(n - edge, n))
    else:
        rows = list(range(n))
    return np.stack([_get_summarized_data(data[i]) for i in rows])


def _tensor_str(data: np.ndarray, indent: int) -> str:
    if data.size == 0:
        return "[]"
    summarize = data.size > PRINT_OPTS.threshold
    formatter = _Formatter(_get_summarized_data(data) if summarize else data)
    return _tensor_str_with_formatter(data, indent, summarize, formatter)


def _add_suffixes(tensor_str: str, suffixes: list[str], indent: int, force_newline: bool) -> str:
    tensor_strs = [tensor_str]
    # NB: torch's "+ 1" (not "- 1") makes this the last line's length plus 2; kept verbatim
    # because it decides where suffixes wrap.
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = len(suffix)
        if force_newline or last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            tensor_strs.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
            force_newline = False
        else:
            tensor_strs.append(", " + suffix)
            last_line_len += suffix_len + 2
    tensor_strs.append(")")
    return "".join(tensor_strs)


def format_tensor(
    data: np.ndarray,
    dtype_name: str,
    default_dtype_name: str,
    suffixes: list[str],
    prefix: str = "tensor(",
) -> str:
    """``repr`` of a dense CPU tensor holding ``data`` (port of ``_str_intern``).

    ``dtype_name``/``default_dtype_name`` are torch spellings ("torch.float32", ...).
    ``suffixes`` (e.g. ``["requires_grad=True"]``) are appended after torch's own size=/dtype=
    suffixes.  ``prefix`` may contain newlines ("Parameter containing:\\ntensor("); alignment
    uses its last line, as torch's Parameter.__repr__ prepends a line to the tensor repr.
    """
    data = np.asarray(data)
    head, sep, last = prefix.rpartition("\n")
    head += sep
    indent = len(last)
    own: list[str] = []

    default_complex = (
        "torch.complex128" if default_dtype_name == "torch.float64" else "torch.complex64"
    )
    has_default_dtype = dtype_name in (
        default_dtype_name,
        default_complex,
        "torch.int64",
        "torch.bool",
    )

    if data.size == 0:
        # Explicitly print the shape if it is not (0,), to match NumPy behavior
        if data.ndim != 1:
            own.append("size=" + str(tuple(data.shape)))
        # No elements to infer the dtype from, so even int64/bool get dtype= here.
        if dtype_name != default_dtype_name:
            own.append("dtype=" + dtype_name)
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            own.append("size=" + str(tuple(data.shape)))
        if not has_default_dtype:
            own.append("dtype=" + dtype_name)
        tensor_str = _tensor_str(data, indent)

    body = _add_suffixes(last + tensor_str, own + list(suffixes), indent, force_newline=False)
    return head + body
