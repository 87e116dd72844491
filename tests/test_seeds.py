"""The seed documents' examples (../shared/seeds/): run with ``import numbagrad as torch`` they
print what the seeds show, and what torch itself prints for the same script."""

import pytest

import numbagrad
from numbagrad.seed_examples import SCRIPTS, SEED_001_LOOP, run_script


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_seed_prints_what_the_seed_shows(name):
    source, expected = SCRIPTS[name]
    printed = run_script(source, numbagrad)
    if expected is not None:
        assert printed == expected


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_seed_prints_what_torch_prints(name):
    torch = pytest.importorskip("torch")
    source, _ = SCRIPTS[name]
    assert run_script(source, numbagrad) == run_script(source, torch)


def test_seed_001_loop_gradient_values():
    printed = run_script(SEED_001_LOOP, numbagrad)
    assert printed == ("tensor([[ 4.,  8., 12.],\n        [ 4., 14., 18.],\n"
                       "        [ 0.,  0.,  0.]])\n")
