"""torch.autograd.profiler and torch.profiler: the tutorial snippets run, the events are the
ops run (counts as torch's), ranges contain their ops, the table has torch's columns, the
Chrome trace is JSON, and a profile leaves nothing behind once it stops."""

import json
import re
import sys
import threading
import types

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.nn.functional as F  # noqa: N812 - torch's idiom

torch = pytest.importorskip("torch")


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(10, 5), lib.nn.ReLU())


def _run(lib, model, x):
    y = model(x)
    y.sum().backward()
    return y


def _counts(prof):
    return {e.key: e.count for e in prof.key_averages()}


def _header(table):
    """The column names of a profiler table (its second line)."""
    return re.split(r"\s{2,}", table.splitlines()[1].strip())


def _torch_table(sort_by, shapes):
    model, x = _model(torch), torch.randn(4, 10)
    with torch.autograd.profiler.profile(record_shapes=shapes) as prof:
        _run(torch, model, x)
    return prof.key_averages(group_by_input_shape=shapes).table(sort_by=sort_by, row_limit=10)


def test_the_tutorial_snippet_runs_and_lists_the_model_ops():
    model, x = _model(ng), ng.randn(4, 10)
    _run(ng, model, x)  # first use: compile outside the profile
    with ng.autograd.profiler.profile(use_cuda=False) as prof:
        _run(ng, model, x)
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
    counts = _counts(prof)
    for key in ("aten::linear", "aten::relu", "aten::sum", "numbagrad::backward"):
        assert counts[key] == 1, (key, counts)
        assert key in table
    assert table.rstrip().splitlines()[-1].startswith("Self CPU time total: ")


@pytest.mark.parametrize("sort_by", ["self_cpu_time_total", "cpu_time_total", "count",
                                     "cpu_time"])
@pytest.mark.parametrize("shapes", [False, True])
def test_the_table_has_torchs_columns(sort_by, shapes):
    model, x = _model(ng), ng.randn(4, 10)
    with ng.autograd.profiler.profile(record_shapes=shapes) as prof:
        _run(ng, model, x)
    ours = prof.key_averages(group_by_input_shape=shapes).table(sort_by=sort_by, row_limit=10)
    theirs = _torch_table(sort_by, shapes)
    assert _header(ours) == _header(theirs)
    # the separator lines: the number columns are torch's 12 wide, two spaces apart
    assert ours.splitlines()[0].split()[1:7] == theirs.splitlines()[0].split()[1:7]


def test_counts_match_torchs():
    def script(lib):
        a, b = lib.ones(3, 3), lib.ones(3, 3)
        for _ in range(3):
            c = a + b
        for _ in range(2):
            c = lib.mm(c, b)
        lib.relu(c)
        c.relu()
        return c.sum()

    script(ng)
    counts = {}
    for lib in (ng, torch):
        with lib.autograd.profiler.profile() as prof:
            script(lib)
        counts[lib] = _counts(prof)
    for key in ("aten::add", "aten::mm", "aten::relu", "aten::sum", "aten::ones"):
        assert counts[ng][key] == counts[torch][key], (key, counts[ng], counts[torch])
    assert counts[ng]["aten::add"] == 3 and counts[ng]["aten::relu"] == 2


def test_an_alias_forwarding_to_its_op_is_one_event():
    x = ng.randn(3)
    with ng.autograd.profiler.profile() as prof:
        F.relu(x)
    assert _counts(prof) == {"aten::relu": 1}


def test_record_function_ranges_contain_their_ops():
    x = ng.randn(4, 4, requires_grad=True)
    with ng.autograd.profiler.profile() as prof:
        with ng.autograd.profiler.record_function("outer"):
            y = x @ x
            with ng.autograd.profiler.record_function("inner"):
                z = y.exp().sum()
        z.backward()
    events = prof.events()
    by_name = {e.name: e for e in events}
    outer, inner = by_name["outer"], by_name["inner"]
    assert [c.name for c in outer.cpu_children] == ["aten::matmul", "inner"]
    assert [c.name for c in inner.cpu_children] == ["aten::exp", "aten::sum"]
    assert by_name["numbagrad::backward"].cpu_parent is None
    for child in inner.cpu_children:
        assert child.cpu_parent is inner
        assert inner.time_range.start <= child.time_range.start
        assert child.time_range.end <= inner.time_range.end
    for e in list(events) + list(prof.key_averages()):
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - sum(c.cpu_time_total for c in outer.cpu_children))


def test_record_function_as_a_decorator_and_outside_a_profile():
    @ng.autograd.profiler.record_function("step")
    def step(x):
        return (x * 2).sum()

    x = ng.ones(3)
    step(x)  # no profile: nothing recorded, nothing kept for the next one
    with ng.autograd.profiler.record_function("before"):
        pass
    with ng.autograd.profiler.profile() as prof:
        step(x)
        step(x)
    assert _counts(prof) == {"step": 2, "aten::mul": 2, "aten::sum": 2}


def test_ops_under_no_grad_are_recorded():
    x = ng.randn(3, requires_grad=True)
    with ng.autograd.profiler.profile() as prof:
        with ng.no_grad():
            x.tanh()
    assert _counts(prof) == {"aten::tanh": 1}


def test_layers_holding_their_function_are_timed():
    # nn.Tanh's forward calls the function it was made with (a closure), nn.MaxPool1d a
    # staticmethod of its class
    x = ng.randn(1, 2, 8)
    layers = [ng.nn.Tanh(), ng.nn.Sigmoid(), ng.nn.MaxPool1d(2)]
    with ng.autograd.profiler.profile() as prof:
        for layer in layers:
            layer(x)
    top = [e.name for e in prof.events() if e.cpu_parent is None]
    assert top == ["aten::tanh", "aten::sigmoid", "aten::max_pool1d"]


def test_optimizer_steps_are_ranges_named_as_torchs():
    keys = {}
    for lib in (ng, torch):
        model = _model(lib)
        # (not AdamW: its first instance gives its class a step, which the stub test sees)
        opt = lib.optim.Adam(model.parameters())
        _run(lib, model, lib.ones(2, 10))
        with lib.autograd.profiler.profile() as prof:
            opt.zero_grad()
            _run(lib, model, lib.ones(2, 10))
            opt.step()
        keys[lib] = [e.key for e in prof.key_averages() if e.key.startswith("Optimizer.")]
    assert keys[ng] == keys[torch] == ["Optimizer.zero_grad#Adam.zero_grad",
                                       "Optimizer.step#Adam.step"]


def test_an_optimizer_made_while_profiling_keeps_its_step_hooks():
    from numbagrad.optim import optimizer
    hooks = (dict(optimizer._global_optimizer_pre_hooks),
             dict(optimizer._global_optimizer_post_hooks))
    calls = []
    model = _model(ng)
    with ng.autograd.profiler.profile() as prof:
        opt = ng.optim.RMSprop(model.parameters())  # its class's step is hooked now
        opt.register_step_pre_hook(lambda *a: calls.append("pre"))
        _run(ng, model, ng.ones(2, 10))
        opt.step()
    _run(ng, model, ng.ones(2, 10))
    opt.step()
    assert calls == ["pre", "pre"]
    assert _counts(prof)["Optimizer.step#RMSprop.step"] == 1
    assert (optimizer._global_optimizer_pre_hooks, optimizer._global_optimizer_post_hooks) \
        == hooks
    fn = ng.optim.RMSprop.step
    while fn is not None:  # no profiler wrapper inside the class's hooked step
        assert fn.__code__.co_name != "profiled"
        fn = getattr(fn, "__wrapped__", None)


def test_input_shapes_are_torchs():
    model_ng, model_t = _model(ng), _model(torch)
    shapes = {}
    for lib, model in ((ng, model_ng), (torch, model_t)):
        with lib.autograd.profiler.profile(record_shapes=True) as prof:
            model(lib.randn(4, 10))
        shapes[lib] = {e.key: e.input_shapes for e in
                       prof.key_averages(group_by_input_shape=True)}
    assert shapes[ng]["aten::linear"] == shapes[torch]["aten::linear"] == \
        [[4, 10], [5, 10], [5]]
    assert shapes[ng]["aten::relu"] == shapes[torch]["aten::relu"] == [[4, 5]]


def test_torch_profiler_snippet():
    from numbagrad.profiler import ProfilerActivity, profile, record_function
    assert ProfilerActivity.CUDA is not ProfilerActivity.CPU
    model, x = _model(ng), ng.randn(4, 10)
    seen = []
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 on_trace_ready=seen.append) as prof:
        with record_function("model_inference"):
            model(x)
    table = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total",
                                                               row_limit=10)
    assert seen == [prof]
    assert "Input Shapes" in _header(table)
    assert "[[4, 10], [5, 10], [5]]" in table
    rows = table.splitlines()[3:-2]
    assert rows[0].split()[0] == "model_inference"  # the whole range: the largest total
    assert {e.name for e in prof.events()} >= {"model_inference", "aten::linear", "aten::relu"}


def test_table_sorting_row_limit_and_header():
    x = ng.ones(2)
    with ng.autograd.profiler.profile() as prof:
        for _ in range(3):
            x.exp()
        x.sin()
        for _ in range(2):
            x.cos()
    table = prof.key_averages().table(sort_by="count", row_limit=2, header="TITLE")
    lines = table.splitlines()
    assert lines[1] == "TITLE" and set(lines[0]) == {"="}
    rows = [ln.split() for ln in lines[5:-2]]
    assert [(r[0], r[-1]) for r in rows] == [("aten::exp", "3"), ("aten::cos", "2")]


def test_export_chrome_trace(tmp_path):
    x = ng.ones(2, 2)
    with ng.autograd.profiler.profile(record_shapes=True) as prof:
        with ng.autograd.profiler.record_function("block"):
            ng.mm(x, x)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = {e["name"]: e for e in trace["traceEvents"]}
    assert set(events) == {"block", "aten::mm"}
    assert events["aten::mm"]["ph"] == "X" and events["aten::mm"]["dur"] >= 0
    assert events["aten::mm"]["args"]["Input Dims"] == [[2, 2], [2, 2]]
    assert events["block"]["cat"] == "user_annotation"
    assert events["block"]["ts"] <= events["aten::mm"]["ts"]


def _namespace_attributes():
    spaces = [ng.Tensor, ng, F, ng.linalg, ng.special, ng.autograd, ng.nn.ReLU,
              ng.nn.MaxPool1d, ng.optim.Optimizer, ng.optim.Adam]
    return {(id(s), k): v for s in spaces for k, v in vars(s).items()}


def test_profiling_off_leaves_no_trace():
    before = _namespace_attributes()
    cells = [c.cell_contents for c in ng.nn.ReLU.forward.__closure__]

    def script():
        ng.manual_seed(0)
        model = _model(ng)
        x = ng.randn(4, 10, requires_grad=True)
        y = _run(ng, model, x)
        return y.detach().numpy(), x.grad.numpy(), model[0].weight.grad.numpy()

    plain = script()
    with ng.autograd.profiler.profile(record_shapes=True) as prof:
        profiled = script()
        assert ng.Tensor.__add__ is not before[(id(ng.Tensor), "__add__")]
    after = script()
    for a, b, c in zip(plain, profiled, after):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    assert _namespace_attributes() == before
    assert [c.cell_contents for c in ng.nn.ReLU.forward.__closure__] == cells
    n = len(prof.events())
    script()
    assert len(prof.events()) == n  # nothing recorded once stopped


def test_a_module_imported_while_profiling_gets_the_originals(monkeypatch):
    module = types.ModuleType("imported_while_profiling")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    relu, exp = ng.relu, ng.Tensor.exp
    with ng.autograd.profiler.profile():
        module.relu, module.exp = ng.relu, ng.Tensor.exp  # as `from numbagrad import relu`
        assert module.relu is not relu
    assert module.relu is relu and module.exp is exp


def test_an_exception_inside_the_profile_restores_everything():
    before = _namespace_attributes()
    with pytest.raises(ValueError):
        with ng.autograd.profiler.profile():
            ng.ones(2).exp()
            raise ValueError
    assert _namespace_attributes() == before


def test_disabled_profile_is_a_no_op():
    before = _namespace_attributes()
    p = ng.autograd.profiler.profile(enabled=False)
    with p as bound:
        assert _namespace_attributes() == before
        ng.ones(2).exp()
    assert bound is None  # as torch's
    with pytest.raises(RuntimeError, match="didn't finish"):
        p.key_averages()


def test_nested_profiles_each_get_their_events():
    x = ng.ones(2)
    with ng.autograd.profiler.profile() as outer:
        x.exp()
        with ng.autograd.profiler.profile() as inner:
            x.sin()
        x.cos()
    assert _counts(inner) == {"aten::sin": 1}
    assert _counts(outer) == {"aten::exp": 1, "aten::sin": 1, "aten::cos": 1}


def test_each_thread_nests_its_own_events():
    x = ng.ones(2)
    with ng.autograd.profiler.profile() as prof:
        with ng.autograd.profiler.record_function("main"):
            t = threading.Thread(target=lambda: x.sin())
            t.start()
            t.join()
    sin = next(e for e in prof.events() if e.name == "aten::sin")
    assert sin.cpu_parent is None and sin.thread != prof.events()[0].thread


def test_modules_expose_torchs_names():
    assert isinstance(ng.autograd.profiler, types.ModuleType)
    for name in ("profile", "record_function"):
        assert getattr(ng.profiler, name) is not None
        assert getattr(ng.autograd.profiler, name).__doc__
    assert ng.profiler.record_function is ng.autograd.profiler.record_function
