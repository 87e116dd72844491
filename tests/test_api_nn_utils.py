"""nn.utils (clipping, parameter vectors, weight and spectral norm, parametrize) and the
parameter containers (ParameterList, ParameterDict, Buffer) against torch."""

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def _pair(shape_list, dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shape_list]
    grads = [rng.standard_normal(s) * 3 for s in shape_list]
    out = []
    for lib in (torch, ng):
        ps = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g, dtype=getattr(lib, dtype))
        out.append(ps)
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm_type,max_norm", [(2.0, 1.0), (1.0, 2.0), (float("inf"), 0.5),
                                                (2.0, 1e6)])
def test_clip_grad_norm_as_torch(dtype, norm_type, max_norm):
    theirs, mine = _pair([(3, 4), (5,), ()], dtype)
    t_total = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    n_total = ng.nn.utils.clip_grad_norm_(mine, max_norm, norm_type)
    rtol = 1e-6 if dtype == "float32" else 1e-14
    assert n_total.dtype.name == str(t_total.dtype).split(".")[1]
    np.testing.assert_allclose(n_total.numpy(), t_total.numpy(), rtol=rtol)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol)


def test_clip_grad_norm_nonfinite_error_as_torch():
    caught = []
    for ps in _pair([(3,)], "float64"):
        ps[0].grad[0] = float("inf")
        lib = torch if isinstance(ps[0], torch.Tensor) else ng
        with pytest.raises(RuntimeError) as e:
            lib.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
        caught.append(str(e.value))
    assert caught[0] == caught[1]


def test_clip_grad_value_and_parameter_vectors_as_torch():
    theirs, mine = _pair([(3, 4), (5,)], "float32")
    torch.nn.utils.clip_grad_value_(theirs, 0.7)
    ng.nn.utils.clip_grad_value_(mine, 0.7)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    vt = torch.nn.utils.parameters_to_vector(theirs)
    vn = ng.nn.utils.parameters_to_vector(mine)
    np.testing.assert_array_equal(vn.detach().numpy(), vt.detach().numpy())
    assert vn.grad_fn.name() == vt.grad_fn.name()
    new = np.arange(17, dtype=np.float32)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), theirs)
    ng.nn.utils.vector_to_parameters(ng.tensor(new), mine)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _copy_linear(dtype=np.float64):
    t = torch.nn.Linear(4, 3).double()
    n = ng.nn.Linear(4, 3).double()
    n.load_state_dict({k: ng.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, n


def _step(lib, m, x):
    out = m(lib.tensor(x))
    (out * out).sum().backward()
    return out.detach().numpy()


def test_weight_norm_as_torch():
    t, n = _copy_linear()
    torch.nn.utils.weight_norm(t)
    ng.nn.utils.weight_norm(n)
    assert sorted(k for k, _ in n.named_parameters()) == sorted(k for k, _ in t.named_parameters())
    x = np.random.default_rng(0).standard_normal((2, 4))
    np.testing.assert_allclose(_step(ng, n, x), _step(torch, t, x), rtol=1e-12)
    for name in ("weight_g", "weight_v", "bias"):
        np.testing.assert_allclose(getattr(n, name).grad.numpy(),
                                   getattr(t, name).grad.numpy(), rtol=1e-10)


def test_spectral_norm_as_torch_from_the_same_start():
    t, n = _copy_linear()
    torch.nn.utils.spectral_norm(t)
    ng.nn.utils.spectral_norm(n)
    n.weight_u.data = ng.tensor(t.weight_u.numpy().copy())  # the random start, copied
    n.weight_v.data = ng.tensor(t.weight_v.numpy().copy())
    x = np.random.default_rng(1).standard_normal((2, 4))
    for _ in range(3):  # each training forward takes one power-iteration step
        np.testing.assert_allclose(_step(ng, n, x), _step(torch, t, x), rtol=1e-10)
        np.testing.assert_allclose(n.weight_u.numpy(), t.weight_u.numpy(), rtol=1e-10)
    np.testing.assert_allclose(n.weight_orig.grad.numpy(), t.weight_orig.grad.numpy(),
                               rtol=1e-9)


def test_register_parametrization_as_torch():
    class Scale(ng.nn.Module):
        def forward(self, x):
            return x * 2

    class TScale(torch.nn.Module):
        def forward(self, x):
            return x * 2
    t, n = _copy_linear()
    torch.nn.utils.parametrize.register_parametrization(t, "weight", TScale())
    ng.nn.utils.parametrize.register_parametrization(n, "weight", Scale())
    assert type(n).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert sorted(n.state_dict()) == sorted(t.state_dict())
    assert ng.nn.utils.parametrize.is_parametrized(n, "weight")
    x = np.random.default_rng(2).standard_normal((2, 4))
    np.testing.assert_allclose(_step(ng, n, x), _step(torch, t, x), rtol=1e-12)
    np.testing.assert_allclose(n.parametrizations.weight.original.grad.numpy(),
                               t.parametrizations.weight.original.grad.numpy(), rtol=1e-12)
    ng.nn.utils.parametrize.remove_parametrizations(n, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(t, "weight")
    assert type(n).__name__ == "Linear"
    np.testing.assert_allclose(n.weight.detach().numpy(), t.weight.detach().numpy())


def _parametrization_run(lib):
    """What a user sees of a parametrization in ``lib``: the repr, the calls registration
    makes, caching, a right inverse, a second parametrization, errors, removal."""
    nn, P = lib.nn, lib.nn.utils.parametrize
    calls = []

    class Symmetric(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()

    class Double(nn.Module):
        def forward(self, x):
            return x * 2

    class Widen(nn.Module):
        def forward(self, x):
            return lib.cat([x, x])

    m = nn.Linear(3, 3, dtype=lib.float64)
    P.register_parametrization(m, "weight", Symmetric())
    out = [repr(m), len(calls), type(m.parametrizations).__name__,
           type(m.parametrizations.weight).__name__, P.type_before_parametrizations(m).__name__]
    with P.cached():
        a, b = m.weight, m.weight
        out.append((a is b, len(calls)))
    out.append((m.weight is m.weight, len(calls)))
    m.weight = lib.tensor([[1., 2., 3.], [2., 4., 5.], [3., 5., 6.]], dtype=lib.float64)
    out.append(m.parametrizations.weight.original.tolist())
    P.register_parametrization(m, "weight", Double())
    out.append((repr(m.parametrizations.weight), m.weight.tolist()))
    try:
        P.register_parametrization(m, "bias", Widen())
    except ValueError as err:
        out.append(str(err))
    try:
        import pickle
        pickle.dumps(m)
    except RuntimeError as err:
        out.append(str(err).splitlines()[0])
    out.append(sorted(m.state_dict()))
    P.remove_parametrizations(m, "weight")
    out.append((type(m).__name__, m.weight.tolist(), type(m.weight).__name__,
                P.is_parametrized(m)))
    return out


def test_parametrization_details_as_torch():
    """torch evaluates a new parametrization once to check it, shows ModuleDict and
    ParametrizationList, and cached() computes each tensor once."""
    ours, theirs = _parametrization_run(ng), _parametrization_run(torch)
    assert ours == theirs


def test_parameter_containers_as_torch():
    out = []
    for lib in (torch, ng):
        nn = lib.nn
        pl = nn.ParameterList([nn.Parameter(lib.ones(3, 4)), lib.ones(3, dtype=lib.float64)])
        pd = nn.ParameterDict({"a": nn.Parameter(lib.ones(2)), "b": lib.zeros(2)})

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.pl, self.pd = pl, pd
                self.b = nn.Buffer(lib.ones(2))
                self.c = nn.Buffer(lib.zeros(1), persistent=False)
        m = M()
        pl.append(lib.ones(2))
        pd["c"] = lib.ones(1)
        out.append((repr(pl).replace("numbagrad", "torch"), repr(pd), type(pl[1]).__name__,
                    type(pd["b"]).__name__, len(pl), len(pd), list(m.state_dict()),
                    [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
                    isinstance(m.b, nn.Buffer), isinstance(pl[0], nn.Buffer), list(pd.keys())))
    assert out[1] == out[0]


def test_parameter_list_feeds_an_optimizer():
    pl = ng.nn.ParameterList([ng.nn.Parameter(ng.ones(2)) for _ in range(3)])
    opt = ng.optim.SGD(pl.parameters(), lr=0.5)
    sum(p.sum() for p in pl).backward()
    opt.step()
    assert all(np.all(p.detach().numpy() == 0.5) for p in pl)
