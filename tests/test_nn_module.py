"""nn.Module, Parameter, layers and containers against torch: registration, walks, reprs,
state_dict round trips, modes, hooks, and Linear's values/gradients/grad_fn with copied
weights."""

import numpy as np
import pytest
from oracle import both, same

import numbagrad as ng

torch = pytest.importorskip("torch")


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Tanh(), nn.Linear(4, 2)),
                         nn.Dropout(0.25), nn.Linear(2, 1, bias=False))


def _copy_weights(src, dst):
    """torch module -> numbagrad module of the same structure."""
    for (name, p), (name2, q) in zip(src.named_parameters(), dst.named_parameters()):
        assert name == name2
        q._array()[...] = p.detach().numpy()


def test_reprs_and_walks_match_torch():
    def run(lib):
        m = _mlp(lib)
        acts = [lib.nn.LeakyReLU(0.2), lib.nn.GELU(approximate="tanh"), lib.nn.Softmax(dim=1),
                lib.nn.Flatten(), lib.nn.Identity(), lib.nn.Softplus(beta=2.0), lib.nn.ELU(),
                lib.nn.Hardtanh(-2.0, 2.0), lib.nn.SiLU(), lib.nn.LogSoftmax(dim=-1),
                lib.nn.Mish(), lib.nn.Unflatten(1, (2, 2)), lib.nn.Sigmoid()]
        lst = lib.nn.ModuleList([lib.nn.ReLU(), lib.nn.ReLU(), lib.nn.Tanh(), lib.nn.ReLU()])
        d = lib.nn.ModuleDict({"a": lib.nn.Linear(2, 2), "b": lib.nn.ReLU()})
        return (repr(m), [repr(a) for a in acts], repr(lst), repr(d),
                [n for n, _ in m.named_parameters()], [n for n, _ in m.named_modules()],
                [type(c).__name__ for c in m.children()], list(m.state_dict().keys()),
                [tuple(p.shape) for p in m.parameters()], len(m), repr(m[1]), repr(m[-1]),
                repr(m[1:3]), len(lst), repr(lib.nn.Parameter(lib.tensor([1.0, 2.0]))))
    same(run)


def test_linear_values_gradients_and_grad_fn_names_with_copied_weights():
    rng = np.random.default_rng(0)
    xs = {shape: rng.standard_normal(shape) for shape in [(5, 3), (3,), (2, 4, 3)]}

    def run(lib):
        lib.manual_seed(0)
        out = []
        for bias in (True, False):
            layer = lib.nn.Linear(3, 2, bias=bias).double()
            with lib.no_grad():
                layer.weight.copy_(lib.tensor([[0.5, -1.0, 0.25], [2.0, 0.1, -0.3]]))
                if bias:
                    layer.bias.copy_(lib.tensor([0.1, -0.2]))
            for shape, x in xs.items():
                y = layer(lib.tensor(x))
                y.pow(2).sum().backward()
                out.append((shape, bias, type(y.grad_fn).__name__ if lib is torch else
                            y.grad_fn.name(), np.round(y.detach().numpy(), 12).tolist(),
                            np.round(layer.weight.grad.numpy(), 12).tolist()))
                layer.zero_grad()
                assert layer.weight.grad is None
        return out
    same(run)


def test_default_initialisation_bounds_and_dtypes():
    layer = ng.nn.Linear(50, 20)
    bound = 1 / np.sqrt(50)
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert w.shape == (20, 50) and b.shape == (20,) and w.dtype == np.float32
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.1 * bound  # U(-b, b) has std b / sqrt(3)
    assert layer.weight.requires_grad and layer.weight.is_leaf
    assert ng.nn.Linear(3, 2, dtype=ng.float64).weight.dtype == ng.float64


def test_state_dict_round_trip_through_save_and_load(tmp_path):
    m = _mlp(ng)
    path = str(tmp_path / "model.pt")
    with pytest.warns(UserWarning, match="which torch.load cannot read"):
        ng.save(m.state_dict(), path)
    m2 = _mlp(ng)
    result = m2.load_state_dict(ng.load(path))
    assert repr(result) == "<All keys matched successfully>"
    for (n1, p1), (n2, p2) in zip(m.named_parameters(), m2.named_parameters()):
        assert n1 == n2 and np.array_equal(p1.detach().numpy(), p2.detach().numpy())
    assert not ng.load(path)["0.weight"].requires_grad


def test_load_state_dict_errors_match_torch():
    def run(lib):
        m = lib.nn.Linear(3, 2)
        errors = []
        for sd in ({"weight": lib.zeros(2, 3)}, {"weight": lib.zeros(2, 3),
                                                  "bias": lib.zeros(2), "extra": lib.zeros(1)},
                   {"weight": lib.zeros(3, 3), "bias": lib.zeros(2)}):
            try:
                m.load_state_dict(sd)
            except RuntimeError as e:
                errors.append(str(e))
        res = m.load_state_dict({"weight": lib.ones(2, 3)}, strict=False)
        return errors, list(res.missing_keys), list(res.unexpected_keys), m.weight.sum().item()
    same(run)


def test_registration_errors_modes_hooks_and_dtype_conversion():
    def run(lib):
        m = _mlp(lib)
        out = []
        try:
            m[0].weight = 3
        except TypeError as e:
            out.append(str(e))
        try:
            _ = m.nothing
        except AttributeError as e:
            out.append(str(e))
        m.register_buffer("steps", lib.zeros(1))
        out.append(list(dict(m.named_buffers())))
        m.eval()
        out.append([mod.training for mod in m.modules()])
        x = lib.ones(2, 3)
        y_eval = m(x)
        out.append(np.round(m(x).detach().numpy() - y_eval.detach().numpy(), 12).tolist())
        m.train()
        seen = []
        h = m[0].register_forward_hook(lambda mod, inp, o: seen.append(tuple(o.shape)))
        m[0](x)
        h.remove()
        m[0](x)
        out.append(seen)
        m.double()
        out.append([str(p.dtype) for p in m.parameters()])
        m.requires_grad_(False)
        out.append([p.requires_grad for p in m.parameters()])
        return out
    same(run)


def test_dropout_scales_kept_elements_and_is_identity_in_eval():
    x = ng.ones(1000, requires_grad=True)
    d = ng.nn.Dropout(0.25)
    y = d(x)
    kept = y.detach().numpy() != 0
    assert 0.65 < kept.mean() < 0.85
    assert np.allclose(y.detach().numpy()[kept], 1 / 0.75)
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), np.where(kept, 1 / 0.75, 0.0))
    d.eval()
    assert d(x) is x
    ours, theirs = both(lambda lib: type(lib.nn.functional.dropout(
        lib.ones(3, requires_grad=True), 0.5).grad_fn).__name__ if lib is torch else
        lib.nn.functional.dropout(lib.ones(3, requires_grad=True), 0.5).grad_fn.name())
    assert ours == theirs == "MulBackward0"
