"""as_numba()'s function checks its arguments' lengths inside Numba: an input shorter than
the trace used to be read out of bounds (garbage, or a crash), a longer one silently cut."""

import numpy as np
import pytest
from numba import njit

import numbagrad as ng


def vector(x):
    return (x * x).sum()


def scalars(x):  # a trace of one-element nodes: the scalar instruction stream
    return x[0] * x[1] + x[2]


@pytest.mark.parametrize("f, n", [(vector, 5), (scalars, 3)])
def test_as_numba_checks_lengths(f, n):
    vg = ng.compile(ng.func.value_and_grad(f))
    vg(np.ones(n))
    fn = vg.as_numba()
    g = np.zeros(n)
    x = np.arange(1.0, n + 1)
    value, want = vg(x)
    assert fn(x, g) == value
    np.testing.assert_array_equal(g, want)
    for bad_x, bad_g in [(np.ones(1), np.zeros(n)), (np.ones(n + 2), np.zeros(n)),
                         (np.ones(n), np.zeros(n - 1))]:
        with pytest.raises(ValueError, match=r"as_numba\(\): (x|grad_out) must have"):
            fn(bad_x, bad_g)

    @njit
    def caller(x, grad_out):
        return fn(x, grad_out)

    with pytest.raises(ValueError, match=f"x must have {n} elements"):
        caller(np.ones(n - 1), np.zeros(n))
