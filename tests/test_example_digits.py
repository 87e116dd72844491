"""The end-to-end example: examples/train_digits.py trains an MLP and a CNN on scikit-learn's
bundled digits (no download) to > 95% test accuracy, with numbagrad and, as written for
torch's API, with torch itself."""

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("tqdm")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "train_digits.py"


def _example():
    spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("lib", ["numbagrad", "torch"])
def test_digits_mlp_and_cnn_reach_95_percent(lib):
    if lib == "torch":
        pytest.importorskip("torch")
    argv = ["--quiet", "--epochs", "10"] + (["--torch"] if lib == "torch" else [])
    results = _example().main(argv)
    assert set(results) == {"MLP", "CNN"}
    for name, accuracy in results.items():
        assert accuracy > 0.95, (lib, name, accuracy)
