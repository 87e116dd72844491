"""tools/api_coverage.py: the checklist generated from torch, its exclusions, and a floor
under numbagrad's coverage so that a name lost fails here."""

import fnmatch
import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "api_coverage.py"
_spec = importlib.util.spec_from_file_location("api_coverage", TOOL)
api_coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_coverage)

# names present per namespace, measured with torch 2.13; raise them as numbagrad grows
FLOOR = {"torch": 569, "torch.Tensor": 503, "torch.nn": 168, "torch.nn.functional": 127,
         "torch.nn.init": 24, "torch.linalg": 39, "torch.special": 56, "torch.fft": 4,
         "torch.autograd": 19, "torch.func": 12, "torch.optim": 17,
         "torch.optim.lr_scheduler": 19, "torch.distributions": 114, "torch.utils.data": 18}
FLOOR_PERCENT = 98.8


@pytest.fixture(scope="module")
def names():
    return api_coverage.torch_names()


@pytest.fixture(scope="module")
def result():
    return api_coverage.coverage()


def test_checklist_is_generated_from_torch(names):
    # every namespace contributes, and torch's overridable functions are in it
    assert set(names) == set(FLOOR)
    assert all(names[ns] for ns in names)
    assert {"matmul", "add", "sum", "float32", "nn", "no_grad"} <= set(names["torch"])
    assert {"backward", "grad", "requires_grad_", "shape"} <= set(names["torch.Tensor"])
    # imports of a namespace are not its API
    assert "math" not in names["torch.nn.functional"]
    assert "Callable" not in names["torch.nn.init"]


def test_coverage_not_below_floor(result):
    have = {ns: len(h) for ns, (h, _) in result.items()}
    low = {ns: (have[ns], FLOOR[ns]) for ns in FLOOR if have[ns] < FLOOR[ns]}
    assert not low, f"names lost (present, floor): {low}"
    present = sum(have.values())
    total = sum(len(h) + len(m) for h, m in result.values())
    assert 100 * present / total >= FLOOR_PERCENT


def test_exclusions_name_a_reason_and_a_torch_name(names):
    exclusions = api_coverage.load_exclusions()
    assert exclusions
    qualified = [f"{ns}.{n}" for ns, ns_names in names.items() for n in ns_names]
    for pattern, reason in exclusions:
        category, colon, why = reason.partition(":")
        assert colon and why.strip(), f"{pattern}: no reason"
        assert category in api_coverage.CATEGORIES, f"{pattern}: unknown category {category!r}"
        assert any(fnmatch.fnmatchcase(q, pattern) for q in qualified), \
            f"{pattern} matches nothing in torch"


def test_exclusions_leave_the_core_in(names):
    # a pattern too broad would hide names numbagrad must keep having
    exclusions = api_coverage.load_exclusions()
    for q in ["torch.matmul", "torch.Tensor.backward", "torch.nn.Linear",
              "torch.nn.functional.relu", "torch.optim.SGD", "torch.float32"]:
        assert not api_coverage.excluded(q, exclusions), q


def test_cli_reports_the_same_figures(result, capsys):
    # in process: a fresh interpreter would import torch and numbagrad again (~10 s)
    assert api_coverage.main(["--json", "--missing"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["present"] == sum(len(h) for h, _ in result.values())
    assert data["namespaces"]["torch.linalg"]["missing"] == result["torch.linalg"][1]
