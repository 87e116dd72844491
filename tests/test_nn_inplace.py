"""The activations' and dropouts' ``inplace=True`` against torch: the input itself comes back,
written over and with its version bumped; values and gradients through the in-place op; the
errors for a leaf that requires grad and for a saved value that was written over; reprs."""

import numpy as np
import pytest
from oracle import both, same

import numbagrad as ng

torch = pytest.importorskip("torch")

# (module factory, functional call with inplace) on lib
ACTS = {
    "relu": (lambda nn: nn.ReLU(inplace=True), lambda f, x: f.relu(x, inplace=True)),
    "relu6": (lambda nn: nn.ReLU6(inplace=True), lambda f, x: f.relu6(x, inplace=True)),
    "leaky_relu": (lambda nn: nn.LeakyReLU(0.2, inplace=True),
                   lambda f, x: f.leaky_relu(x, 0.2, inplace=True)),
    "elu": (lambda nn: nn.ELU(0.7, inplace=True), lambda f, x: f.elu(x, 0.7, inplace=True)),
    "selu": (lambda nn: nn.SELU(inplace=True), lambda f, x: f.selu(x, inplace=True)),
    "celu": (lambda nn: nn.CELU(1.3, inplace=True), lambda f, x: f.celu(x, 1.3, inplace=True)),
    "hardtanh": (lambda nn: nn.Hardtanh(-0.5, 0.8, inplace=True),
                 lambda f, x: f.hardtanh(x, -0.5, 0.8, inplace=True)),
    "hardsigmoid": (lambda nn: nn.Hardsigmoid(inplace=True),
                    lambda f, x: f.hardsigmoid(x, inplace=True)),
    "hardswish": (lambda nn: nn.Hardswish(inplace=True),
                  lambda f, x: f.hardswish(x, inplace=True)),
    "silu": (lambda nn: nn.SiLU(inplace=True), lambda f, x: f.silu(x, inplace=True)),
    "mish": (lambda nn: nn.Mish(inplace=True), lambda f, x: f.mish(x, inplace=True)),
    "threshold": (lambda nn: nn.Threshold(0.1, -2.0, inplace=True),
                  lambda f, x: f.threshold(x, 0.1, -2.0, inplace=True)),
}
UNDERSCORE = {  # torch's F.<name>_
    "relu_": lambda f, x: f.relu_(x),
    "elu_": lambda f, x: f.elu_(x, 0.5),
    "leaky_relu_": lambda f, x: f.leaky_relu_(x, 0.3),
    "hardtanh_": lambda f, x: f.hardtanh_(x, -0.2, 0.4),
    "threshold_": lambda f, x: f.threshold_(x, 0.0, 3.0),
    "celu_": lambda f, x: f.celu_(x, 2.0),
    "selu_": lambda f, x: f.selu_(x),
}
X = np.random.default_rng(0).normal(size=(3, 5)) * 3


def _run(lib, call, dtype):
    """x -> h = x * 1.5 (saves nothing of h) -> call(h) in place -> loss; what torch shows."""
    x = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
    h = x * 1.5
    v0 = h._version
    y = call(lib, h)
    (y * y).sum().backward()
    return y is h, h._version - v0, y.detach().numpy().copy(), x.grad.numpy().copy()


def _check(call, dtype, grad_tol=None):
    ours, theirs = (_run(lib, call, dtype) for lib in (ng, torch))
    assert ours[0] is True and theirs[0] is True
    assert ours[1] == theirs[1] > 0
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(ours[2], theirs[2], rtol=tol, atol=tol)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=grad_tol or tol, atol=grad_tol or tol)


# torch's celu_ derives from its result with 1 / alpha rounded to float32, celu from its input:
# the two differ in float64 by that rounding (numbagrad derives both from the input)
GRAD_TOL = {"celu": 1e-6, "celu_": 1e-6}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_inplace_module_and_functional(name, dtype):
    module, functional = ACTS[name]
    _check(lambda lib, h: module(lib.nn)(h), dtype, GRAD_TOL.get(name))
    _check(lambda lib, h: functional(lib.nn.functional, h), dtype, GRAD_TOL.get(name))


@pytest.mark.parametrize("name", sorted(UNDERSCORE))
def test_functional_underscore_forms(name):
    _check(lambda lib, h: UNDERSCORE[name](lib.nn.functional, h), "float64", GRAD_TOL.get(name))


@pytest.mark.parametrize("name", sorted(ACTS))
def test_out_of_place_untouched(name):
    """inplace=False leaves the input alone: a new tensor, the same version."""
    def run(lib):
        x = lib.tensor(X)
        m = ACTS[name][0](lib.nn)
        m.inplace = False
        y = m(x)
        return y is x, x._version, np.array_equal(x.numpy(), X), y.numpy().tolist()
    ours, theirs = both(run)
    assert ours[:3] == (False, 0, True)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)


@pytest.mark.parametrize("name", sorted(ACTS))
def test_saved_value_written_over(name):
    """Sigmoid saves its output; writing over it in place fails backward with torch's error."""
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        y = lib.nn.Sequential(lib.nn.Sigmoid(), ACTS[name][0](lib.nn))(x)
        y.sum().backward()
    ours, theirs = both(run)
    assert "modified by an inplace operation" in theirs
    assert ours == theirs


@pytest.mark.parametrize("name", sorted(ACTS))
def test_leaf_requiring_grad(name):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        return ACTS[name][1](lib.nn.functional, x)
    ours = same(run)
    assert "leaf Variable that requires grad" in ours


def test_leaf_under_no_grad_is_written():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        with lib.no_grad():
            lib.nn.ReLU(inplace=True)(x)
        return x._version, x.detach().numpy().tolist(), x.requires_grad, x.grad_fn is None
    same(run)


def test_integer_input_errors():
    for call in (lambda f, x: f.hardsigmoid(x, inplace=True), lambda f, x: f.selu(x, inplace=True)):
        ours = same(lambda lib: call(lib.nn.functional, lib.tensor([1, -2, 3])))
        assert isinstance(ours, str) and "not implemented" in ours
    # elu's names the op "elu" where torch's says "elu_cpu" (tests/test_bad_inputs.py pins it)
    ours, theirs = both(lambda lib: lib.nn.functional.elu(lib.tensor([1, -2, 3]), inplace=True))
    assert ours.split(":")[0] == theirs.split(":")[0] == "NotImplementedError"
    assert "not implemented for 'Long'" in ours


def test_integer_relu_inplace():
    same(lambda lib: (lib.nn.functional.relu(t := lib.tensor([1, -2, 3]), inplace=True) is t,
                      t.tolist(), t._version))


REPRS = [
    lambda nn: nn.ReLU(inplace=True), lambda nn: nn.ReLU(), lambda nn: nn.ReLU6(inplace=True),
    lambda nn: nn.LeakyReLU(0.2, inplace=True), lambda nn: nn.LeakyReLU(),
    lambda nn: nn.ELU(inplace=True), lambda nn: nn.ELU(), lambda nn: nn.SELU(inplace=True),
    lambda nn: nn.CELU(inplace=True), lambda nn: nn.Hardtanh(inplace=True),
    lambda nn: nn.Hardtanh(0.0, 2.0), lambda nn: nn.Hardsigmoid(inplace=True),
    lambda nn: nn.Hardswish(inplace=True), lambda nn: nn.SiLU(inplace=True),
    lambda nn: nn.SiLU(), lambda nn: nn.Mish(inplace=True),
    lambda nn: nn.Threshold(0.1, 20, inplace=True), lambda nn: nn.Threshold(0.1, 20),
    lambda nn: nn.Dropout(inplace=True), lambda nn: nn.Dropout1d(0.2, inplace=True),
    lambda nn: nn.Dropout2d(inplace=True), lambda nn: nn.Dropout3d(inplace=True),
    lambda nn: nn.AlphaDropout(inplace=True), lambda nn: nn.FeatureAlphaDropout(inplace=True),
    lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU(inplace=True)),
]


@pytest.mark.parametrize("k", range(len(REPRS)))
def test_reprs(k):
    same(lambda lib: repr(REPRS[k](lib.nn)))


DROPOUTS = {
    "dropout": ((4, 6), lambda f, x, t: f.dropout(x, 0.4, t, inplace=True)),
    "dropout1d": ((3, 4, 5), lambda f, x, t: f.dropout1d(x, 0.4, t, inplace=True)),
    "dropout2d": ((2, 3, 2, 2), lambda f, x, t: f.dropout2d(x, 0.4, t, inplace=True)),
    "dropout3d": ((2, 3, 2, 2, 1), lambda f, x, t: f.dropout3d(x, 0.4, t, inplace=True)),
    "alpha_dropout": ((4, 6), lambda f, x, t: f.alpha_dropout(x, 0.4, t, inplace=True)),
    "feature_alpha_dropout": ((3, 4, 5),
                              lambda f, x, t: f.feature_alpha_dropout(x, 0.4, t, inplace=True)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(DROPOUTS))
def test_dropout_inplace(name, dtype):
    """The same draws as torch after manual_seed, written into the input; its gradient."""
    shape, call = DROPOUTS[name]
    data = np.random.default_rng(1).normal(size=shape)

    def run(lib):
        lib.manual_seed(3)
        x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        h = x + 1
        y = call(lib.nn.functional, h, True)
        (y * y).sum().backward()
        return y is h, h._version, y.detach().numpy(), x.grad.numpy()
    ours, theirs = both(run)
    assert ours[0] is theirs[0] is True
    # torch's alpha dropouts write twice (mul_ then add_): two bumps to numbagrad's one
    assert ours[1] == 1 and theirs[1] == (2 if "alpha" in name else 1)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6)


@pytest.mark.parametrize("name", sorted(DROPOUTS))
def test_dropout_inplace_eval_returns_input(name):
    """Not training: the input itself, no version bump, and no leaf error (torch's too)."""
    shape, call = DROPOUTS[name]

    def run(lib):
        x = lib.ones(shape, requires_grad=True)
        y = call(lib.nn.functional, x, False)
        return y is x, x._version
    assert same(run) == (True, 0)


def test_dropout_module_inplace_training_leaf_error():
    ours = same(lambda lib: lib.nn.Dropout(0.3, inplace=True)(lib.ones(4, requires_grad=True)))
    assert "leaf Variable" in ours


def test_is_inference_outside_inference_mode():
    """False for tensors made outside inference_mode, as torch (numbagrad makes no others)."""
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            y = x * 2
        return x.is_inference(), (x * 2).is_inference(), y.is_inference()
    assert same(run) == (False, False, False)
