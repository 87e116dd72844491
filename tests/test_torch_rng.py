"""torch's CPU random streams, number for number: the same seed or state draws the same values
in numbagrad as in torch 2.13, over seeds, sizes (both of torch's normal paths), dtypes,
strides and interleaved mixes of calls. Every comparison is exact: torch's AVX2 float32
Box-Muller uses avx_mathfun's log and sincos, which numbagrad reproduces operation for
operation (with the fmas GCC contracts them into), so no ulp allowance is needed."""

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

SEEDS = [0, 1, 1234, 2 ** 40 + 7]
SIZES = [1, 7, 15, 16, 17, 1000, 10 ** 6]
FLOATS = ["float32", "float64"]


def same(ours, theirs):
    a = ours.numpy() if hasattr(ours, "numpy") else np.asarray(ours)
    b = theirs.numpy()
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    bad = np.flatnonzero(~((a == b) | (np.isnan(a) & np.isnan(b))))
    assert bad.size == 0, f"{bad.size} of {a.size} differ, first at {bad[0]}: " \
                          f"{a.ravel()[bad[0]]!r} vs {b.ravel()[bad[0]]!r}"


def in_step():
    same(ng.get_rng_state(), torch.get_rng_state())


def seed_both(seed):
    ng.manual_seed(seed)
    torch.manual_seed(seed)


# ---- the engine and its state ----------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS + [-1, 2 ** 64 - 1, 67280421310721])
def test_seeding_and_state_layout(seed):
    seed_both(seed)
    in_step()
    assert ng.initial_seed() == torch.initial_seed()
    g, tg = ng.Generator(), torch.Generator()
    same(g.get_state(), tg.get_state())
    assert g.manual_seed(seed).initial_seed() == tg.manual_seed(seed).initial_seed()
    same(g.get_state(), tg.get_state())


def test_states_move_between_the_libraries():
    torch.manual_seed(5)
    torch.randn(3, dtype=torch.float64)      # leaves a cached normal in the state
    ng.set_rng_state(ng.tensor(torch.get_rng_state().numpy()))
    same(ng.randn(5, dtype=ng.float64), torch.randn(5, dtype=torch.float64))
    ng.rand(1000)
    torch.set_rng_state(torch.from_numpy(ng.get_rng_state().numpy()))
    same(ng.randn(3, dtype=ng.float64), torch.randn(3, dtype=torch.float64))
    g, tg = ng.Generator(), torch.Generator()
    g.set_state(ng.tensor(tg.manual_seed(8).get_state().numpy()))
    same(ng.rand(9, generator=g), torch.rand(9, generator=tg))
    with pytest.raises(RuntimeError, match="CPUGeneratorImplState of size 5056"):
        g.set_state(ng.zeros(3, dtype=ng.uint8))


def test_fork_rng_and_seed():
    seed_both(3)
    with ng.random.fork_rng():
        ng.randn(50)
    with torch.random.fork_rng():
        torch.randn(50)
    in_step()
    s = ng.seed()
    assert ng.initial_seed() == s
    torch.manual_seed(s)
    same(ng.rand(4), torch.rand(4))


# ---- factories -------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS[:2])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dt", FLOATS)
def test_rand_randn(seed, n, dt):
    seed_both(seed)
    same(ng.rand(n, dtype=getattr(ng, dt)), torch.rand(n, dtype=getattr(torch, dt)))
    same(ng.randn(n, dtype=getattr(ng, dt)), torch.randn(n, dtype=getattr(torch, dt)))
    same(ng.randn(n, 3, dtype=getattr(ng, dt)), torch.randn(n, 3, dtype=getattr(torch, dt)))
    in_step()


@pytest.mark.parametrize("n", SIZES[:-1])
def test_integer_factories(n):
    seed_both(11)
    same(ng.randint(0, 10, (n,)), torch.randint(0, 10, (n,)))
    same(ng.randint(-5, 2 ** 40, (n, 2)), torch.randint(-5, 2 ** 40, (n, 2)))
    same(ng.randint(3, (n,), dtype=ng.int32), torch.randint(3, (n,), dtype=torch.int32))
    same(ng.randperm(n), torch.randperm(n))
    same(ng.randperm(n, dtype=ng.float32), torch.randperm(n, dtype=torch.float32))
    x, tx = ng.zeros(n, 2), torch.zeros(n, 2)
    same(ng.rand_like(x), torch.rand_like(tx))
    same(ng.randn_like(x), torch.randn_like(tx))
    same(ng.randint_like(x, 4, 9), torch.randint_like(tx, 4, 9))
    in_step()


@pytest.mark.parametrize("n", [1, 7, 16, 17, 1000])
@pytest.mark.parametrize("dt", FLOATS)
def test_normal_overloads(n, dt):
    seed_both(4)
    ndt, tdt = getattr(ng, dt), getattr(torch, dt)
    m, tm = ng.arange(n, dtype=ndt), torch.arange(n, dtype=tdt)
    same(ng.normal(2.0, 3.0, (n,), dtype=ndt), torch.normal(2.0, 3.0, (n,), dtype=tdt))
    same(ng.normal(m, 2.5), torch.normal(tm, 2.5))
    same(ng.normal(-1.5, m + 1), torch.normal(-1.5, tm + 1))
    same(ng.normal(m, m * 0.5 + 1), torch.normal(tm, tm * 0.5 + 1))
    in_step()


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_bernoulli_and_multinomial(n):
    seed_both(6)
    for dt in FLOATS:
        p = ng.linspace(0, 1, n).to(getattr(ng, dt))
        tp = torch.linspace(0, 1, n).to(getattr(torch, dt))
        same(ng.bernoulli(p), torch.bernoulli(tp))
        same(ng.bernoulli(p, 0.3), torch.bernoulli(tp, 0.3))
        same(ng.empty(n, dtype=getattr(ng, dt)).bernoulli_(p),
             torch.empty(n, dtype=getattr(torch, dt)).bernoulli_(tp))
    w = ng.tensor([[0.1, 0.5, 0.4, 0.0], [0.3, 0.3, 0.2, 0.2]])
    tw = torch.tensor([[0.1, 0.5, 0.4, 0.0], [0.3, 0.3, 0.2, 0.2]])
    same(ng.multinomial(w, 3), torch.multinomial(tw, 3))
    same(ng.multinomial(w[0], 1), torch.multinomial(tw[0], 1))
    same(ng.multinomial(w, n, True), torch.multinomial(tw, n, True))
    in_step()


# ---- in-place fills ----------------------------------------------------------------------
def _targets(n, dt):
    """(numbagrad, torch) pairs of tensors to fill: contiguous, transposed, strided."""
    ndt, tdt = getattr(ng, dt), getattr(torch, dt)
    return [(ng.empty(n, dtype=ndt), torch.empty(n, dtype=tdt)),
            (ng.empty(n, 3, dtype=ndt).t(), torch.empty(n, 3, dtype=tdt).t()),
            (ng.empty(n, 4, dtype=ndt)[:, ::2], torch.empty(n, 4, dtype=tdt)[:, ::2])]


@pytest.mark.parametrize("n", [1, 7, 15, 16, 17, 1000])
@pytest.mark.parametrize("dt", FLOATS)
def test_float_fills(n, dt):
    seed_both(n)
    for x, tx in _targets(n, dt):
        same(x.uniform_(-2, 3), tx.uniform_(-2, 3))
        same(x.normal_(0.37, 3.3), tx.normal_(0.37, 3.3))
        same(x.bernoulli_(0.3), tx.bernoulli_(0.3))
        same(x.exponential_(2.5), tx.exponential_(2.5))
        same(x.random_(), tx.random_())
        same(x.random_(-4, 90), tx.random_(-4, 90))
        same(x.random_(7), tx.random_(7))
    in_step()


@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "int8", "uint8", "bool"])
def test_integer_fills(dt):
    seed_both(2)
    for n in (1, 17, 1000):
        x, tx = ng.empty(n, dtype=getattr(ng, dt)), torch.empty(n, dtype=getattr(torch, dt))
        same(x.random_(), tx.random_())
        if dt != "bool":
            same(x.random_(3, 100), tx.random_(3, 100))
            same(x.random_(50), tx.random_(50))
    in_step()


def test_interleaved_calls_stay_in_step():
    seed_both(99)
    g, tg = ng.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    rs = np.random.default_rng(0)
    for _ in range(60):
        n = int(rs.choice([1, 3, 16, 17, 40]))
        k = int(rs.integers(9))
        gen = (g, tg) if rs.random() < 0.3 else (None, None)
        if k == 0:
            same(ng.rand(n, generator=gen[0]), torch.rand(n, generator=gen[1]))
        elif k == 1:
            same(ng.randn(n, generator=gen[0]), torch.randn(n, generator=gen[1]))
        elif k == 2:
            same(ng.randn(n, dtype=ng.float64), torch.randn(n, dtype=torch.float64))
        elif k == 3:
            same(ng.randint(0, 7, (n,), generator=gen[0]),
                 torch.randint(0, 7, (n,), generator=gen[1]))
        elif k == 4:
            same(ng.randperm(n, generator=gen[0]), torch.randperm(n, generator=gen[1]))
        elif k == 5:
            same(ng.empty(n, 2).t().normal_(), torch.empty(n, 2).t().normal_())
        elif k == 6:
            same(ng.empty(n).bernoulli_(0.5), torch.empty(n).bernoulli_(0.5))
        elif k == 7:
            same(ng.normal(ng.zeros(n), 2.0), torch.normal(torch.zeros(n), 2.0))
        else:
            same(ng.empty(n, dtype=ng.float64).exponential_(),
                 torch.empty(n, dtype=torch.float64).exponential_())
    in_step()
    same(g.get_state(), tg.get_state())
