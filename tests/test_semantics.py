"""backward() semantics and errors as torch defines them: accumulation, retain_graph, inputs=,
leaf and non-leaf .grad, grad modes, in-place checks, dtypes, threads."""

import threading
import warnings

import numpy as np
import pytest
from oracle import both, same

import numbagrad as ng

torch = pytest.importorskip("torch")


def test_grad_is_none_until_backward_reaches_it():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    unused = ng.tensor(1.0, requires_grad=True)
    y = (x * x).sum()
    assert x.grad is None
    y.backward()
    assert unused.grad is None
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_gradients_accumulate_across_backward_calls():
    def run(lib):
        x = lib.tensor(2.0, requires_grad=True)
        (x * x).backward()
        (x * x * x).backward()
        return repr(x.grad)
    assert same(run) == "tensor(16.)"


def test_retain_graph_allows_a_second_backward_and_accumulates():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        s = (x * x).sum()
        s.backward(retain_graph=True)
        s.backward()
        return repr(x.grad)
    assert same(run) == "tensor([ 4.,  8., 12.])"


def test_second_backward_through_freed_graph_raises_torchs_message():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        s = (x * x).sum()
        s.backward()
        s.backward()
    ours = same(run)
    assert "Trying to backward through the graph a second time" in ours


def test_recording_continues_after_a_failed_backward_whose_traceback_is_kept():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    s = (x * x).sum()
    s.backward(retain_graph=True)
    h = x * 3
    try:
        h.backward()  # non-scalar: fails before the sweep
    except RuntimeError as e:
        kept = e  # a live traceback, as in an interactive session
    s2 = (x * x).sum()
    s.backward()
    with pytest.raises(RuntimeError) as info:
        s.backward()  # freed: fails inside the sweep
    kept = info  # noqa: F841 - keep the traceback alive while recording more
    for _ in range(200):  # grows the tape's buffers
        h = h * 1.0
    h.sum().backward()
    s2.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2 + 2 + 3 + 2, 4 + 4 + 3 + 4])


def test_second_backward_through_ops_that_save_nothing_is_allowed():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        s = (x + 1).sum()
        s.backward()
        s.backward()
        return repr(x.grad)
    assert same(run) == "tensor([2., 2.])"


def test_inputs_restricts_accumulation():
    def run(lib):
        a = lib.tensor(2.0, requires_grad=True)
        b = lib.tensor(3.0, requires_grad=True)
        (a * b).backward(inputs=[a])
        return repr(a.grad), repr(b.grad)
    assert same(run) == ("tensor(3.)", "None")


def test_inputs_may_name_a_non_leaf():
    def run(lib):
        a = lib.tensor(2.0, requires_grad=True)
        h = a * 3
        (h * h).backward(inputs=[h])
        return repr(h.grad), repr(a.grad)
    assert same(run) == ("tensor(12.)", "None")


def test_nonscalar_backward_needs_gradient():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).backward()
    assert same(run) == "RuntimeError: grad can be implicitly created only for scalar outputs"


def test_gradient_argument_weights_the_outputs():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * x).backward(lib.tensor([1.0, 0.5, -1.0]))
        return repr(x.grad)
    assert same(run) == "tensor([ 2.,  2., -6.])"


def test_gradient_shape_mismatch():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).backward(lib.tensor([1.0, 2.0, 3.0]))
    ours = same(run)
    assert ours.startswith("RuntimeError: Mismatch in shape")


def test_backward_on_tensor_without_grad():
    def run(lib):
        lib.tensor(2.0).backward()
    assert same(run) == ("RuntimeError: element 0 of tensors does not require grad and does not "
                         "have a grad_fn")


def test_backward_from_a_leaf():
    def run(lib):
        x = lib.tensor(2.0, requires_grad=True)
        x.backward()
        return repr(x.grad)
    assert same(run) == "tensor(1.)"


def test_non_leaf_grad_is_none_with_a_warning_unless_retained():
    x = ng.tensor(2.0, requires_grad=True)
    h = x * 3
    k = x * 4
    k.retain_grad()
    (h * k).backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert h.grad is None
    assert len(caught) == 1 and "not a leaf Tensor" in str(caught[0].message)
    assert k.grad.item() == pytest.approx(6.0)
    assert not h.is_leaf and x.is_leaf


def test_no_grad_records_nothing_and_nests_with_enable_grad():
    x = ng.tensor(2.0, requires_grad=True)
    with ng.no_grad():
        y = x * 2
        with ng.enable_grad():
            z = x * 2
    assert y.grad_fn is None and not y.requires_grad
    assert z.grad_fn is not None


def test_no_grad_and_set_grad_enabled_as_decorators():
    x = ng.tensor(2.0, requires_grad=True)

    @ng.no_grad()
    def f():
        return x * 2

    assert f().grad_fn is None
    assert ng.is_grad_enabled()
    with ng.set_grad_enabled(False):
        assert (x * 2).grad_fn is None
    assert ng.is_grad_enabled()

    @ng.set_grad_enabled(False)
    def g():
        return x * 2

    assert ng.is_grad_enabled()  # decorating does not switch grad mode off outside g
    assert g().grad_fn is None and ng.is_grad_enabled()

    @ng.inference_mode(False)
    def h():
        return x * 2

    with ng.no_grad():
        assert h().grad_fn is not None
    ng.set_grad_enabled(False)
    assert not ng.is_grad_enabled()
    ng.set_grad_enabled(True)


def test_grad_mode_is_thread_local():
    seen = []

    def worker():
        x = ng.tensor(1.0, requires_grad=True)
        seen.append((x * 2).grad_fn is not None)

    with ng.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == [True]


def test_requires_grad_rules():
    # torch's three wordings: requires_grad_(), the attribute, and factories (and Parameter)
    assert same(lambda lib: lib.tensor([1, 2]).requires_grad_()) == (
        "RuntimeError: only Tensors of floating point dtype can require gradients")
    assert same(lambda lib: setattr(lib.tensor([1, 2]), "requires_grad", True)) == (
        "RuntimeError: only Tensors of floating point and complex dtype can require gradients")
    assert same(lambda lib: lib.ones(2, dtype=lib.int64, requires_grad=True)) == (
        "RuntimeError: Only Tensors of floating point and complex dtype can require gradients")

    def nonleaf(lib):
        x = lib.tensor(1.0, requires_grad=True)
        (x * 2).requires_grad = False
    assert "you can only change requires_grad flags of leaf variables" in same(nonleaf)


def test_numpy_and_item_errors():
    def numpy_err(lib):
        lib.tensor([1.0], requires_grad=True).numpy()
    assert "Can't call numpy() on Tensor that requires grad" in same(numpy_err)
    assert same(lambda lib: lib.tensor([1.0, 2.0]).item()) == (
        "RuntimeError: a Tensor with 2 elements cannot be converted to Scalar")


def test_inplace_on_leaf_that_requires_grad():
    def run(lib):
        x = lib.tensor([1.0], requires_grad=True)
        x.add_(1)
    assert same(run) == ("RuntimeError: a leaf Variable that requires grad is being used in an "
                         "in-place operation.")


def test_inplace_on_non_leaf_is_recorded():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = x * 2
        z.mul_(3)
        z.sum().backward()
        return repr(z.grad_fn).split(" ")[0], repr(x.grad)
    assert same(run) == ("<MulBackward0", "tensor([6., 6.])")


def test_inplace_change_of_a_saved_output_is_detected():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.exp()
        y.add_(1)
        y.sum().backward()
    ours = same(run)
    assert "modified by an inplace operation" in ours and "output 0 of Exp" in ours


def test_inplace_change_of_a_saved_leaf_is_detected():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.no_grad():
            x.add_(1)
        w = x * x
        with lib.no_grad():
            x.mul_(2)
        w.sum().backward()
    assert "is at version 2; expected version 1 instead" in same(run)


def test_inplace_change_of_a_leaf_saved_on_an_older_tape_is_detected(monkeypatch):
    from numbagrad.core import tape as tape_mod
    monkeypatch.setattr(tape_mod, "FRESH_TAPE_NODES", 1)  # every new graph on a fresh tape

    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = x * x                # saved x on the first tape
        other = x * 3.0          # a second graph, on another tape
        with lib.no_grad():
            x.mul_(2)
        other.sum().backward()   # MulBackward0 with a number saves nothing: fine
        w.sum().backward()
    assert "is at version 1; expected version 0 instead" in same(run)


def test_leaf_changed_in_no_grad_then_reused_records_its_new_value():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = (x * x).sum()
        with lib.no_grad():
            x.mul_(3)
        b = (x * x).sum()
        b.backward()
        return repr(x.grad), a.item()
    assert same(run) == ("tensor([ 6., 12.])", 5.0)


def test_detach_and_from_numpy_share_memory():
    a = np.array([1.0, 2.0])
    t = ng.from_numpy(a)
    a[0] = 5.0
    assert t[0].item() == 5.0
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    d[1] = 7.0
    assert x[1].item() == 7.0 and not d.requires_grad


def test_default_dtype_and_promotion():
    assert same(lambda lib: str(lib.tensor([1.0]).dtype)) == "torch.float32"
    assert same(lambda lib: str((lib.tensor([1, 2]) * 2.5).dtype)) == "torch.float32"
    assert same(lambda lib: str((lib.tensor([1.0]) + lib.tensor(1.0, dtype=lib.float64)).dtype)) \
        == "torch.float32"
    assert same(lambda lib: str((lib.tensor(1.0) + lib.tensor(1.0, dtype=lib.float64)).dtype)) \
        == "torch.float64"
    assert same(lambda lib: str((lib.tensor([1, 2]) / lib.tensor([2, 2])).dtype)) == \
        "torch.float32"
    ng.set_default_dtype(ng.float64)
    try:
        assert ng.tensor([1.0]).dtype is ng.float64
    finally:
        ng.set_default_dtype(ng.float32)


def test_mixed_dtype_gradients_come_back_in_each_leafs_dtype():
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        (a * b).sum().backward()
        return str(a.grad.dtype), str(b.grad.dtype), a.grad.tolist(), b.grad.tolist()
    same(run)


def test_error_messages_of_shape_ops():
    for fn in (lambda lib: lib.ones(3, 4) + lib.ones(5),
               lambda lib: lib.ones(3, 4) @ lib.ones(3, 4),
               lambda lib: lib.ones(3, 4).view(5),
               lambda lib: lib.ones(3, 4).t().view(-1),
               lambda lib: lib.ones(3, 4)[5],
               lambda lib: lib.ones(3, 4)[0, 0, 0],
               lambda lib: lib.ones(3, 4).sum(5),
               lambda lib: lib.cat([lib.ones(3, 4), lib.ones(2, 3)]),
               lambda lib: lib.ones(3, 4).expand(2, 5),
               lambda lib: lib.mv(lib.ones(3, 4), lib.ones(5)),
               lambda lib: lib.dot(lib.ones(3), lib.ones(4))):
        ours, theirs = both(fn)
        assert isinstance(ours, str) and ours == theirs


@pytest.mark.parametrize("dtypes", [("float32", "float64", "float64"),
                                    ("float64", "float32", "float32"),
                                    ("float32", "float64", "float32"),
                                    ("float64", "float64", "float32")])
@pytest.mark.parametrize("op", ["addmm", "linear"])
def test_matrix_product_dtype_mismatch_is_torchs_error_not_a_promotion(op, dtypes):
    c_dt, a_dt, b_dt = dtypes

    def fn(lib):
        c = lib.ones(4, dtype=getattr(lib, c_dt))
        a = lib.ones(2, 3, dtype=getattr(lib, a_dt), requires_grad=True)
        b = lib.ones(3, 4, dtype=getattr(lib, b_dt), requires_grad=True)
        if op == "addmm":
            return lib.addmm(c, a, b)
        return lib.nn.functional.linear(a, b.t(), c)
    ours, theirs = both(fn)
    assert isinstance(ours, str) and ours == theirs


def test_graphs_whose_tensors_died_do_not_keep_growing_the_tape():
    """An evaluation loop without backward(): each dead graph's tape is let go."""
    from numbagrad.core import tape as tape_mod
    a = ng.tensor(1.0, requires_grad=True)
    tapes = set()
    for _ in range(100_000):
        y = a * 2.0 + 1.0
        tapes.add(y._tape.serial)
    assert len(y._tape) <= tape_mod.FRESH_TAPE_NODES + 2
    assert len(tapes) >= 3


def test_a_live_graph_keeps_its_tape_and_is_still_differentiable():
    a = ng.tensor(1.0, requires_grad=True)
    keep = a * 3.0
    for _ in range(100):
        y = a * 2.0
    total = keep + y
    total.backward()
    assert a.grad.item() == 5.0


def test_graphs_spanning_tapes_differentiate_through_bridges():
    """Tensors of an older graph (before a backward freed it, or a large one) combine with
    new ones; backward flows through every tape, and saved-value rules hold per tape."""
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 3.0                      # an older graph ...
        (a * a).sum().backward()         # ... a backward that frees another one
        k = (h * a).sum()                # combines the old h with a new op
        k.backward()
        return repr(a.grad), repr(k)
    assert same(run) == ("tensor([ 8., 16.])",
                         "tensor(15., grad_fn=<SumBackward0>)")


def test_backward_through_a_bridge_respects_inputs():
    def run(lib):
        a = lib.tensor(2.0, requires_grad=True)
        h = a * 3.0
        (a * 1.0).backward()
        out = h * h
        out.backward(inputs=[h, a])
        return repr(h.grad), repr(a.grad)
    assert same(run) == ("tensor(12.)", "tensor(37.)")


def test_floating_point_edge_cases_are_silent_as_in_torch():
    # in a fresh interpreter: pytest installs warning filters of its own in front of ours
    import subprocess
    import sys
    code = ("import numbagrad as ng; out = ng.tensor([1.0, 0.0]) / 0; "
            "print(out.tolist(), ng.log(ng.tensor([0.0])).item())")
    done = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "[inf, nan] -inf"
    assert "Warning" not in done.stderr


def test_four_threads_train_their_own_models_as_if_serially():
    """Each thread records on its own tape: concurrent training gives the serial gradients."""

    def train(seed, out):
        rng = np.random.default_rng(seed)
        X = ng.tensor(rng.standard_normal((64, 5)))
        y = ng.tensor(rng.standard_normal(64))
        w = ng.zeros(5, dtype=ng.float64, requires_grad=True)
        b = ng.zeros((), dtype=ng.float64, requires_grad=True)
        for _ in range(30):
            loss = ((X @ w + b - y) ** 2).mean()
            loss.backward()
            with ng.no_grad():
                w.sub_(0.1 * w.grad)
                b.sub_(0.1 * b.grad)
            w.grad.zero_()
            b.grad.zero_()
        out[seed] = (w.detach().numpy().copy(), float(loss))

    serial, threaded = {}, {}
    for s in range(4):
        train(s, serial)
    threads = [threading.Thread(target=train, args=(s, threaded)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in range(4):
        np.testing.assert_array_equal(serial[s][0], threaded[s][0])
        assert serial[s][1] == threaded[s][1]


def test_division_by_zero_in_a_derivative_gives_inf_or_nan_as_torch():
    """The compiled kernels follow IEEE (NumPy's error model), not Python's ZeroDivisionError."""
    torch = pytest.importorskip("torch")
    for lib_fn in (lambda lib, x: lib.log(x), lambda lib, x: x.sqrt(), lambda lib, x: 1 / x,
                   lambda lib, x: x.pow(0.5), lambda lib, x: x.norm()):
        grads = []
        for lib in (ng, torch):
            x = lib.tensor([0.0, 1.0], requires_grad=True)
            lib_fn(lib, x).sum().backward()
            grads.append(x.grad.tolist())
        assert str(grads[0]) == str(grads[1])


def test_a_tensor_used_every_step_keeps_no_dead_tape_references():
    # a full-batch loop: the same input meets a new tape at every step
    x = ng.randn(8, 3)
    w = ng.randn(3, requires_grad=True)
    for _ in range(200):
        (x @ w).sum().backward()
    alive = [ref for ref in x._captured_by if ref() is not None]
    assert len(x._captured_by) <= 8 + len(alive)


@pytest.mark.parametrize("index", [0, -1, slice(0, 2), slice(None), slice(None, None, 2),
                                   Ellipsis, (Ellipsis, 0), (None, Ellipsis), (), True, (0,),
                                   [0, 1], (0, [0]), (slice(None), 1), "mask", "mask2d"])
def test_writing_into_a_leaf_through_an_index_names_the_view_as_torch(index):
    # torch takes a view first for an int, None, a bool or a partial slice: its message then
    # says "a view of a leaf Variable"; a whole-dim slice, Ellipsis or an advanced index write
    # into the leaf itself
    def write(lib):
        a = lib.ones(3, 2, requires_grad=True)
        k = {"mask": (a > 0)[:, 0], "mask2d": a > 0}.get(index, index) \
            if isinstance(index, str) else index
        a[k] = 2.0
    assert same(write).startswith("RuntimeError: a ")


def _saved_input_added_to(lib):
    a = lib.tensor([1., 2.], requires_grad=True)
    b = a * 2
    c = b * b
    b.add_(1)
    c.sum().backward()


def _saved_output_scaled(lib):
    b = lib.tensor([1., 2.], requires_grad=True).exp()
    b.mul_(3)
    b.sum().backward()


def _saved_input_twice_changed(lib):
    b = lib.tensor([1., 2.], requires_grad=True) * 2
    c = b.sin()
    b.add_(1)
    b.mul_(2)
    c.sum().backward()


def _saved_input_changed_without_grad(lib):
    b = lib.tensor([1., 2.], requires_grad=True) * 2
    c = b.sin()
    with lib.no_grad():
        b.add_(1)
    c.sum().backward()


def _leaf_changed_without_grad(lib):
    w = lib.tensor([1., 2.], requires_grad=True)
    c = (w * w).sum()
    with lib.no_grad():
        w.add_(1)
    c.backward()


@pytest.mark.parametrize("program", [_saved_input_added_to, _saved_output_scaled,
                                     _saved_input_twice_changed,
                                     _saved_input_changed_without_grad,
                                     _leaf_changed_without_grad])
def test_the_version_error_names_the_op_torch_names(program):
    # a saved input: the op the tensor is the output of now (its last in-place op); a saved
    # output: the node that saved it
    assert "modified by an inplace operation" in same(program)


def test_many_graphs_alive_on_one_tape_each_backward_reaches_its_own_leaves():
    # losses recorded before any backward share a tape (and its leaves); each backward must
    # write only the leaves its own graph reaches, as torch does
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((30, 4)), rng.standard_normal(4)
    grads = {}
    for lib in (ng, torch):
        ws = lib.tensor(w)
        xs = [lib.tensor(row, requires_grad=True) for row in x]
        losses = [(ws * xi).sum() ** 2 for xi in xs]
        for k in (3, 17, 3, 29):
            losses[k].backward(retain_graph=True)
        grads[lib] = [None if xi.grad is None else xi.grad.numpy() for xi in xs]
    assert [g is None for g in grads[ng]] == [k not in (3, 17, 29) for k in range(30)]
    for a, b in zip(grads[ng], grads[torch]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12)
