"""Optimizer state exchanged with torch: a torch optimizer's state_dict (torch tensors, 0-d
step counters) loads into the numbagrad optimizer of the same class, and numbagrad's, once
converted with numbagrad.utils.convert.to_torch_state_dict, loads into torch's; training
continued on both sides after the exchange keeps the same parameters."""

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.optim  # noqa: F401 - makes ng.optim
from numbagrad.utils.convert import to_torch_state_dict

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)
X = RNG.standard_normal((6, 4)).astype(np.float32)
Y = RNG.standard_normal((6, 3)).astype(np.float32)
W0 = RNG.standard_normal((4, 3)).astype(np.float32)
B0 = RNG.standard_normal(3).astype(np.float32)
BEFORE, AFTER = 3, 3  # steps on the first side, then on both
TOL = dict(rtol=2e-5, atol=2e-6)
# L-BFGS's state holds the two-loop's coefficients, differences of float32 gradients: they
# differ from torch's by ~1e-3 relative without any exchange
LBFGS_STATE_TOL = dict(rtol=2e-3, atol=1e-4)

CASES = [
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.02)),
    ("Adam", dict(lr=0.02, amsgrad=True, weight_decay=0.01)),
    ("AdamW", dict(lr=0.02)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
    ("Adadelta", dict(lr=1.0)),
    ("Adamax", dict(lr=0.02)),
    ("NAdam", dict(lr=0.02)),
    ("RAdam", dict(lr=0.02)),
    ("Rprop", dict(lr=0.01)),
    ("ASGD", dict(lr=0.05, t0=1)),
    # a few inner iterations: with torch's default 20, float32 rounding soon sends the two
    # trajectories apart, exchange or not
    ("LBFGS", dict(lr=1, max_iter=4)),
    ("LBFGS", dict(lr=1, max_iter=4, line_search_fn="strong_wolfe", history_size=3)),
]


def _setup(lib, name, kwargs):
    w = lib.tensor(W0, requires_grad=True)
    b = lib.tensor(B0, requires_grad=True)
    x, y = lib.tensor(X), lib.tensor(Y)

    def closure():
        opt.zero_grad()
        loss = ((lib.tanh(x @ w + b) - y) ** 2).mean()
        loss.backward()
        return loss

    opt = getattr(lib.optim, name)([w, b], **kwargs)
    return opt, [w, b], closure


def _train(opt, closure, steps):
    for _ in range(steps):
        opt.step(closure)


def _values(params):
    return [np.array(p.detach().numpy()) for p in params]


def _assert_same(value, t_value, where, tol):
    if isinstance(t_value, torch.Tensor):
        assert isinstance(value, torch.Tensor), where
        assert value.dtype == t_value.dtype and value.shape == t_value.shape, where
        np.testing.assert_allclose(value.numpy(), t_value.numpy(), **tol, err_msg=where)
    elif isinstance(t_value, dict):
        assert value.keys() == t_value.keys(), where
        for k in t_value:
            _assert_same(value[k], t_value[k], f"{where}.{k}", tol)
    elif isinstance(t_value, (list, tuple)):  # L-BFGS's histories
        assert type(value) is type(t_value) and len(value) == len(t_value), where
        for i, (v, t_v) in enumerate(zip(value, t_value)):
            _assert_same(v, t_v, f"{where}[{i}]", tol)
    elif isinstance(t_value, float):
        assert value == pytest.approx(t_value, rel=tol["rtol"], abs=tol["atol"]), where
    else:
        assert value == t_value, where


def _assert_same_state(ng_opt, t_opt):
    """Every tensor and number of the two states equal, with torch's keys and groups."""
    ours, theirs = to_torch_state_dict(ng_opt.state_dict()), t_opt.state_dict()
    tol = LBFGS_STATE_TOL if isinstance(t_opt, torch.optim.LBFGS) else TOL
    _assert_same(ours, theirs, "state_dict", tol)


def _continue_both(ng_opt, ng_params, ng_closure, t_opt, t_params, t_closure):
    _train(ng_opt, ng_closure, AFTER)
    _train(t_opt, t_closure, AFTER)
    for ours, theirs in zip(_values(ng_params), _values(t_params)):
        np.testing.assert_allclose(ours, theirs, **TOL)
    _assert_same_state(ng_opt, t_opt)


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_torch_state_continues_in_numbagrad(name, kwargs):
    t_opt, t_params, t_closure = _setup(torch, name, kwargs)
    _train(t_opt, t_closure, BEFORE)
    ng_opt, ng_params, ng_closure = _setup(ng, name, kwargs)
    with ng.no_grad():
        for ours, theirs in zip(ng_params, t_params):
            ours.copy_(ng.tensor(theirs.detach().numpy().copy()))
    ng_opt.load_state_dict(t_opt.state_dict())
    for state in ng_opt.state.values():
        for value in state.values():
            assert not isinstance(value, torch.Tensor)
    _continue_both(ng_opt, ng_params, ng_closure, t_opt, t_params, t_closure)


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_numbagrad_state_continues_in_torch(name, kwargs):
    ng_opt, ng_params, ng_closure = _setup(ng, name, kwargs)
    _train(ng_opt, ng_closure, BEFORE)
    t_opt, t_params, t_closure = _setup(torch, name, kwargs)
    with torch.no_grad():
        for ours, theirs in zip(ng_params, t_params):
            theirs.copy_(torch.from_numpy(ours.detach().numpy().copy()))
    t_opt.load_state_dict(to_torch_state_dict(ng_opt.state_dict()))
    _continue_both(ng_opt, ng_params, ng_closure, t_opt, t_params, t_closure)


def test_loaded_state_is_a_copy_of_torchs():
    """numbagrad updates its state in place: it must not write into the torch optimizer's."""
    t_opt, _, t_closure = _setup(torch, "Adam", dict(lr=0.02))
    _train(t_opt, t_closure, 2)
    ng_opt, _, ng_closure = _setup(ng, "Adam", dict(lr=0.02))
    ng_opt.load_state_dict(t_opt.state_dict())
    before = {k: v.clone() for k, v in t_opt.state_dict()["state"][0].items()}
    _train(ng_opt, ng_closure, 1)
    for k, v in t_opt.state_dict()["state"][0].items():
        assert torch.equal(v, before[k]), k
    assert ng_opt.state_dict()["state"][0]["step"].item() == 3.0


def test_torch_tensor_hyperparameters_load():
    """A group's lr given as a torch tensor comes in as a numbagrad tensor."""
    t_opt, _, t_closure = _setup(torch, "Adam", dict(lr=torch.tensor(0.02)))
    _train(t_opt, t_closure, 1)
    ng_opt, _, ng_closure = _setup(ng, "Adam", dict(lr=0.5))
    ng_opt.load_state_dict(t_opt.state_dict())
    lr = ng_opt.param_groups[0]["lr"]
    assert isinstance(lr, ng.Tensor) and lr.item() == pytest.approx(0.02)
    _train(ng_opt, ng_closure, 1)
