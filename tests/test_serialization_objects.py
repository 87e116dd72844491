"""numbagrad.save of whole objects (modules, optimizers), loaded as torch.load does: refused by
default (weights_only=True) with torch's error, loaded when allowed (weights_only=False, or
allowlisted globals), tensors shared as they were."""

import io
import os
import pickle

import numpy as np
import pytest

import numbagrad as ng


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def _saved(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    return buf


def test_a_whole_module_loads_as_torchs_does():
    torch = pytest.importorskip("torch")
    ours, theirs = _model(ng), _model(torch)
    got = ng.load(_saved(ng, ours), weights_only=False)
    want = torch.load(_saved(torch, theirs), weights_only=False)
    assert type(got) is type(ours) and repr(got) == repr(want)
    x = np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32)
    np.testing.assert_allclose(got(ng.tensor(x)).detach().numpy(),
                               want(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    assert all(p.requires_grad for p in got.parameters())


def test_weights_only_refuses_a_whole_module_with_torchs_error():
    torch = pytest.importorskip("torch")
    with pytest.raises(pickle.UnpicklingError) as ours:
        ng.load(_saved(ng, _model(ng)))
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(_saved(torch, _model(torch)))
    for e in (ours, theirs):
        assert "Weights only load failed" in str(e.value)
        assert "Unsupported global: GLOBAL" in str(e.value)
        assert "Sequential was not an allowed global by default" in str(e.value)


def test_allowlisted_globals_load_with_weights_only():
    buf = _saved(ng, _model(ng))
    classes = [ng.nn.Sequential, ng.nn.Linear, ng.nn.ReLU]
    with ng.serialization.safe_globals(classes):
        assert type(ng.load(buf)) is ng.nn.Sequential
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):  # the context is over
        ng.load(buf)
    try:
        ng.serialization.add_safe_globals(classes)
        assert ng.serialization.get_safe_globals() == classes
        buf.seek(0)
        assert type(ng.load(buf)) is ng.nn.Sequential
    finally:
        ng.serialization.clear_safe_globals()
    assert ng.serialization.get_safe_globals() == []


class _Payload:
    """An object whose unpickling would run a command."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_refused_pickle_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    buf = _saved(ng, {"w": ng.ones(2), "x": _Payload(marker)})
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL posix.system|GLOBAL os.system"):
        ng.load(buf)
    assert not marker.exists()


def test_model_optimizer_and_weight_stay_one_object():
    model = _model(ng)
    opt = ng.optim.Adam(model.parameters(), lr=0.1)
    x = ng.tensor(np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32))
    model(x).sum().backward()
    opt.step()
    loaded = ng.load(_saved(ng, {"model": model, "opt": opt, "w": model[0].weight}),
                     weights_only=False)
    m2, o2 = loaded["model"], loaded["opt"]
    assert loaded["w"] is m2[0].weight
    assert o2.param_groups[0]["params"][0] is m2[0].weight
    for m, o in ((model, opt), (m2, o2)):  # both continue alike
        o.zero_grad()
        m(x).sum().backward()
        o.step()
    for p, q in zip(model.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


@pytest.mark.parametrize("name", ["nn.functional.relu", "sin", "add", "special.expit",
                                  "nn.functional.gelu"])
def test_functions_pickle_by_reference(name):
    fn = ng
    for part in name.split("."):
        fn = getattr(fn, part)
    assert pickle.loads(pickle.dumps(fn)) is fn
