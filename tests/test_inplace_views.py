"""In-place ops through views of tensors in a graph, against torch 2.13: the base takes the
view's new values (CopySlices), the view is recorded again over the base's new node
(AsStridedBackward0), saved values changed that way raise torch's error, and the
gradients, values and node names are torch's."""

import itertools

import numpy as np
import pytest
from torch_oracle import same_as_torch

pytest.importorskip("torch")

VIEWS = {
    "slice": lambda x: x[0:2],
    "t": lambda x: x.t(),
    "select": lambda x: x[1],
    "view": lambda x: x.view(-1),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "diagonal": lambda x: x.diagonal(),
    "narrow": lambda x: x.narrow(1, 0, 2),
}
USERS = {  # what the forward does with the view before the in-place change
    "mul_self": lambda v: v * v,
    "exp": lambda v: v.exp(),
    "pow": lambda v: v ** 3,
    "sum": lambda v: v.sum() * 1.0,
    "add": lambda v: v + 1,
}
CHANGES = {  # (what the base is, the in-place change)
    "leaf_under_no_grad": ("leaf", lambda x, v: x.mul_(2)),
    "view_under_no_grad": ("leaf", lambda x, v: v.add_(1)),
    "non_leaf": ("non_leaf", lambda x, v: x.add_(1)),
    "through_the_view": ("non_leaf", lambda x, v: v.mul_(3)),
}


def _grad(t):
    return None if t.grad is None else np.round(t.grad.numpy(), 10).tolist()


@pytest.mark.parametrize("view,use,change", list(itertools.product(VIEWS, USERS, CHANGES)))
def test_saved_views_and_in_place_changes_as_torch(view, use, change):
    kind, modify = CHANGES[change]

    def run(lib):
        leaf = lib.tensor(np.arange(9.).reshape(3, 3) / 10 + 0.1, dtype=lib.float64,
                          requires_grad=True)
        x = leaf if kind == "leaf" else leaf * 1.5
        v = VIEWS[view](x)
        y = USERS[use](v)
        if kind == "leaf":
            with lib.no_grad():
                modify(x, v)
        else:
            modify(x, v)
        y.sum().backward()
        return _grad(leaf)
    same_as_torch(run)


def _name(t):
    return None if t.grad_fn is None else t.grad_fn.name()


WRITES = {
    "mul_": lambda lib, y: y[:, 1:].mul_(2),
    "relu_inplace": lambda lib, y: lib.nn.functional.relu(y[0], inplace=True),
    "add_row": lambda lib, y: y[2].add_(y[0]),
    "copy_into_transpose": lambda lib, y: y.t()[0].copy_(lib.ones(3, dtype=lib.float64)),
    "zero_": lambda lib, y: y.narrow(0, 0, 1).zero_(),
    "view_of_view_sin_": lambda lib, y: y[1:].t()[2].sin_(),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_writes_through_views_as_torch(name):
    def run(lib):
        leaf = lib.tensor(np.arange(9.).reshape(3, 3) / 10 + 0.1, dtype=lib.float64,
                          requires_grad=True)
        y = leaf * 1.5
        WRITES[name](lib, y)
        (y * y).sum().backward()
        return _grad(leaf), _name(y), np.round(y.detach().numpy(), 10).tolist()
    same_as_torch(run)


def test_node_names_and_a_view_used_after_the_change():
    def run(lib):
        leaf = lib.tensor(np.arange(12.).reshape(3, 4) / 7, dtype=lib.float64,
                          requires_grad=True)
        y = leaf * 1.0
        v = y[:, :2]
        v.add_(1)
        names = _name(y), _name(v)
        ((v * v).sum() + y.sum()).backward()
        return names, _grad(leaf), v._version, y._version
    same_as_torch(run)


def test_a_plain_base_takes_the_graph_of_what_is_written():
    def run(lib):
        w = lib.tensor([1., 2., 3.], dtype=lib.float64, requires_grad=True)
        y = lib.zeros(2, 3, dtype=lib.float64)
        y[1].copy_(w * 2)
        (y ** 2).sum().backward()
        return _name(y), _grad(w), y.requires_grad
    same_as_torch(run)


def test_float32_value_added_into_a_float64_view():
    def run(lib):
        y = lib.zeros(2, 3, dtype=lib.float64, requires_grad=True) * 1
        w = lib.tensor([1., 2., 3.], requires_grad=True)
        y[0].add_(w)
        y.sum().backward()
        return _grad(w), _name(y), str(w.grad.dtype)
    same_as_torch(run)


def test_relu_inplace_module_on_a_view_of_a_layer_output():
    def run(lib):
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 6).double()
        h = lin(lib.tensor(np.linspace(-1, 1, 8).reshape(2, 4), dtype=lib.float64))
        lib.nn.ReLU(inplace=True)(h[:, :3])
        h.sum().backward()
        return _grad(lin.weight), _name(h)
    same_as_torch(run)


def test_writing_through_an_expanded_view_is_torchs_error():
    def run(lib):
        y = lib.ones(3, dtype=lib.float64, requires_grad=True) * 2
        y.unsqueeze(0).expand(2, 3).mul_(2)
    same_as_torch(run)


# values changed without the tensor's own in-place op in a graph: under no_grad, through a
# view, or through a detach() / .data alias; later uses see the new values (as torch reads
# the memory), and the ops that saved the old ones raise torch's error
def _x(lib):
    return lib.tensor([1., 2., 3.], dtype=lib.float64, requires_grad=True)


CHANGED = {
    "leaf_through_detach_then_used": lambda lib, x: (x.detach().add_(1), (x * x).sum()),
    "nonleaf_through_detach_then_used": lambda lib, x: (y := x * 2, y.detach().add_(1),
                                                        (y * y).sum()),
    "nonleaf_through_data_then_used": lambda lib, x: (y := x.exp(), y.data.mul_(2),
                                                      (y * x).sum()),
    "nonleaf_view_of_detach_then_used": lambda lib, x: (y := x * 2, y.detach()[1:].mul_(3),
                                                        (y * y).sum()),
    "nonleaf_under_no_grad_then_used": lambda lib, x: (y := x * 2, _no_grad(lib, y.add_, 1),
                                                       (y * y).sum()),
    "nonleaf_setitem_under_no_grad": lambda lib, x: (y := x * 2,
                                                     _no_grad(lib, y.__setitem__, 0, 5.0),
                                                     (y * y).sum()),
    "nonleaf_view_under_no_grad": lambda lib, x: (y := x * 2,
                                                  _no_grad(lib, y[1:].mul_, 3),
                                                  (y * y).sum()),
    "saved_then_changed_through_detach": lambda lib, x: (y := x * 2, z := (y * y).sum(),
                                                         y.detach().add_(1), z),
    "leaf_saved_then_changed_through_detach": lambda lib, x: (z := (x * x).sum(),
                                                              x.detach().add_(1), z),
    "exp_output_saved_then_changed_under_no_grad": lambda lib, x: (
        y := x.exp(), _no_grad(lib, y.add_, 1), (y * y).sum()),
}


def _no_grad(lib, fn, *args):
    with lib.no_grad():
        fn(*args)


def test_retained_gradient_follows_an_in_place_op():
    def run(lib):
        x = _x(lib)
        y = x * 2
        y.retain_grad()
        y.add_(1)
        (y * y).sum().backward()
        return _grad(y), _grad(x)
    same_as_torch(run)


DATA = {  # .data: an alias with a counter of its own, as torch's
    "leaf_data_changed_after_saving": lambda lib, x: (z := (x * x).sum(), x.data.add_(1), z),
    "leaf_data_assigned_then_used": lambda lib, x: (_assign(x, x.detach() * 3),
                                                    (x * x).sum()),
    "nonleaf_data_assigned_then_used": lambda lib, x: (y := x * 2, _assign(y, y.detach() + 1),
                                                       (y * y).sum()),
    "nonleaf_data_assigned_after_saving": lambda lib, x: (y := x.exp(), z := (y * y).sum(),
                                                          _assign(y, y.detach() * 0), z),
    "nonleaf_data_view_changed": lambda lib, x: (y := x.sin(), y.data[1:].mul_(2),
                                                 (y * x).sum()),
}


def _assign(t, value):
    t.data = value


@pytest.mark.parametrize("name", sorted(CHANGED) + sorted(DATA))
def test_values_changed_outside_the_graph_as_torch(name):
    def run(lib):
        x = _x(lib)
        loss = {**CHANGED, **DATA}[name](lib, x)[-1]
        loss.backward()
        return _grad(x), round(loss.item(), 10)
    same_as_torch(run)


@pytest.mark.parametrize("value", ["wrong_size", "wrong_dtype", "wrong_int_dtype"])
def test_assigning_a_wrong_grad_is_torchs_error(value):
    def run(lib):
        x = lib.ones(2, 3, requires_grad=True)
        x.grad = {"wrong_size": lambda: lib.zeros(3),
                  "wrong_dtype": lambda: lib.zeros(2, 3, dtype=lib.float64),
                  "wrong_int_dtype": lambda: lib.zeros(2, 3, dtype=lib.int32)}[value]()
    same_as_torch(run)


def test_detaching_a_view_in_place_is_torchs_error():
    def run(lib):
        y = lib.ones(2, 3, requires_grad=True) * 1
        y[0].detach_()
    same_as_torch(run)


def test_compiled_function_changing_a_value_outside_its_graph_runs_eagerly():
    """The replay would recompute the node from before the change: the trace says so and
    later calls run eagerly, with eager's (torch's) values."""
    import numbagrad as ng
    import numbagrad.func  # noqa: F401

    def f(x):
        y = x * 2
        y.detach().add_(1)
        return (y * y).sum()

    def eager(a):
        x = ng.tensor(a, requires_grad=True)
        v = f(x)
        v.backward()
        return v.item(), x.grad.numpy()
    vg = ng.compile(ng.func.value_and_grad(f))
    with pytest.warns(UserWarning, match="changed outside the graph"):
        vg(np.linspace(-1, 1, 6))
    for k in range(3):
        a = np.linspace(-1, 1, 6) + 0.1 * k
        value, grad = vg(a)
        want_value, want_grad = eager(a)
        assert np.isclose(float(value), want_value)
        np.testing.assert_allclose(np.asarray(grad), want_grad)


def test_modified_error_in_anomaly_mode_has_torchs_hint():
    def run(lib):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (anomaly mode's own warnings)
            with lib.autograd.detect_anomaly():
                x = lib.tensor([1., 2.], requires_grad=True)
                y = x * 2
                z = y * y
                y.add_(1)
                z.sum().backward()
    same_as_torch(run)


IN_PLACE_READS = {  # in-place ops whose derivative reads the value they change
    "mul_": lambda s, a, b: s.mul_(b),
    "mul_twice": lambda s, a, b: (s.mul_(b), s.mul_(a)),
    "div_": lambda s, a, b: s.div_(b),
    "pow_": lambda s, a, b: s.pow_(b),
    "saved_before": lambda s, a, b: (s * b, s.mul_(b))[0],  # an earlier saver fails
    "exp_then_mul_": lambda s, a, b: s.exp_().mul_(2.0),  # exp_'s saved result changed
}


@pytest.mark.parametrize("change", IN_PLACE_READS, ids=list(IN_PLACE_READS))
def test_an_in_place_op_reads_the_value_before_its_change(change):
    """torch saves the value an in-place op's derivative reads before changing it (a clone):
    that op's backward works; an earlier op that saved the value fails."""
    def run(lib):
        a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([4.0, 5.0, 0.5], dtype=lib.float64, requires_grad=True)
        s = a + b
        extra = IN_PLACE_READS[change](s, a, b)
        loss = s.sum() + (extra.sum() if isinstance(extra, type(s)) else 0.0)
        loss.backward()
        return loss.item(), _grad(a), _grad(b)
    same_as_torch(run)
