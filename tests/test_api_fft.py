"""torch.fft's real-valued helpers against torch 2.13: fftfreq and rfftfreq (values in each
float dtype, spacing, requires_grad, out=, errors) and fftshift/ifftshift (values, dims,
gradients and node names, errors). The transforms are complex: not in numbagrad."""

import numpy as np
import pytest
from torch_oracle import same_as_torch

import numbagrad as ng

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
@pytest.mark.parametrize("d", [1.0, 0.1, 3])
@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
def test_frequencies(n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        def call(lib):
            kw = {} if dtype is None else {"dtype": getattr(lib, dtype)}
            return getattr(lib.fft, name)(n, d, **kw)
        ours, theirs = call(ng), call(torch)
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_frequency_options_and_errors():
    same_as_torch(lambda lib: lib.fft.fftfreq(4, dtype=lib.float64, requires_grad=True))
    same_as_torch(lambda lib: lib.fft.rfftfreq(7, d=0.5, requires_grad=True))
    same_as_torch(lambda lib: lib.fft.fftfreq(3, dtype=lib.int64))
    same_as_torch(lambda lib: lib.fft.rfftfreq(3, dtype=lib.bool))

    def into_out(lib):
        out = lib.empty(5, dtype=lib.float64)
        r = lib.fft.fftfreq(5, 2.0, out=out)
        return r is out, out
    same_as_torch(into_out)


SHIFTS = [
    lambda lib, x: lib.fft.fftshift(x),
    lambda lib, x: lib.fft.ifftshift(x),
    lambda lib, x: lib.fft.fftshift(x, dim=1),
    lambda lib, x: lib.fft.ifftshift(x, dim=(0, -1)),
    lambda lib, x: lib.fft.fftshift(input=x, dim=[-2]),
]


@pytest.mark.parametrize("k", range(len(SHIFTS)))
@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_shifts_values_gradients_and_nodes(k, shape, dtype):
    a = np.random.default_rng(k).standard_normal(shape)
    w = np.random.default_rng(k + 1).standard_normal(shape)
    out = {}
    for lib in (ng, torch):
        x = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        y = SHIFTS[k](lib, x)
        (y * lib.tensor(w, dtype=getattr(lib, dtype))).sum().backward()
        out[lib] = (y.detach().numpy(), x.grad.numpy(), y.grad_fn.name())
    (y1, g1, n1), (y2, g2, n2) = out[ng], out[torch]
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(g1, g2)
    assert n1 == n2


def test_shift_errors():
    same_as_torch(lambda lib: lib.fft.fftshift(lib.ones(3), dim=2))
    same_as_torch(lambda lib: lib.fft.fftshift([1.0, 2.0]))
    same_as_torch(lambda lib: lib.fft.ifftshift(lib.tensor(2.0)))
