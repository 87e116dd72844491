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


def test_the_tour_runs_and_prints_real_gradients(capsys):
    """`python -m numbagrad` (the README's first command) completes and shows its results."""
    from numbagrad.__main__ import tour
    tour()
    out = capsys.readouterr().out
    assert "Gradients: tensor([2., 2., 2.])" in out
    assert "d/dx x^3 = 12, d2 = 12, d3 = 6" in out
    assert "tour done" in out
    # which recorder ran, and why not the C one when it did not
    from numbagrad.engine import fast_push
    assert ("(nodes written in C)" in out) == (fast_push.unavailable is None)
    if fast_push.unavailable is not None:
        assert fast_push.unavailable in out


def test_seed_004_as_written_trains_and_lowers_the_loss():
    """The seed's script verbatim (random initial weights): it runs, prints a gradient for
    weight and bias, and one SGD step lowers the loss."""
    from numbagrad.seed_examples import SEED_004_SAMPLE_MODEL
    lines = run_script(SEED_004_SAMPLE_MODEL, numbagrad).splitlines()
    assert lines[1].startswith("Gradients for weight: tensor([[")
    assert lines[2].startswith("Gradients for bias: tensor([")
    before = float(lines[0].split(": ")[1])
    after = float(lines[3].split(": ")[1])
    assert after < before
