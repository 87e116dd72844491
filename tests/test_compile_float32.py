"""Compiled replay of float32 traces on float32 arrays (numbagrad/compiler/float32_nodes.py):
which traces take that path, and that each equals eager bit for bit."""

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.func  # noqa: F401 - binds ng.func

F = ng.nn.functional
RNG = np.random.default_rng(3)


def _f32(*shape, scale=0.1):
    return (scale * RNG.standard_normal(shape)).astype(np.float32)


def _program(compiled):
    return next(iter(compiled.traces.values()))


def _linear_mlp(p, x, y):
    # F.linear: x @ W.T through t() nodes, whose weight gradient eager writes in W's layout
    h = F.linear(x, p[0], p[1]).tanh()
    h = F.linear(h, p[2], p[1]).relu()  # one bias in two layers: its gradients add up
    return F.cross_entropy(F.linear(h, p[3]), y)


def _squares(p, x, y):
    h = x @ p[0]
    return F.mse_loss(h * h, (x[:, :64] * 2).sigmoid())  # an operand used twice by one node


def _transposed_weights(p, x, y):
    # ``W.T`` written out: permute views, which products read in their transposed layout
    return F.cross_entropy((x @ p[0].T + p[1]).tanh() @ p[2].T, y)


def _sliced_weight(p, x, y):
    # two small views of one weight: their gradients add into its adjoint through strides
    return ((x[:, :100] @ p[0][:100]) * (x[:, 100:] @ p[0][100:])).mean()


def _cnn(p, x, y):
    h = F.max_pool2d(F.relu(F.conv2d(x.reshape(-1, 3, 16, 16), p[0], p[1], padding=1)), 2)
    h = F.avg_pool2d(F.relu(F.conv2d(h, p[2])), 2).flatten(1)
    return F.cross_entropy(F.linear(h, p[3], p[4]), y)


def _bias_adds(p, x, y):
    # ``x @ w + b``: the add hands its gradient on to the product, the bias gets a row sum
    h = (x @ p[0] + p[1]).relu()
    return F.cross_entropy(h @ p[2] + p[3], y) + (h - p[1]).mean()


def _small_weights(p, x, y):
    # weights and biases under tape.BIG in products that are big: eager keeps them big too
    return F.cross_entropy(F.linear(F.linear(x, p[0], p[1]).relu(), p[2], p[3]), y)


def _linear_3d(p, x, y):
    # F.linear on 3-d input: without a bias a matmul of the rows, with one the rows folded
    # into one addmm (torch's two paths), each then a view
    h = F.linear(x.reshape(8, -1, 200), p[0]).relu()
    h = F.linear(h, p[1], p[2]).reshape(-1, 256)
    return F.cross_entropy(F.linear(h, p[3]), y)


def _unused_input(p, x, y):
    return (x @ p[0]).relu().mean()  # p[1] gets zeros


# (function, its parameters, batch size or (batch size, features: 200 if not given)): nodes
# of 32,768 elements or more (tape.BIG), which eager differentiates in float32
CASES = {
    "linear_mlp": (_linear_mlp, lambda: (_f32(256, 200), _f32(256), _f32(256, 256),
                                         _f32(10, 256)), 64),
    "squares": (_squares, lambda: (_f32(200, 64),), 512),
    "transposed_weights": (_transposed_weights, lambda: (_f32(256, 200), _f32(256),
                                                         _f32(10, 256)), 64),
    "sliced_weight": (_sliced_weight, lambda: (_f32(200, 64),), 512),
    "cnn": (_cnn, lambda: (_f32(8, 3, 3, 3), _f32(8), _f32(16, 8, 3, 3), _f32(10, 16 * 3 * 3),
                           _f32(10)), (64, 768)),
    "small_weights": (_small_weights, lambda: (_f32(16, 200), _f32(16), _f32(10, 16),
                                               _f32(10)), 512),
    "linear_3d": (_linear_3d, lambda: (_f32(256, 200), _f32(256, 256), _f32(256),
                                       _f32(10, 256)), 512),
    "unused_input": (_unused_input, lambda: (_f32(200, 512), _f32(512)), 64),
    "bias_adds": (_bias_adds, lambda: (_f32(200, 512), _f32(512), _f32(512, 10), _f32(10)), 64),
}
# traces whose backward float32_source does not write out (an operand read twice by one
# node): they run float32_nodes.run
INTERPRETED = {"squares"}


@pytest.mark.parametrize("name", CASES)
def test_float32_traces_replay_on_float32_arrays_with_eagers_bits(name):
    f, make, batch = CASES[name]
    batch, features = batch if isinstance(batch, tuple) else (batch, 200)
    params = make()
    vg = ng.func.value_and_grad(f)
    compiled = ng.compile(vg)
    for _ in range(3):  # the trace, then replays on new batches and labels
        x = _f32(batch, features, scale=1.0)
        y = RNG.integers(0, 10, batch)
        (cv, cg), (ev, eg) = compiled(params, x, y), vg(params, x, y)
        assert type(cv) is type(ev) and cv == ev
        for got, want in zip(cg, eg):
            assert got.dtype == want.dtype == np.float32
            np.testing.assert_array_equal(got, want)
    plan = _program(compiled).f32
    assert plan is not None and (plan.source_run is None) == (name in INTERPRETED)


@pytest.mark.parametrize("name", sorted(set(CASES) - INTERPRETED))
def test_the_written_out_plan_equals_the_interpreted_one(name):
    f, make, batch = CASES[name]
    batch, features = batch if isinstance(batch, tuple) else (batch, 200)
    params = make()
    compiled = ng.compile(ng.func.value_and_grad(f))
    x, y = _f32(batch, features, scale=1.0), RNG.integers(0, 10, batch)
    written_value, written = compiled(params, x, y)
    written = [np.array(g) for g in written]  # (the next call may reuse their buffer)
    plan = _program(compiled).f32
    plan.source_run = None  # float32_nodes.run decides at the call what the source fixed
    value, grads = compiled(params, x, y)
    assert value == written_value
    for got, want in zip(grads, written):
        np.testing.assert_array_equal(got, want)
        # the same bits, signs of zeros included
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_a_single_float32_array_takes_the_path_too():
    w = ng.tensor(_f32(300, 200))

    def f(x):
        return ((x @ w).tanh() * 3.0).sum()
    grad = ng.func.grad(f)
    compiled = ng.compile(grad)
    for _ in range(2):
        x = _f32(120, 300, scale=1.0)
        got, want = compiled(x), grad(x)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)
    assert _program(compiled).f32 is not None


def test_a_trace_with_a_float64_node_stays_on_the_arena():
    def f(p, x):
        h = (x @ p[0]).relu()
        return (h.double() * 2.0).sum()  # a float64 node: the arena, as before
    params = (_f32(200, 256),)
    x = _f32(64, 200, scale=1.0)
    vg = ng.func.value_and_grad(f)
    compiled = ng.compile(vg)
    (cv, (cg,)), (ev, (eg,)) = compiled(params, x), vg(params, x)
    assert cv == ev
    np.testing.assert_array_equal(cg, eg)
    program = _program(compiled)
    assert program.f32 is None and program.fused is not None


def test_float32_path_matches_torch():
    torch = pytest.importorskip("torch")
    p = _f32(256, 200), _f32(256), _f32(256, 256), _f32(10, 256)
    x, y = _f32(64, 200, scale=1.0), RNG.integers(0, 10, 64)
    value, grads = ng.compile(ng.func.value_and_grad(_linear_mlp))(p, x, y)
    tp = [torch.tensor(a, requires_grad=True) for a in p]
    tv = _torch_mlp(torch, tp, x, y)
    tv.backward()
    np.testing.assert_allclose(value, tv.item(), rtol=1e-5)
    for g, t in zip(grads, tp):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-4, atol=1e-6)


def _torch_mlp(torch, p, x, y):
    tF = torch.nn.functional
    h = tF.linear(torch.tensor(x), p[0], p[1]).tanh()
    h = tF.linear(h, p[2], p[1]).relu()
    return tF.cross_entropy(tF.linear(h, p[3]), torch.tensor(y))
