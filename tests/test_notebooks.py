"""The notebooks under notebooks/: each runs headless top to bottom without an error (nbclient,
a python3 kernel on this interpreter, working directory notebooks/) in under 60 s and saves
its figures as PNG files into $NUMBAGRAD_FIGURE_DIR; git holds them without outputs."""

import json
import os
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


def test_the_notebooks_are_there():
    stems = {p.stem for p in PATHS}
    assert {"01_backward_explained", "02_train_a_classifier", "03_optimize_with_scipy",
            "04_inside_the_tape",
            "05_speed"} <= stems


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


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


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_notebook_runs_and_saves_its_figures(path, tmp_path, kernel_specs):
    from jupyter_client.manager import AsyncKernelManager

    nb = nbformat.read(path, as_version=4)
    figures = tmp_path / "figures"
    km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=kernel_specs)
    client = nbclient.NotebookClient(nb, km=km, timeout=2 * TIME_LIMIT,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    start = time.perf_counter()
    # raises CellExecutionError, with the cell and its traceback, at the first failing cell
    client.execute(env={**os.environ, "NUMBAGRAD_FIGURE_DIR": str(figures)})
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
