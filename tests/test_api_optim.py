"""Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD, CyclicLR and swa_utils against torch.optim:
the same parameters after several steps (float32 and float64), the same learning rates."""

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

CASES = [("Adadelta", {}), ("Adadelta", {"lr": 0.5, "weight_decay": 0.1, "maximize": True}),
         ("Adamax", {}), ("Adamax", {"lr": 0.01, "weight_decay": 0.05}),
         ("NAdam", {}), ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
         ("NAdam", {"weight_decay": 0.1, "momentum_decay": 0.01}),
         ("RAdam", {"lr": 0.01}), ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
         ("Rprop", {}), ("Rprop", {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
         ("ASGD", {}), ("ASGD", {"lr": 0.05, "t0": 3, "weight_decay": 0.01})]


def _train(lib, name, kw, dtype, steps=12):
    rng = np.random.default_rng(0)
    w0, target = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    w = lib.tensor(w0, dtype=getattr(lib, dtype), requires_grad=True)
    t = lib.tensor(target, dtype=getattr(lib, dtype))
    opt = getattr(lib.optim, name)([w], **kw)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((w - t) ** 2 * (w + 2.0)).sum()
        loss.backward()
        opt.step()
    return w.detach().numpy(), opt


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_steps_as_torch(name, kw, dtype):
    theirs, t_opt = _train(torch, name, kw, dtype)
    mine, n_opt = _train(ng, name, kw, dtype)
    rtol = 2e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=rtol)
    assert sorted(n_opt.state_dict()["state"][0]) == sorted(t_opt.state_dict()["state"][0])
    assert repr(n_opt).replace("numbagrad", "torch") == repr(t_opt)


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD"])
def test_invalid_arguments_as_torch(name):
    caught = []
    for lib in (torch, ng):
        with pytest.raises(ValueError) as e:
            getattr(lib.optim, name)([lib.ones(1, requires_grad=True)], lr=-1.0)
        caught.append(str(e.value))
    assert caught[1] == caught[0]


@pytest.mark.parametrize("kw", [{}, {"mode": "triangular2", "step_size_up": 3},
                                {"mode": "exp_range", "gamma": 0.9, "step_size_up": 2,
                                 "step_size_down": 4}])
def test_cyclic_lr_as_torch(kw):
    seqs = []
    for lib in (torch, ng):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        sched = lib.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, **kw)
        seq = []
        for _ in range(15):
            opt.step()
            sched.step()
            seq.append((sched.get_last_lr()[0], opt.param_groups[0]["momentum"]))
        seqs.append(seq)
    np.testing.assert_allclose(seqs[1], seqs[0], rtol=1e-12)


def test_averaged_model_and_swalr_as_torch():
    results = []
    for lib in (torch, ng):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            model.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3)))
            model.bias.copy_(lib.tensor([0.5, -0.5]))
        swa = lib.optim.swa_utils.AveragedModel(model)
        opt = lib.optim.SGD(model.parameters(), lr=0.5)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
        lrs = []
        for k in range(5):
            opt.zero_grad()
            model(lib.tensor(np.full((4, 3), k + 1.0))).pow(2).sum().backward()
            opt.step()
            swa.update_parameters(model)
            sched.step()
            lrs.append(sched.get_last_lr()[0])
        results.append((swa.module.weight.detach().numpy(), int(swa.n_averaged), lrs,
                        swa(lib.tensor(np.ones((1, 3)))).detach().numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12)
    assert results[1][1] == results[0][1]
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-12)
    np.testing.assert_allclose(results[1][3], results[0][3], rtol=1e-12)
