"""nn.utils.prune against torch's: the masks, what pruning registers (``name_orig``,
``name_mask``, the pre-hook), module.name before and after a forward, the gradients of
``name_orig``, remove, global pruning, and torch's errors for bad amounts."""

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")
import torch.nn.utils.prune as tprune  # noqa: E402 - torch imports it only on demand

nprune = ng.nn.utils.prune


def _pair(kind="linear", seed=0):
    """(torch module, numbagrad module) with the same parameters."""
    if kind == "linear":
        tm, nm = torch.nn.Linear(6, 4), ng.nn.Linear(6, 4)
    else:
        tm, nm = torch.nn.Conv2d(3, 5, 2), ng.nn.Conv2d(3, 5, 2)
    rng = np.random.default_rng(seed)
    for name, p in tm.named_parameters():
        value = rng.standard_normal(tuple(p.shape)).astype(np.float32)
        with torch.no_grad():
            p.copy_(torch.from_numpy(value))
        getattr(nm, name).data = ng.tensor(value)
    return tm, nm


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


def _layout(m):
    """What pruning changes in a module: its parameters, buffers, state-dict keys, and the
    class names of its forward pre-hooks."""
    return ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
            list(m.state_dict()), [type(h).__name__ for h in m._forward_pre_hooks.values()])


def _same_state(tm, nm, name="weight"):
    assert _layout(tm) == _layout(nm)
    np.testing.assert_array_equal(_np(getattr(tm, name + "_mask")),
                                  _np(getattr(nm, name + "_mask")))
    np.testing.assert_array_equal(_np(getattr(tm, name)), _np(getattr(nm, name)))


CASES = [
    ("identity", {}),
    ("l1_unstructured", {"amount": 0.3}),
    ("l1_unstructured", {"amount": 5}),
    ("random_unstructured", {"amount": 0.4}),
    ("random_unstructured", {"amount": 3}),
    ("random_structured", {"amount": 2, "dim": 1}),
    ("random_structured", {"amount": 0.5, "dim": 0}),
    ("ln_structured", {"amount": 0.5, "n": 2, "dim": 0}),
    ("ln_structured", {"amount": 2, "n": 1, "dim": 1}),
    ("ln_structured", {"amount": 1, "n": float("-inf"), "dim": -1}),
    ("ln_structured", {"amount": 0, "n": 2, "dim": 0}),
]


@pytest.mark.parametrize(("fn", "kwargs"), CASES, ids=[f"{f}-{k}" for f, k in CASES])
def test_one_and_two_rounds_as_torch(fn, kwargs):
    tm, nm = _pair()
    # the random methods draw from the generator as torch's do: same seed, same mask
    torch.manual_seed(0)
    ng.manual_seed(0)
    assert getattr(nprune, fn)(nm, "weight", **kwargs) is nm
    getattr(tprune, fn)(tm, "weight", **kwargs)
    _same_state(tm, nm)
    assert type(nm.weight) is ng.Tensor and not isinstance(nm.weight, ng.nn.Parameter)
    assert isinstance(nm.weight_orig, ng.nn.Parameter)
    # a second round on top of the first goes through a PruningContainer
    getattr(tprune, fn)(tm, "weight", **kwargs)
    getattr(nprune, fn)(nm, "weight", **kwargs)
    _same_state(tm, nm)
    assert _layout(nm)[3] == ["PruningContainer"]
    assert len(next(iter(nm._forward_pre_hooks.values()))) == 2


def test_mixed_methods_combine_masks_as_torch():
    tm, nm = _pair("conv")
    torch.manual_seed(3)
    ng.manual_seed(3)
    for mod, prune in ((tm, tprune), (nm, nprune)):
        prune.l1_unstructured(mod, "weight", amount=0.2)
        prune.ln_structured(mod, "weight", amount=2, n=2, dim=0)
        prune.random_structured(mod, "weight", amount=1, dim=1)
        prune.random_unstructured(mod, "weight", amount=0.25)
        prune.l1_unstructured(mod, "bias", amount=2)
    _same_state(tm, nm)
    _same_state(tm, nm, "bias")
    assert [type(m).__name__ for m in next(iter(nm._forward_pre_hooks.values()))] == \
        ["L1Unstructured", "LnStructured", "RandomStructured", "RandomUnstructured"]
    assert (_np(nm.weight_mask) == 0).sum() > 12  # the later rounds pruned beyond the first


@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_forward_and_gradients_of_orig_as_torch(kind):
    tm, nm = _pair(kind)
    tprune.l1_unstructured(tm, "weight", amount=0.5)
    nprune.l1_unstructured(nm, "weight", amount=0.5)
    shape = (3, 6) if kind == "linear" else (2, 3, 4, 4)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    (tm(torch.from_numpy(x)) ** 2).sum().backward()
    (nm(ng.tensor(x)) ** 2).sum().backward()
    np.testing.assert_allclose(_np(nm.weight_orig.grad), _np(tm.weight_orig.grad),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(nm.bias.grad), _np(tm.bias.grad), rtol=1e-5, atol=1e-5)
    # the pruned entries get no gradient: they go through the mask's zeros
    assert np.all(_np(nm.weight_orig.grad)[_np(nm.weight_mask) == 0] == 0)
    assert nm.weight_mask.grad is None and not nm.weight_mask.requires_grad


def test_the_pre_hook_recomputes_the_weight_from_orig():
    tm, nm = _pair()
    tprune.random_unstructured(tm, "weight", amount=0.5)
    nprune.random_unstructured(nm, "weight", amount=0.5)
    with ng.no_grad():
        nm.weight_orig.add_(1.0)
    stale = _np(nm.weight).copy()
    nm(ng.ones(2, 6))
    np.testing.assert_array_equal(_np(nm.weight), (_np(nm.weight_orig) * _np(nm.weight_mask)))
    assert not np.array_equal(stale, _np(nm.weight))


def test_remove_makes_the_pruning_permanent_as_torch():
    tm, nm = _pair()
    tprune.l1_unstructured(tm, "weight", amount=0.5)
    nprune.l1_unstructured(nm, "weight", amount=0.5)
    tprune.l1_unstructured(tm, "weight", amount=1)
    nprune.l1_unstructured(nm, "weight", amount=1)
    assert nprune.is_pruned(nm)
    assert nprune.remove(nm, "weight") is nm
    tprune.remove(tm, "weight")
    assert _layout(nm) == _layout(tm) == (["bias", "weight"], [], ["bias", "weight"], [])
    assert isinstance(nm.weight, ng.nn.Parameter)
    np.testing.assert_array_equal(_np(nm.weight), _np(tm.weight))
    assert (_np(nm.weight) == 0).sum() == 13
    assert not nprune.is_pruned(nm)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        nprune.remove(nm, "weight")


def test_global_unstructured_across_two_modules_as_torch():
    (t1, n1), (t2, n2) = _pair(seed=1), _pair("conv", seed=2)
    # an existing mask on one of them is kept and pruned further
    tprune.l1_unstructured(t1, "weight", amount=4)
    nprune.l1_unstructured(n1, "weight", amount=4)
    tparams = [(t1, "weight"), (t2, "weight"), (t2, "bias")]
    nparams = [(n1, "weight"), (n2, "weight"), (n2, "bias")]
    tprune.global_unstructured(tparams, pruning_method=tprune.L1Unstructured, amount=0.4)
    nprune.global_unstructured(nparams, pruning_method=nprune.L1Unstructured, amount=0.4)
    _same_state(t1, n1)
    _same_state(t2, n2)
    _same_state(t2, n2, "bias")
    assert _layout(n2)[3] == ["CustomFromMask", "CustomFromMask"]
    # importance scores in place of the parameters, an int amount
    (t3, n3), (t4, n4) = _pair(seed=3), _pair(seed=4)
    scores = np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32)
    tprune.global_unstructured([(t3, "weight"), (t4, "weight")], tprune.L1Unstructured,
                               importance_scores={(t3, "weight"): torch.from_numpy(scores)},
                               amount=9)
    nprune.global_unstructured([(n3, "weight"), (n4, "weight")], nprune.L1Unstructured,
                               importance_scores={(n3, "weight"): ng.tensor(scores)}, amount=9)
    _same_state(t3, n3)
    _same_state(t4, n4)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE'):
        nprune.global_unstructured([(n4, "bias")], nprune.LnStructured, amount=1, n=2)
    with pytest.raises(TypeError, match="importance_scores must be of type dict"):
        nprune.global_unstructured([(n4, "bias")], nprune.L1Unstructured,
                                   importance_scores=[1], amount=1)


def test_importance_scores_and_custom_masks_as_torch():
    tm, nm = _pair("conv")
    scores = np.random.default_rng(7).standard_normal((5, 3, 2, 2)).astype(np.float32)
    tprune.l1_unstructured(tm, "weight", amount=20, importance_scores=torch.from_numpy(scores))
    nprune.l1_unstructured(nm, "weight", amount=20, importance_scores=ng.tensor(scores))
    tprune.ln_structured(tm, "weight", amount=2, n=1, dim=0,
                         importance_scores=torch.from_numpy(scores))
    nprune.ln_structured(nm, "weight", amount=2, n=1, dim=0, importance_scores=ng.tensor(scores))
    _same_state(tm, nm)
    tprune.custom_from_mask(tm, "bias", mask=torch.tensor([0, 1, 0, 1, 1]))
    nprune.custom_from_mask(nm, "bias", mask=ng.tensor([0, 1, 0, 1, 1]))
    _same_state(tm, nm, "bias")
    assert nm.bias_mask.dtype == ng.float32
    with pytest.raises(AssertionError, match="importance_scores should have the same shape"):
        nprune.l1_unstructured(nm, "weight", amount=1, importance_scores=ng.ones(3))


def test_a_method_prunes_a_tensor_with_prune():
    t = np.random.default_rng(8).standard_normal((4, 5)).astype(np.float32)
    mask = np.ones((4, 5), np.float32)
    mask[0, :3] = 0
    tout = tprune.L1Unstructured(amount=6).prune(torch.from_numpy(t), torch.from_numpy(mask))
    nout = nprune.L1Unstructured(amount=6).prune(ng.tensor(t), ng.tensor(mask))
    np.testing.assert_array_equal(_np(nout), _np(tout))
    tout = tprune.LnStructured(amount=1, n=2, dim=0).prune(torch.from_numpy(t))
    nout = nprune.LnStructured(amount=1, n=2, dim=0).prune(ng.tensor(t))
    np.testing.assert_array_equal(_np(nout), _np(tout))


def test_is_pruned_looks_into_submodules():
    net = ng.nn.Sequential(ng.nn.Linear(3, 3), ng.nn.ReLU(), ng.nn.Linear(3, 2))
    assert not nprune.is_pruned(net)
    nprune.identity(net[2], "bias")
    assert nprune.is_pruned(net)
    np.testing.assert_array_equal(_np(net[2].bias_mask), np.ones(2, np.float32))


def _error(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize(("fn", "kwargs"), [
    ("l1_unstructured", {"amount": -1}),
    ("l1_unstructured", {"amount": 1.5}),
    ("l1_unstructured", {"amount": -0.1}),
    ("l1_unstructured", {"amount": "0.3"}),
    ("l1_unstructured", {"amount": None}),
    ("random_unstructured", {"amount": 25}),
    ("random_structured", {"amount": 7, "dim": 1}),
    ("random_structured", {"amount": 1, "dim": 2}),
    ("ln_structured", {"amount": 5, "n": 2, "dim": 0}),
    ("ln_structured", {"amount": 1, "n": 2, "dim": 5}),
])
def test_errors_as_torch(fn, kwargs):
    tm, nm = _pair()
    expected = _error(getattr(tprune, fn), tm, "weight", **kwargs)
    assert expected is not None
    assert _error(getattr(nprune, fn), nm, "weight", **kwargs) == expected
    # a failed pruning leaves the module as it was (torch rolls it back too)
    assert _layout(nm) == _layout(tm)


def test_structured_pruning_of_a_vector_is_an_error_as_torch():
    tm, nm = _pair()
    expected = _error(tprune.random_structured, tm, "bias", amount=1, dim=0)
    assert expected[0] is ValueError
    assert _error(nprune.random_structured, nm, "bias", amount=1, dim=0) == expected
    assert _layout(nm) == _layout(tm) == (["weight", "bias"], [], ["weight", "bias"], [])


def test_container_checks_as_torch():
    method = nprune.L1Unstructured(amount=1)
    method._tensor_name = "weight"
    container = nprune.PruningContainer(method)
    assert len(container) == 1 and container[0] is method and list(container) == [method]
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        container.add_pruning_method(object())
    other = nprune.RandomUnstructured(amount=1)
    other._tensor_name = "bias"
    with pytest.raises(ValueError, match="Can only add pruning methods acting on"):
        container.add_pruning_method(other)
    with pytest.raises(TypeError):
        nprune.BasePruningMethod()  # abstract: compute_mask is missing


def test_the_module_paths():
    import numbagrad.nn.utils.prune as by_path  # noqa: PLC0415 - the import path is the test
    from numbagrad.nn.utils import prune as by_name  # noqa: PLC0415

    # reachable after `import numbagrad` alone (torch's needs `import torch.nn.utils.prune`)
    assert by_path is by_name is ng.nn.utils.prune
    assert sorted(nprune.__all__) == sorted(n for n in dir(tprune) if not n.startswith("_")
                                            and n not in {"ABC", "Iterable", "abstractmethod",
                                                          "numbers", "torch"})
