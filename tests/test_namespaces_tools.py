"""torch.utils.benchmark, torch.accelerator, torch.onnx and torch.functional against torch
2.13: names, results and their types, errors, and the benchmark Timer's counts, statistics
and printouts (no timing is asserted: only what the measured times do not decide)."""

import importlib
import inspect
import re
import types
import warnings

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.utils.benchmark as nb
from tests.torch_oracle import outcome, same_as_torch

torch = pytest.importorskip("torch")
tb = pytest.importorskip("torch.utils.benchmark")

MODULES = ["numbagrad.accelerator", "numbagrad.functional", "numbagrad.onnx",
           "numbagrad.utils.benchmark"]


# ---- reachable as torch's, documented ---------------------------------------------------------
@pytest.mark.parametrize("name", ["accelerator", "functional", "onnx"])
def test_the_namespaces_are_attributes_of_the_package(name):
    assert isinstance(getattr(torch, name), types.ModuleType)  # as in torch
    assert getattr(ng, name) is importlib.import_module(f"numbagrad.{name}")


def test_benchmark_is_reachable_after_importing_it():
    assert ng.utils.benchmark is nb


@pytest.mark.parametrize("module_name", MODULES)
def test_public_names_are_torchs_and_documented(module_name):
    module = importlib.import_module(module_name)
    theirs = importlib.import_module(module_name.replace("numbagrad", "torch"))
    extra = {"dynamo_export"}  # older torch's, which tutorials still call
    assert set(module.__all__) - extra <= set(dir(theirs))
    undocumented = []
    for name in module.__all__:
        obj = getattr(module, name)
        members = [obj] + [m for n, m in inspect.getmembers(obj) if not n.startswith("_")
                           and (inspect.isfunction(m) or isinstance(m, property))] \
            if inspect.isclass(obj) else [obj]
        undocumented += [name for m in members
                         if not (m.__doc__ or "").split("\n", 1)[0].strip()]
    assert undocumented == []


# ---- torch.functional -------------------------------------------------------------------------
# numbagrad lacks these; listed so that the test notices when it gains one
MISSING_FROM_NUMBAGRAD = {"chain_matmul", "istft", "pca_lowrank", "stft", "svd_lowrank"}


def test_functional_has_torchs_names_numbagrad_has():
    theirs = set(torch.functional.__all__)
    assert set(ng.functional.__all__) == theirs - MISSING_FROM_NUMBAGRAD
    assert not any(hasattr(ng, name) for name in MISSING_FROM_NUMBAGRAD)


@pytest.mark.parametrize("name", sorted(ng.functional.__all__))
def test_functional_names_are_numbagrads_functions(name):
    assert getattr(ng.functional, name) is getattr(ng, name)


def _kind(v):
    """A result's structure by type names: torch.Tensor and numbagrad.Tensor alike."""
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, [_kind(u) for u in v])
    return type(v).__name__


def _a(lib, *shape, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(values.round(3), dtype=lib.float64)


CALLS = {
    "atleast_1d": lambda f, lib: f.atleast_1d(lib.tensor(2.0)),
    "atleast_1d_many": lambda f, lib: f.atleast_1d(lib.tensor(2.0), _a(lib, 2, 2)),
    "atleast_2d": lambda f, lib: f.atleast_2d(_a(lib, 3)),
    "atleast_3d": lambda f, lib: f.atleast_3d(_a(lib, 2, 3)),
    "broadcast_shapes": lambda f, lib: f.broadcast_shapes((2, 1), (1, 3), (3,)),
    "broadcast_tensors": lambda f, lib: f.broadcast_tensors(_a(lib, 2, 1), _a(lib, 3)),
    "cartesian_prod": lambda f, lib: f.cartesian_prod(_a(lib, 2), _a(lib, 3, seed=1)),
    "block_diag": lambda f, lib: f.block_diag(_a(lib, 2, 2), _a(lib, 1, 3)),
    "cdist": lambda f, lib: f.cdist(_a(lib, 4, 3), _a(lib, 2, 3, seed=1)),
    "einsum": lambda f, lib: f.einsum("ij,jk->ik", _a(lib, 2, 3), _a(lib, 3, 2, seed=1)),
    "einsum_list": lambda f, lib: f.einsum("ii", [_a(lib, 3, 3)]),
    "norm": lambda f, lib: f.norm(_a(lib, 3, 4), dim=1),
    "norm_fro": lambda f, lib: f.norm(_a(lib, 3, 4), p="fro"),
    "meshgrid": lambda f, lib: f.meshgrid(_a(lib, 2), _a(lib, 3), indexing="xy"),
    "split": lambda f, lib: f.split(_a(lib, 5, 2), 2),
    "split_sizes": lambda f, lib: f.split(_a(lib, 5, 2), [1, 4]),
    "tensordot": lambda f, lib: f.tensordot(_a(lib, 2, 3, 4), _a(lib, 3, 4, 2), dims=2),
    "unique": lambda f, lib: f.unique(lib.tensor([3, 1, 3, 2, 1]), return_inverse=True,
                                      return_counts=True),
    "unique_consecutive": lambda f, lib: f.unique_consecutive(
        lib.tensor([1, 1, 2, 2, 3, 1]), return_counts=True),
    "unravel_index": lambda f, lib: f.unravel_index(lib.tensor([4, 7]), (2, 4)),
    "split_bad": lambda f, lib: f.split(_a(lib, 5, 2), [1, 1]),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_functional_results_are_torchs(call):
    fn = CALLS[call]
    same_as_torch(lambda lib: fn(lib.functional, lib))
    ours = outcome(ng, lambda lib: fn(lib.functional, lib), _kind)
    theirs = outcome(torch, lambda lib: fn(lib.functional, lib), _kind)
    assert ours == theirs


def test_functional_results_have_torchs_gradients():
    def grads(lib):
        x = _a(lib, 2, 3).requires_grad_()
        y = _a(lib, 3, 2, seed=1).requires_grad_()
        out = lib.functional.einsum("ij,jk->ik", x, y)
        (lib.functional.norm(out) + lib.functional.cdist(x, y.T).sum()).backward()
        return x.grad, y.grad
    same_as_torch(grads)


# ---- torch.onnx ------------------------------------------------------------------------------
def test_onnx_imports_and_is_not_exporting():
    assert ng.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    assert issubclass(ng.onnx.OnnxExporterError, RuntimeError)
    assert torch.onnx.OnnxExporterError.__mro__[1] is RuntimeError


@pytest.mark.parametrize("call", [
    lambda onnx, model, x, path: onnx.export(model, (x,), path),
    lambda onnx, model, x, path: onnx.export(model, (x,), path, input_names=["x"],
                                             dynamic_axes={"x": {0: "batch"}}, opset_version=17),
    lambda onnx, model, x, path: onnx.dynamo_export(model, x),
    lambda onnx, model, x, path: onnx.register_custom_op_symbolic("ns::op", None, 17),
    lambda onnx, model, x, path: onnx.unregister_custom_op_symbolic("ns::op", 17),
], ids=["export", "export_options", "dynamo_export", "register", "unregister"])
def test_onnx_export_raises_not_implemented_naming_numbagrad(call, tmp_path):
    path = tmp_path / "model.onnx"
    with pytest.raises(NotImplementedError, match=r"numbagrad does not support ONNX export"):
        call(ng.onnx, ng.nn.Linear(3, 2), ng.ones(1, 3), str(path))
    assert not path.exists()


# ---- torch.accelerator ------------------------------------------------------------------------
def test_accelerator_has_torchs_names():
    assert sorted(ng.accelerator.__all__) == sorted(torch.accelerator.__all__)


ARGS = [(), (None,), (0,), (1,), (-1,), (1.5,), ("cpu",), ("cuda:0",), ("foo",)]
NO_ARGUMENT = ["current_accelerator", "current_device_idx", "current_device_index",
               "device_count", "empty_cache", "empty_host_cache", "is_available"]
ONE_DEVICE = ["get_device_capability", "current_stream", "synchronize", "set_device_index",
              "set_device_idx", "memory_stats", "memory_allocated", "max_memory_allocated",
              "memory_reserved", "max_memory_reserved", "reset_accumulated_memory_stats",
              "reset_peak_memory_stats", "get_memory_info"]


def _answer(v):
    return ("device", str(v)) if v is not None and type(v).__name__ == "device" else v


@pytest.mark.parametrize("name", NO_ARGUMENT)
def test_accelerator_answers_as_torch_on_a_cpu_build(name):
    same_as_torch(lambda lib: _answer(getattr(lib.accelerator, name)()))


def test_accelerator_without_a_device():
    assert ng.accelerator.is_available() is False
    assert ng.accelerator.current_accelerator() is None
    assert ng.accelerator.current_accelerator(check_available=True) is None
    assert ng.accelerator.device_count() == 0


@pytest.mark.parametrize("args", ARGS, ids=repr)
@pytest.mark.parametrize("name", ONE_DEVICE)
def test_accelerator_device_functions_raise_torchs_error(name, args):
    same_as_torch(lambda lib: getattr(lib.accelerator, name)(*args))


@pytest.mark.parametrize("args", ARGS[:5], ids=repr)
def test_accelerator_device_index_context(args):
    def enter(lib):
        with lib.accelerator.device_index(*args):
            return "entered"
    same_as_torch(enter)


def test_accelerator_graph_and_stream_raise_torchs_error():
    same_as_torch(lambda lib: lib.accelerator.Graph())
    same_as_torch(lambda lib: lib.accelerator.Graph(True, capture_error_mode="relaxed"))
    same_as_torch(lambda lib: lib.accelerator.set_stream(torch.Stream("cpu")))


@pytest.mark.parametrize("name", ["current_device_idx", "set_device_idx"])
def test_accelerator_deprecated_names_warn_as_torchs(name):
    args = () if name == "current_device_idx" else (0,)
    caught = []
    for lib in (ng, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError):
                getattr(lib.accelerator, name)(*args)
        caught.append([(x.category, str(x.message)) for x in w])
    assert caught[0] == caught[1] and caught[0][0][0] is FutureWarning


# ---- torch.utils.benchmark: Timer -------------------------------------------------------------
def _counting_timer(lib_benchmark, **kwargs):
    calls = []
    timer = lib_benchmark.Timer("calls.append(1)", globals={"calls": calls}, **kwargs)
    return timer, calls


def test_timeit_runs_the_statement_as_torchs_does():
    counts = []
    for b in (nb, tb):
        timer, calls = _counting_timer(b)
        m = timer.timeit(250)
        counts.append(len(calls))  # 250 and the warm-up's max(250 // 100, 2)
        assert m.number_per_run == 250 and len(m.raw_times) == 1 and len(m.times) == 1
        assert m.times[0] == m.raw_times[0] / 250 == m.mean == m.median
    assert counts[0] == counts[1] == 252


def test_setup_runs_before_the_statement_with_the_globals():
    seen = []
    timer = nb.Timer("seen.append(y)", setup="y = x * 2", globals={"seen": seen, "x": 21})
    timer.timeit(3)
    assert seen == [42] * 5


def test_the_statements_torch_is_numbagrad_unless_given():
    seen = []
    nb.Timer("seen.append(torch)", globals={"seen": seen}).timeit(1)
    nb.Timer("seen.append(torch)", globals={"seen": seen, "torch": np}).timeit(1)
    assert seen[0] is ng and seen[-1] is np


def test_the_statement_runs_with_num_threads():
    for b, lib in ((nb, ng), (tb, torch)):
        before, seen = lib.get_num_threads(), []
        b.Timer("seen.append(torch.get_num_threads())", globals={"seen": seen}).timeit(2)
        assert set(seen) == {1}  # num_threads=1 by default, in torch's too
        assert lib.get_num_threads() == before


def test_a_timed_numbagrad_statement_computes():
    out = []
    x = ng.ones(4)
    m = nb.Timer("out.append(torch.add(x, x))", globals={"x": x, "out": out}).timeit(5)
    assert np.array_equal(out[-1].numpy(), [2.0] * 4)
    assert m.stmt == "out.append(torch.add(x, x))"


def test_blocked_autorange_blocks():
    timer, calls = _counting_timer(nb, label="append", description="n=1")
    reported = []
    m = timer.blocked_autorange(callback=lambda n, t: reported.append((n, t)),
                                min_run_time=0.02)
    assert str(m.number_per_run) in {str(10 ** k) for k in range(10)}
    assert sum(m.raw_times) >= 0.02  # it times blocks until min_run_time has passed
    assert reported == [(m.number_per_run, t) for t in m.raw_times]
    assert len(calls) >= m.number_per_run * len(m.raw_times)
    assert m.times == [t / m.number_per_run for t in m.raw_times]


def test_adaptive_autorange_stops_on_confidence_or_time():
    timer, _ = _counting_timer(nb)
    m = timer.adaptive_autorange(threshold=0.1, max_run_time=0.3)
    assert len(m.raw_times) > 3 and m.meets_confidence(0.1) or sum(m.raw_times) > 0.3


def test_timer_errors_are_torchs():
    for call in [lambda b: b.Timer(lambda: None), lambda b: b.Timer("x", global_setup="y"),
                 lambda b: b.Timer("x", language="fortran"), lambda b: b.Timer().repeat(),
                 lambda b: b.Timer().autorange()]:
        assert outcome(nb, call, repr) == outcome(tb, call, repr)
    with pytest.raises(NotImplementedError, match="Python statements only"):
        nb.Timer("x", language="cpp")


# ---- torch.utils.benchmark: Measurement and Compare -----------------------------------------
RAW = [[2.5e-4], [3e-6, 2e-6, 2.2e-6], [1e-3, 1.1e-3, 0.9e-3, 1.05e-3, 2e-3],
       [5e-8, 9e-8, 5.1e-8, 5.2e-8, 5.3e-8, 5e-8], [1.5, 2.5, 1.7, 1.6], [0.02] * 6]
SPECS = [dict(stmt="x + 1", setup="pass"),
         dict(stmt="y = x\ny += 1", setup="x = torch.ones(3)", label="add", sub_label="float",
              description="n=3", num_threads=4),
         dict(stmt="x + 1", setup="a = 1\nb = 2", sub_label="int", env="A")]


def _measurement(b, raw, spec, number=10):
    return b.Measurement(number, list(raw), b.TaskSpec(**spec))


def _repr_body(m):
    first, _, rest = repr(m).partition("\n")
    return first.split(" object at ")[0].rsplit(".", 1)[-1], rest


@pytest.mark.parametrize("spec", SPECS, ids=range(len(SPECS)))
@pytest.mark.parametrize("raw", RAW, ids=range(len(RAW)))
def test_measurement_statistics_and_printout_are_torchs(raw, spec):
    ours, theirs = _measurement(nb, raw, spec), _measurement(tb, raw, spec)
    for name in ["mean", "median", "iqr"]:
        assert getattr(ours, name) == pytest.approx(getattr(theirs, name), rel=1e-12)
    for name in ["times", "raw_times", "number_per_run", "significant_figures", "has_warnings",
                 "title", "as_row_name", "stmt", "label", "sub_label", "description", "env",
                 "num_threads", "metadata"]:
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.meets_confidence(0.3) == theirs.meets_confidence(0.3)
    assert _repr_body(ours) == _repr_body(theirs)


def test_measurement_has_torchs_public_attributes():
    m = nb.Timer("pass").timeit(10)
    theirs = [n for n in dir(tb.Timer("pass").timeit(10)) if not n.startswith("_")]
    assert [n for n in theirs if not hasattr(m, n)] == []
    assert repr(m).startswith("<numbagrad.utils.benchmark.Measurement object at 0x")


def test_a_timed_measurements_printout_has_torchs_lines():
    def shape(m):
        return re.sub(r"[0-9.]+ (ns|us|ms|s)\b", "T", _repr_body(m)[1])
    ours = nb.Timer("x + 1", globals={"x": 1}, label="L", description="D").timeit(100)
    theirs = tb.Timer("x + 1", globals={"x": 1}, label="L", description="D").timeit(100)
    assert shape(ours) == shape(theirs) == "L\nD\n  T\n  1 measurement, 100 runs , 1 thread"


def test_merge_is_torchs():
    def merged(b):
        ms = [_measurement(b, raw, spec, number=n) for raw, spec, n in
              [(RAW[1], SPECS[0], 10), (RAW[2], SPECS[0], 100), (RAW[3], SPECS[1], 1)]]
        return [(m.number_per_run, m.times, m.stmt) for m in b.Measurement.merge(ms)]
    assert merged(nb) == merged(tb)


@pytest.mark.parametrize("t", [3e-10, 4.2e-8, 1e-6, 9.99e-6, 1.234e-3, 0.5, 12.0, 4000.0])
def test_unit_helpers_are_torchs(t):
    unit, scale = nb.select_unit(t)
    assert (unit, scale) == tb.select_unit(t)
    assert nb.unit_to_english(unit) == tb.unit_to_english(unit)
    for n in (1, 2, 4):
        assert nb.trim_sigfig(t, n) == pytest.approx(tb.trim_sigfig(t, n), rel=1e-6)


def _compare_set(b):
    rng = np.random.default_rng(5)
    out = []
    for label in ["Add", "Mul"]:
        for description in ["n=1", "n=10", "n=100"]:
            for sub_label in ["float", "int"]:
                for threads in [1, 2]:
                    raw = (rng.uniform(1e-6, 3e-6, rng.integers(1, 8)) *
                           10.0 ** rng.integers(0, 4)).tolist()
                    out.append(_measurement(b, raw, dict(
                        stmt="x + 1", setup="pass", label=label, sub_label=sub_label,
                        description=description, num_threads=threads), number=100))
    envs = [_measurement(b, raw, dict(stmt="x * 2", setup="pass", label="Env", env=env,
                                      description="d"))
            for raw, env in zip(RAW[1:4], ["A", "BBB", "A"])]
    return out[::2] + out[1::3] + envs  # some cells empty, some merged from replicates


@pytest.mark.parametrize("options", [[], ["trim_significant_figures"],
                                     ["trim_significant_figures", "highlight_warnings"],
                                     ["colorize"], ["highlight_warnings", "colorize_rows"]])
def test_compare_prints_torchs_table(options, capsys):
    printed = []
    for b in (nb, tb):
        compare = b.Compare(_compare_set(b))
        for option in options:
            if option == "colorize_rows":
                compare.colorize(rowwise=True)
            else:
                getattr(compare, option)()
        compare.print()
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1]
    assert "Times are in" in printed[0] and "1 threads: " in printed[0]


def test_compare_of_timed_measurements():
    x = ng.ones(8)
    ms = [nb.Timer(stmt, globals={"x": x}, label="ops", sub_label=stmt,
                   description="n=8").timeit(20) for stmt in ["x + x", "x * x"]]
    table = str(nb.Compare(ms))
    assert table.splitlines()[0].strip("[]-").strip() == "ops"
    assert [line.split("|")[0].strip() for line in table.splitlines()[3:5]] == ["x + x",
                                                                                 "x * x"]


def test_compare_refuses_other_results_as_torch():
    assert outcome(nb, lambda b: b.Compare([1.0]), repr) == \
        outcome(tb, lambda b: b.Compare([1.0]), repr)

