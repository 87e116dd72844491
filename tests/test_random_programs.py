"""Random programs of ops (hypothesis) give the same values and gradients as torch."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numbagrad as ng
from numbagrad.core import tape as tape_mod

torch = pytest.importorskip("torch")

# Each step takes the list of live values and returns a new one; the same step is applied
# with lib = numbagrad and lib = torch. Domains are kept safe (log of a positive, etc.).
UNARY = [
    lambda lib, a: lib.tanh(a),
    lambda lib, a: lib.sigmoid(a),
    lambda lib, a: lib.exp(-a * a),
    lambda lib, a: lib.log(a * a + 1.0),
    lambda lib, a: lib.sqrt(a * a + 0.5),
    lambda lib, a: lib.sin(a) * 0.7,
    lambda lib, a: a.relu() + 0.1 * a,
    lambda lib, a: lib.clamp(a, -0.8, 0.9),
    lambda lib, a: a ** 2,
    lambda lib, a: 1.5 - a,
    lambda lib, a: a.abs() + 0.2,
    lambda lib, a: a.softmax(-1) if a.ndim else a,
    lambda lib, a: a.sum(0, keepdim=True) if a.ndim else a,
    lambda lib, a: a.mean(-1) if a.ndim > 1 else a * 0.5,
    lambda lib, a: a.t() if a.ndim == 2 else a,
    lambda lib, a: a[..., ::2] if a.ndim else a,
    lambda lib, a: a.exp().logsumexp(0) if a.ndim else a,
]
BINARY = [
    lambda lib, a, b: a + b,
    lambda lib, a, b: a * b,
    lambda lib, a, b: a - b,
    lambda lib, a, b: a / (b * b + 1.0),
    lambda lib, a, b: lib.maximum(a, b),
    lambda lib, a, b: lib.where(a > b, a, b * 2.0),
]

SHAPES = [(), (3,), (2, 3), (4, 3)]


def _compatible(a, b):
    try:
        np.broadcast_shapes(a.shape, b.shape)
        return True
    except ValueError:
        return False


def run_program(lib, leaves, steps):
    vals = list(leaves)
    for kind, i, j, k in steps:
        a, b = vals[i % len(vals)], vals[j % len(vals)]
        if kind == 0 or not _compatible(a, b):
            v = UNARY[k % len(UNARY)](lib, a)
        else:
            v = BINARY[k % len(BINARY)](lib, a, b)
        vals.append(v)
    total = vals[-1].sum()
    for v in vals[len(leaves):-1]:
        total = total + v.sum() * 0.1
    return total


program = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 50), st.integers(0, 50),
                             st.integers(0, 50)), min_size=1, max_size=25)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=program, shapes=st.lists(st.sampled_from(SHAPES), min_size=1, max_size=4),
       seed=st.integers(0, 2**16), big=st.booleans())
def test_random_program_matches_torch(steps, shapes, seed, big):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1.5, 1.5, s) for s in shapes]
    old = tape_mod.BIG
    tape_mod.BIG = 0 if big else old  # also exercise the big-node (parallel kernel) path
    try:
        xs = [ng.tensor(a, requires_grad=True) for a in arrays]
        out = run_program(ng, xs, steps)
        out.backward()
    finally:
        tape_mod.BIG = old
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_t = run_program(torch, ts, steps)
    out_t.backward()
    np.testing.assert_allclose(out.item(), out_t.item(), rtol=1e-10, atol=1e-12)
    for x, t in zip(xs, ts):
        assert (x.grad is None) == (t.grad is None)
        if t.grad is not None:
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-10)
