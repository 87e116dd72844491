"""The notebooks under notebooks/: each runs headless top to bottom without an error (nbclient,
a python3 kernel on this interpreter, working directory notebooks/) in under 60 s, saves its
figures as PNG files into $NUMBAGRAD_FIGURE_DIR, and leaves the process-wide settings it may
change for a while (threads, default dtype, print options, warning filters, ...) as it found
them. git holds them with the outputs of one full run, for the documentation to show."""

import inspect
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
image = pytest.importorskip("matplotlib.image")
# what the notebooks themselves import (all in the test extra)
pytest.importorskip("sklearn")
pytest.importorskip("tqdm")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
TIME_LIMIT = 60  # seconds per notebook, with a warm Numba cache (the budget)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
REGENERATE = ("store the outputs of one full run: jupyter nbconvert --to notebook --execute "
              "--inplace --ExecutePreprocessor.record_timing=False "
              "--ExecutePreprocessor.store_widget_state=False notebooks/{}")


def test_the_notebooks_are_there():
    stems = {p.stem for p in PATHS}
    assert {"01_backward_explained", "02_train_a_classifier", "03_optimize_with_scipy",
            "04_inside_the_tape",
            "05_speed"} <= stems


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_no_widget_state_is_stored(path):
    """Stored widget state makes the rendered page load the widget manager from the network
    (the documentation site's page check fails on it)."""
    assert "widgets" not in json.loads(path.read_text())["metadata"], REGENERATE.format(path.name)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_notebook_is_stored_with_the_outputs_of_one_run(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    # every cell run once, top to bottom, in one kernel
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), REGENERATE.format(path.name)
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    # what went to stderr (a library's warning, a text progress bar) would show on the page
    stderr = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert not stderr, stderr
    assert any("image/png" in o.get("data", {}) for o in outputs), "no figure stored"


@pytest.fixture(scope="module")
def kernel_specs(tmp_path_factory):
    """A "python3" kernelspec that runs this interpreter, so that the notebooks test the
    environment under test even where another python3 kernel (user-wide, another venv's)
    would be found first."""
    from jupyter_client.kernelspec import KernelSpecManager

    kernels = tmp_path_factory.mktemp("kernels")
    (kernels / "python3").mkdir()
    (kernels / "python3" / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    return KernelSpecManager(kernel_dirs=[str(kernels)])


def check_png(path):
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path.name} is not a PNG"
    assert len(data) > 1024, f"{path.name} has {len(data)} bytes"
    pixels = image.imread(path)  # decodes, or raises
    assert pixels.shape[0] > 10 and pixels.shape[1] > 10
    assert pixels.std() > 0, f"{path.name} is blank"


# ---- the settings a notebook must put back, read inside its kernel --------------------------
def _process_settings(filters_at_start, filters_set_here, like=None):
    """The process-wide settings of the libraries loaded (those of ``like`` only, when given:
    a library first imported by the notebook has no earlier value to compare with)."""
    import os
    import re
    import sys
    import warnings

    import numpy as np

    env = re.compile(r"(NUMBAGRAD|NUMBA|XLA|JAX|TORCH|OMP|MKL|OPENBLAS)_|.*THREADS")
    settings = {
        "numpy print options": np.get_printoptions(),
        "numpy floating-point errors": np.geterr(),
        "environment": {k: v for k, v in os.environ.items() if env.match(k)},
        "warning filters": {
            "removed": [f for f in filters_at_start if f not in warnings.filters],
            "set by the notebook and left": [f for f in filters_set_here
                                             if f in warnings.filters
                                             and f not in filters_at_start]},
    }
    for name in ("numbagrad", "torch"):
        lib = sys.modules.get(name)
        if lib is None or (like is not None and name not in like):
            continue
        printoptions = getattr(lib, "get_printoptions", None) or lib._tensor_str.get_printoptions
        settings[name] = {
            "threads": lib.get_num_threads(),
            "default dtype": lib.get_default_dtype(),
            "default device": str(lib.get_default_device()),
            "grad enabled": lib.is_grad_enabled(),
            "anomaly detection": (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()),
            "deterministic algorithms": (lib.are_deterministic_algorithms_enabled(),
                                         lib.is_deterministic_algorithms_warn_only_enabled()),
            "float32 matmul precision": lib.get_float32_matmul_precision(),
            "print options": printoptions(),
        }
        if name == "torch":
            settings[name]["function modes"] = len(
                lib.overrides._get_current_function_mode_stack())
    if "numba" in sys.modules:
        settings["numba threads"] = sys.modules["numba"].get_num_threads()
    if "threadpoolctl" in sys.modules:  # BLAS and OpenMP pools, by library file
        pools = {p["filepath"]: p["num_threads"]
                 for p in sys.modules["threadpoolctl"].threadpool_info()}
        settings["thread pools"] = {k: v for k, v in pools.items()
                                    if like is None or k in like["thread pools"]}
    if "matplotlib" in sys.modules:
        settings["matplotlib rcParams"] = dict(sys.modules["matplotlib"].rcParams)
    # jax is imported by the notebook itself (after it sets XLA_FLAGS): before that, its
    # setting is the one its environment variable gives
    jax = sys.modules.get("jax")
    settings["jax x64"] = jax.config.jax_enable_x64 if jax is not None else \
        os.environ.get("JAX_ENABLE_X64", "0").lower() in ("y", "yes", "t", "true", "on", "1")
    return settings


def _recording_filters(set_filter, added):
    """``set_filter`` (a function of ``warnings``) that also appends to ``added`` the filters
    it adds when the notebook calls it (libraries add filters at import: those are not the
    notebook's to put back)."""
    import sys
    import warnings

    def recording(*args, **kwargs):
        before = list(warnings.filters)
        set_filter(*args, **kwargs)
        if sys._getframe(1).f_globals.get("__name__") == "__main__":
            added.extend(f for f in warnings.filters if f not in before)
    return recording


def _differences(before, after):
    """{setting: (before, after)} for the settings that differ, down to a dict's keys."""
    changed = {}
    for key in before | after:  # an environment variable set anew, too
        value, now = before.get(key), after.get(key)
        if isinstance(value, dict) and isinstance(now, dict):
            changed.update({f"{key}: {k}": d for k, d in _differences(value, now).items()})
        elif now != value:
            changed[key] = (value, now)
    return changed


def settings_cells(nb):
    """Cells around the notebook's: the first imports what the notebook's settings belong to
    (importing a library changes settings of its own, as does the kernel's set-up of
    matplotlib), the second records the settings, the last compares them."""
    imports = ["numpy", "numba", "numbagrad", "threadpoolctl", "matplotlib.pyplot"]
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    if re.search(r"^\s*(import|from) torch\b", source, re.MULTILINE):
        imports.append("torch")
    record = "\n".join([
        "import warnings",
        *(inspect.getsource(f) for f in (_recording_filters, _process_settings, _differences)),
        "_FILTERS_AT_START, _FILTERS_SET_HERE = list(warnings.filters), []",
        "for _name in ('filterwarnings', 'simplefilter'):",
        "    setattr(warnings, _name, _recording_filters(getattr(warnings, _name),"
        " _FILTERS_SET_HERE))",
        "_SETTINGS_AT_START = _process_settings(_FILTERS_AT_START, _FILTERS_SET_HERE)"])
    compare = "\n".join([
        "_settings_now = _process_settings(_FILTERS_AT_START, _FILTERS_SET_HERE,",
        "                                  like=_SETTINGS_AT_START)",
        "_changed = _differences(_SETTINGS_AT_START, _settings_now)",
        "assert not _changed, f'settings not put back (before, after): {_changed}'"])
    # the kernel's matplotlib set-up runs at the first figure (it makes pyplot interactive)
    backend = "matplotlib.pyplot.switch_backend(matplotlib.get_backend())"
    new_cell = nbformat.v4.new_code_cell
    return new_cell("\n".join([*(f"import {m}" for m in imports), backend])), \
        new_cell(record), new_cell(compare)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_notebook_runs_saves_its_figures_and_puts_settings_back(path, tmp_path, kernel_specs):
    from jupyter_client.manager import AsyncKernelManager

    nb = nbformat.read(path, as_version=4)
    imports, record, compare = settings_cells(nb)
    nb.cells = [imports, record, *nb.cells, compare]
    figures = tmp_path / "figures"
    km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=kernel_specs)
    client = nbclient.NotebookClient(nb, km=km, timeout=2 * TIME_LIMIT,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    # torch.compile's first call builds C++ with the system compiler: tens of seconds per
    # notebook, for timings; the notebooks catch its failures, so it is left out here
    env = {**os.environ, "NUMBAGRAD_FIGURE_DIR": str(figures),
           "NUMBAGRAD_SKIP_TORCH_COMPILE": "1"}
    start = time.perf_counter()
    # raises CellExecutionError, with the cell and its traceback, at the first failing cell
    # (the last cell's assertion names the settings that were not put back)
    client.execute(env=env)
    elapsed = time.perf_counter() - start
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    assert elapsed < TIME_LIMIT, f"{path.name} ran {elapsed:.1f} s"
    pngs = sorted(figures.glob("*.png"))
    assert pngs, f"{path.name} saved no figure"
    for png in pngs:
        assert png.name.startswith(path.name[:3]), png.name  # named after its notebook
        check_png(png)
