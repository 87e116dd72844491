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


def within_ulps(ours, theirs, ulps=1):
    """For values that go through torch's vectorized float32 transcendentals (Sleef's log1p,
    exp, ...), whose last bit numbagrad's own functions may round the other way."""
    a, b = ours.numpy(), theirs.numpy()
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.all(np.abs(a - b) <= ulps * np.spacing(np.abs(b))), np.abs(a - b).max()


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
@pytest.mark.parametrize("dt", FLOATS + ["float16"])
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
    for x, tx in _targets(n, "float16"):
        same(x.uniform_(-2, 3), tx.uniform_(-2, 3))
        same(x.normal_(0.37, 3.3), tx.normal_(0.37, 3.3))
        same(x.random_(), tx.random_())
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


@pytest.mark.parametrize("dt", FLOATS)
def test_other_float_fills(dt):
    seed_both(8)
    for n in (1, 17, 1000):
        for x, tx in _targets(n, dt):
            same(x.geometric_(0.3), tx.geometric_(0.3))
            same(x.cauchy_(0.5, 2.0), tx.cauchy_(0.5, 2.0))
            same(x.log_normal_(0.5, 0.7), tx.log_normal_(0.5, 0.7))
    same(ng.empty(9, dtype=ng.int64).geometric_(0.2),
         torch.empty(9, dtype=torch.int64).geometric_(0.2))
    in_step()


# ---- what draws on the generator -------------------------------------------------------------
def _same_params(m, tm):
    for (name, p), (tname, tp) in zip(m.named_parameters(), tm.named_parameters(), strict=True):
        assert name == tname
        same(p.detach(), tp.detach())


LAYERS = ["Linear(13, 7)", "Linear(784, 64, bias=False)", "Bilinear(3, 4, 5)",
          "Conv1d(3, 4, 3)", "Conv2d(3, 8, 3, groups=1)", "Conv2d(4, 8, 3, groups=2)",
          "ConvTranspose2d(3, 8, 3)", "Embedding(10, 4, padding_idx=1)", "RNN(4, 6)",
          "LSTM(4, 6, 2)", "GRU(3, 5, bidirectional=True)", "LSTMCell(3, 4)",
          "MultiheadAttention(8, 2)", "LazyLinear(5)"]


@pytest.mark.parametrize("spec", LAYERS)
def test_default_initialisation(spec):
    seed_both(0)
    m, tm = eval(f"ng.nn.{spec}"), eval(f"torch.nn.{spec}")  # noqa: S307 - the test's own
    if spec.startswith("Lazy"):
        m(ng.ones(2, 6))
        tm(torch.ones(2, 6))
    _same_params(m, tm)
    in_step()


INITS = ["uniform_(x, -0.3, 2.0)", "normal_(x, 0.5, 2.0)", "xavier_uniform_(x)",
         "xavier_normal_(x, gain=2.0)", "kaiming_uniform_(x, a=0.1)",
         "kaiming_normal_(x, mode='fan_out')", "trunc_normal_(x)",
         "trunc_normal_(x, 0.0, 1.0, 1.5, 3.0)", "sparse_(x, 0.3)"]


@pytest.mark.parametrize("call", INITS)
@pytest.mark.parametrize("dt", FLOATS)
def test_init_functions(call, dt):
    seed_both(2)
    x, tx = ng.empty(20, 30, dtype=getattr(ng, dt)), torch.empty(20, 30, dtype=getattr(torch, dt))
    ours = eval(f"ng.nn.init.{call}", {"ng": ng, "x": x})  # noqa: S307 - the test's own
    theirs = eval(f"torch.nn.init.{call}", {"torch": torch, "x": tx})  # noqa: S307
    same(ours, theirs)
    g, tg = ng.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    same(ng.nn.init.normal_(x, generator=g), torch.nn.init.normal_(tx, generator=tg))
    in_step()


def test_orthogonal_draws_in_step():
    """orthogonal_ draws torch's normals; its QR is NumPy's LAPACK, torch's may round the
    last bits differently, so the values agree to float32 rounding, the stream exactly."""
    seed_both(3)
    x, tx = ng.empty(20, 30), torch.empty(20, 30)
    np.testing.assert_allclose(ng.nn.init.orthogonal_(x).numpy(),
                               torch.nn.init.orthogonal_(tx).numpy(), atol=1e-6)
    in_step()


DROPOUTS = ["dropout(x, 0.3)", "dropout(x.transpose(0, 3), 0.6)", "dropout(x, 1.0)",
            "dropout1d(x[0], 0.4)", "dropout2d(x, 0.3)", "dropout3d(x, 0.5)",
            "alpha_dropout(x, 0.3, True)", "feature_alpha_dropout(x, 0.3, True)"]


@pytest.mark.parametrize("call", DROPOUTS)
def test_dropout_in_training(call):
    seed_both(5)
    x = ng.randn(4, 6, 5, 5)
    tx = torch.randn(4, 6, 5, 5)
    same(x, tx)
    same(eval(f"ng.nn.functional.{call}", {"ng": ng, "x": x}),  # noqa: S307
         eval(f"torch.nn.functional.{call}", {"torch": torch, "x": tx}))  # noqa: S307
    same(ng.nn.Dropout(0.25)(x), torch.nn.Dropout(0.25)(tx))
    in_step()


def test_data_order():
    data, tdata = ng.utils.data, torch.utils.data
    seed_both(4)
    ds = list(range(23))
    assert list(data.RandomSampler(ds)) == list(tdata.RandomSampler(ds))
    assert list(data.RandomSampler(ds, replacement=True, num_samples=70)) == \
        list(tdata.RandomSampler(ds, replacement=True, num_samples=70))
    assert list(data.RandomSampler(ds, num_samples=50)) == \
        list(tdata.RandomSampler(ds, num_samples=50))
    assert list(data.SubsetRandomSampler([5, 9, 11, 40, 2])) == \
        list(tdata.SubsetRandomSampler([5, 9, 11, 40, 2]))
    assert [s.indices for s in data.random_split(ds, [0.3, 0.7])] == \
        [s.indices for s in tdata.random_split(ds, [0.3, 0.7])]
    g, tg = ng.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    assert [s.indices for s in data.random_split(ds, [10, 13], generator=g)] == \
        [s.indices for s in tdata.random_split(ds, [10, 13], generator=tg)]
    assert list(data.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2], 30)) == \
        list(tdata.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2], 30))
    x, tx = ng.arange(23.0), torch.arange(23.0)
    for gens in [(None, None), (ng.Generator().manual_seed(1),
                                torch.Generator().manual_seed(1))]:
        for _epoch in range(2):
            ours = [b[0].tolist() for b in data.DataLoader(
                data.TensorDataset(x), batch_size=5, shuffle=True, generator=gens[0])]
            theirs = [b[0].tolist() for b in tdata.DataLoader(
                tdata.TensorDataset(tx), batch_size=5, shuffle=True, generator=gens[1])]
            assert ours == theirs
    in_step()


def _train(lib, seed, steps=20):
    """A seeded script: data from randn, Linear layers (default init) with Dropout, a
    shuffled DataLoader and 20 Adam steps; its losses."""
    nn, data = lib.nn, lib.utils.data
    lib.manual_seed(seed)
    x = lib.randn(96, 8)
    y = (x[:, :1] * 2 - x[:, 1:2]).tanh() + 0.1 * lib.randn(96, 1)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 16),
                          nn.Tanh(), nn.Dropout(0.1), nn.Linear(16, 1))
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=16, shuffle=True)
    losses = []
    while len(losses) < steps:
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if len(losses) == steps:
                break
    return losses


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_seeded_training_prints_torchs_losses(seed):
    """Every draw is torch's (the streams end in step); the losses agree to 6 significant
    digits: within 1e-6 relative, the float32 products' and sums' last-bit differences (a
    loss at a rounding boundary of the 6th digit may print one unit apart)."""
    ours, theirs = _train(ng, seed), _train(torch, seed)
    in_step()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


# Laplace's transform takes a float32 log1p (torch's vectorized one): within 1 ulp
DISTRIBUTIONS = ["Normal(loc, scale)", "Uniform(loc, loc + scale)", "Laplace(loc, scale)",
                 "Exponential(scale)", "Bernoulli(probs=scale / 3)", "Categorical(probs=scale)",
                 "OneHotCategorical(probs=scale)", "LogNormal(loc, scale)",
                 "MultivariateNormal(loc, lib.eye(5) * 2)", "Poisson(scale * 9)",
                 "Gamma(scale, scale / 2)", "Gamma(scale / 4, 1.5)",
                 "Binomial(lib.tensor([0., 5., 30., 100., 1000.]), probs=scale / 2.1)",
                 "Binomial(40, probs=lib.tensor([0.0, 0.05, 0.5, 0.9, 1.0]))"]


@pytest.mark.parametrize("spec", DISTRIBUTIONS)
def test_distribution_samples(spec):
    seed_both(1)
    for method in ("sample", "rsample"):
        out = []
        for lib in (ng, torch):
            names = {"lib": lib, "loc": lib.linspace(-1, 1, 5), "scale": lib.linspace(0.5, 2, 5)}
            d = eval(f"lib.distributions.{spec}", names)  # noqa: S307 - the test's own
            out.append(getattr(d, method)((3,)) if method == "sample" or d.has_rsample
                       else None)
        if out[0] is not None:
            check = within_ulps if spec.startswith("Laplace") else same
            check(out[0].detach(), out[1].detach())
    in_step()


@pytest.mark.parametrize("dt", FLOATS)
def test_poisson_and_gamma_samplers(dt):
    seed_both(12)
    ndt, tdt = getattr(ng, dt), getattr(torch, dt)
    rates = [0.0, 0.5, 3.0, 9.99, 10.0, 25.0, 1000.0]
    alphas = [0.05, 0.3, 1.0, 2.5, 7.0, 100.0]
    for _ in range(3):
        same(ng.poisson(ng.tensor(rates * 20, dtype=ndt)),
             torch.poisson(torch.tensor(rates * 20, dtype=tdt)))
        same(ng.distributions.Gamma(ng.tensor(alphas, dtype=ndt), 1.0).sample((30,)),
             torch.distributions.Gamma(torch.tensor(alphas, dtype=tdt), 1.0).sample((30,)))
        ng.randn(1, dtype=ng.float64)      # a cached normal the gamma sampler takes first
        torch.randn(1, dtype=torch.float64)
    in_step()


@pytest.mark.parametrize("dt", FLOATS)
def test_samplers_keep_a_0d_shape(dt):
    seed_both(3)
    ndt, tdt = getattr(ng, dt), getattr(torch, dt)
    same(ng.poisson(ng.tensor(4.0, dtype=ndt)), torch.poisson(torch.tensor(4.0, dtype=tdt)))
    same(ng.distributions.Gamma(ng.tensor(2.5, dtype=ndt), 1.0).sample(),
         torch.distributions.Gamma(torch.tensor(2.5, dtype=tdt), 1.0).sample())
    same(ng.distributions.Beta(ng.tensor(2.0, dtype=ndt), ng.tensor(0.5, dtype=ndt)).sample(),
         torch.distributions.Beta(torch.tensor(2.0, dtype=tdt), torch.tensor(0.5, dtype=tdt)).sample())
    assert ng.poisson(ng.tensor(1.0, dtype=ndt)).shape == ()


@pytest.mark.parametrize("dt", FLOATS)
def test_dirichlet_and_beta(dt):
    """torch draws a Dirichlet's gammas in double and sums them with its own vectorized
    reduction: numbagrad follows both, so even float64 samples agree to the bit."""
    seed_both(0)
    ndt, tdt = getattr(ng, dt), getattr(torch, dt)
    for k in (2, 3, 5, 9, 40):
        c = np.linspace(0.2, 4, k)
        same(ng.distributions.Dirichlet(ng.tensor(c, dtype=ndt)).rsample((20,)).detach(),
             torch.distributions.Dirichlet(torch.tensor(c, dtype=tdt)).rsample((20,)))
    a, b = ng.tensor([0.5, 2.0], dtype=ndt), ng.tensor([3.3, 0.7], dtype=ndt)
    ta, tb = torch.tensor([0.5, 2.0], dtype=tdt), torch.tensor([3.3, 0.7], dtype=tdt)
    same(ng.distributions.Beta(a, b).sample((30,)), torch.distributions.Beta(ta, tb).sample((30,)))
    in_step()


def test_torchs_row_sum_order():
    rs = np.random.default_rng(0)
    for k in (1, 3, 4, 5, 17, 64, 65, 257, 5000):
        x = rs.random((3, k)) * 10 ** rs.uniform(-3, 3, (3, k))
        out = np.empty(3)
        ng.core.torch_rng._row_sums(x, out)
        assert np.array_equal(out, torch.from_numpy(x).sum(-1).numpy()), k
