"""numbagrad._format.format_tensor must print exactly what torch prints."""

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

# Load the module by path: numbagrad/__init__.py may be mid-rewrite by someone else.
_PATH = Path(__file__).resolve().parents[1] / "numbagrad" / "_format.py"
_spec = importlib.util.spec_from_file_location("numbagrad_format", _PATH)
fmt = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = fmt
_spec.loader.exec_module(fmt)
format_tensor = fmt.format_tensor

DEFAULTS = dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)


@pytest.fixture(autouse=True)
def _restore_print_state():
    """Every test starts and ends with default print options and default dtype on both sides."""
    torch.set_printoptions(profile="default")
    fmt.set_printoptions(profile="default")
    old_dtype = torch.get_default_dtype()
    yield
    torch.set_printoptions(profile="default")
    fmt.set_printoptions(profile="default")
    torch.set_default_dtype(old_dtype)


def set_both(**kwargs):
    torch.set_printoptions(**kwargs)
    fmt.set_printoptions(**kwargs)


def ours(t, suffixes=(), prefix="tensor("):
    return format_tensor(
        t.detach().numpy(), str(t.dtype), str(torch.get_default_dtype()), list(suffixes), prefix
    )


def check(arr, grad=None):
    """Compare against torch for a numpy array; grad in (None, "requires_grad", "grad_fn")."""
    t = torch.tensor(np.asarray(arr))
    suffixes = []
    if grad == "requires_grad":
        t.requires_grad_(True)
        suffixes = ["requires_grad=True"]
    elif grad == "grad_fn":
        t = t.requires_grad_(True) * 2
        suffixes = ["grad_fn=<MulBackward0>"]
    expected = repr(t)
    assert str(t) == expected
    got = ours(t, suffixes)
    assert got == expected, f"\n--- torch ---\n{expected}\n--- ours ---\n{got}"


# ----------------------------------------------------------------------------------------------
# generated cases
# ----------------------------------------------------------------------------------------------

SHAPES = [(), (1,), (5,), (3, 4), (2, 3, 4), (2, 2, 2, 2), (0,), (2, 0), (0, 3, 1), (1, 0, 2)]
FLOAT_DTYPES = [np.float32, np.float64]
ALL_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]


def _values(kind, shape, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == np.bool_:
        return rng.random(n).reshape(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        scale = {"normal": 10, "int": 100, "huge": 10**8}.get(kind, 1000)
        return rng.integers(-scale, scale, size=n).astype(dtype).reshape(shape)
    base = rng.standard_normal(n)
    if kind == "int":
        base = np.round(base * 50)
    elif kind == "mixed":
        base = base * 10.0 ** rng.integers(-6, 7, size=n)
    elif kind == "tiny":
        base = base * 1e-6
    elif kind == "huge":
        base = base * 1e12
    elif kind == "special":
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.0, 3.0])
        base = specials[rng.integers(0, len(specials), size=n)]
    return base.astype(dtype).reshape(shape)


KINDS = ["normal", "int", "mixed", "tiny", "huge", "special"]
GEN_CASES = [
    pytest.param(shape, dtype, kind, seed, id=f"{np.dtype(dtype).name}-{shape}-{kind}-{seed}")
    for shape in SHAPES
    for dtype in ALL_DTYPES
    for kind in (KINDS if dtype in FLOAT_DTYPES else ["normal", "int", "huge"])
    for seed in (0, 1)
]


@pytest.mark.parametrize("shape,dtype,kind,seed", GEN_CASES)
def test_generated(shape, dtype, kind, seed):
    check(_values(kind, shape, dtype, seed))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(7,), (4, 6), (2, 3, 5)])
def test_random_normal_seeds(seed, dtype, shape):
    check(np.random.default_rng(100 + seed).standard_normal(shape).astype(dtype))


# ----------------------------------------------------------------------------------------------
# hand-picked values
# ----------------------------------------------------------------------------------------------

SPECIAL_VALUES = [
    7.0,
    -0.0,
    0.0,
    [2.0, 2.0, 2.0],
    [-0.0, 0.0, 1.0],
    [-0.0, 0.5],
    [0.0, 0.0],
    [np.nan, np.inf, -np.inf],
    [np.nan, 1.0, 2.0],
    [np.nan, 1.5, -np.inf],
    [1.0, np.inf, 1e-5],
    [1e-4, 1.0],
    [9.9e-5, 1.0],
    [1.0, 1000.0],
    [1.0, 1000.5],
    [1.0, 1001.0],
    [1e8, 1.0],
    [1.00001e8],
    [1e8 + 8, 3.0],
    [123456789.0],
    [1e20, -1e20],
    [3.4e38, -1e-38],
    [1e-45, 1.0],
    [1e-300, 1e300],
    [0.1, 0.2, 0.3],
    [1 / 3, 2 / 3, 1.0],
    [0.00012345, 0.5],
    [123.456, -0.001],
    [16777217.0, 1.0],
    [0.5, 1.5, 2.5, -0.5],
    [5e-5, 5e-5],
    [[1.0, -2.5], [np.nan, 1e5]],
    [[1e-8, 1.0], [-3.0, 0.0]],
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("values", SPECIAL_VALUES, ids=repr)
def test_special_values(values, dtype):
    with np.errstate(over="ignore"):
        check(np.array(values, dtype=np.float64).astype(dtype))


@pytest.mark.parametrize(
    "values,dtype",
    [
        (5, np.int64),
        (-5, np.int32),
        ([1, -20, 300], np.int64),
        ([1, -20, 300], np.int32),
        ([2**62, -(2**62)], np.int64),
        ([2**31 - 1, -(2**31)], np.int32),
        (True, np.bool_),
        ([True, True], np.bool_),
        ([True, False], np.bool_),
        ([[False], [True]], np.bool_),
    ],
    ids=repr,
)
def test_int_and_bool(values, dtype):
    check(np.array(values, dtype=dtype))


def test_examples_from_brief():
    assert (
        format_tensor(
            np.array(7.0, np.float32), "torch.float32", "torch.float32", ["grad_fn=<AddBackward0>"]
        )
        == "tensor(7., grad_fn=<AddBackward0>)"
    )
    assert (
        format_tensor(np.array([2.0, 2.0, 2.0], np.float32), "torch.float32", "torch.float32", [])
        == "tensor([2., 2., 2.])"
    )


# ----------------------------------------------------------------------------------------------
# summarization and wrapping
# ----------------------------------------------------------------------------------------------

BIG_SHAPES = [(2000,), (1001,), (40, 40), (3, 500), (500, 3), (11, 10, 10), (4, 5, 6, 10)]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", BIG_SHAPES)
def test_summarized(shape, dtype):
    check(_values("normal", shape, dtype, 7))
    if dtype in FLOAT_DTYPES:
        check(_values("mixed", shape, dtype, 8))


def test_summarized_formatter_sees_only_edges():
    # the huge middle value is not printed and must not force sci mode / widen columns
    a = np.ones(2000, np.float32)
    a[1000] = 1e30
    check(a)
    b = np.ones((40, 40))
    b[20, 20] = -1e-30
    check(b)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", [10, 30, 60, 100, 333])
def test_long_rows_wrap(n, dtype):
    check(_values("normal", (n,), dtype, n))
    check(_values("normal", (2, n), dtype, n + 1))


# ----------------------------------------------------------------------------------------------
# suffixes
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("grad", ["requires_grad", "grad_fn"])
@pytest.mark.parametrize(
    "shape", [(), (3,), (2, 2), (12,), (13,), (14,), (15,), (16,), (30,), (5, 20), (2000,), (0,)]
)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_grad_suffixes(shape, dtype, grad):
    check(_values("normal", shape, dtype, 3), grad=grad)


@pytest.mark.parametrize("n", range(1, 20))
def test_suffix_wrap_boundary(n):
    # walk the last-line length across the linewidth boundary, one element at a time
    for grad in ("requires_grad", "grad_fn"):
        check(np.full(n, 1.5, np.float64), grad=grad)
        check(np.arange(n, dtype=np.float32), grad=grad)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (40,), (0,), ()])
def test_parameter_prefix(shape):
    p = torch.nn.Parameter(torch.tensor(_values("normal", shape, np.float32, 5)))
    got = ours(p, ["requires_grad=True"], prefix="Parameter containing:\ntensor(")
    assert got == repr(p)


# ----------------------------------------------------------------------------------------------
# dtype suffix and default dtype
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("default", [torch.float32, torch.float64])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (3,), (0,), (2, 0)])
def test_dtype_suffix(default, dtype, shape):
    torch.set_default_dtype(default)
    check(_values("normal", shape, dtype, 11))


def test_default_float64_grad():
    torch.set_default_dtype(torch.float64)
    check(np.array([1.5, 2.5]), grad="grad_fn")
    check(np.array([1.5, 2.5], np.float32), grad="requires_grad")


# ----------------------------------------------------------------------------------------------
# print options
# ----------------------------------------------------------------------------------------------

OPTION_SETS = [
    dict(precision=2),
    dict(precision=0),
    dict(precision=8),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(precision=2, sci_mode=True),
    dict(threshold=5),
    dict(threshold=0),
    dict(threshold=5, edgeitems=1),
    dict(threshold=5, edgeitems=0),
    dict(edgeitems=0),
    dict(edgeitems=1),
    dict(linewidth=40),
    dict(linewidth=10),
    dict(linewidth=200),
    dict(profile="full"),
    dict(profile="short"),
    dict(profile="short", precision=6),
    dict(profile="default"),
]
OPTION_ARRAYS = [
    ("scalar", np.array(3.14159)),
    ("vec", np.array([1.12345, -2.5, 1000.25, 0.0], np.float32)),
    ("ints-as-floats", np.arange(12, dtype=np.float64)),
    ("mixed", np.array([1e-6, 1.0, 1e6, np.nan, -np.inf])),
    ("zeros", np.zeros(4, np.float32)),
    ("int64", np.arange(-5, 20)),
    ("int32", np.arange(30, dtype=np.int32).reshape(5, 6)),
    ("bool", np.array([[True, False, True]] * 3)),
    ("big", np.random.default_rng(0).standard_normal(2000).astype(np.float32)),
    ("matrix", np.random.default_rng(1).standard_normal((40, 40))),
    ("3x500", np.random.default_rng(2).standard_normal((3, 500))),
    ("3d", np.random.default_rng(3).standard_normal((8, 7, 9)).astype(np.float32)),
    ("empty", np.zeros((0, 3))),
]


@pytest.mark.parametrize("name,arr", OPTION_ARRAYS, ids=[n for n, _ in OPTION_ARRAYS])
@pytest.mark.parametrize("opts", OPTION_SETS, ids=repr)
def test_print_options(opts, name, arr):
    set_both(**opts)
    check(arr)
    if arr.dtype.kind == "f":
        check(arr, grad="grad_fn")


def test_get_printoptions_matches_torch():
    assert fmt.get_printoptions() == torch._tensor_str.get_printoptions() == DEFAULTS
    for opts in OPTION_SETS:
        set_both(**opts)
        assert fmt.get_printoptions() == torch._tensor_str.get_printoptions()
    set_both(profile="full")
    assert math.isinf(fmt.get_printoptions()["threshold"])
    assert isinstance(fmt.PrintOptions(), fmt.PrintOptions)


def test_printoptions_context_manager():
    with fmt.printoptions(precision=1):
        assert fmt.get_printoptions()["precision"] == 1
    assert fmt.get_printoptions() == DEFAULTS


# ----------------------------------------------------------------------------------------------
# property-based
# ----------------------------------------------------------------------------------------------

_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)


@st.composite
def float_arrays(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    width = 32 if dtype == np.float32 else 64
    elements = st.one_of(
        st.floats(width=width),
        st.floats(-1e4, 1e4, width=width),
        st.integers(-1000, 1000).map(float),
    )
    return draw(hnp.arrays(dtype, _shapes, elements=elements))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(float_arrays())
def test_hypothesis_floats(arr):
    check(arr)


@settings(max_examples=100, deadline=None)
@given(
    hnp.arrays(
        st.sampled_from([np.int32, np.int64, np.bool_]),
        _shapes,
    )
)
def test_hypothesis_ints_bools(arr):
    check(arr)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    arr=float_arrays(),
    precision=st.integers(0, 8),
    threshold=st.integers(0, 60),
    edgeitems=st.integers(0, 4),
    linewidth=st.integers(1, 120),
    sci_mode=st.sampled_from([None, True, False]),
    grad=st.sampled_from([None, "requires_grad", "grad_fn"]),
)
def test_hypothesis_with_options(arr, precision, threshold, edgeitems, linewidth, sci_mode, grad):
    opts = dict(
        precision=precision,
        threshold=threshold,
        edgeitems=edgeitems,
        linewidth=linewidth,
        sci_mode=sci_mode,
    )
    try:
        set_both(**opts)
        check(arr, grad=grad)
    finally:
        set_both(profile="default")
