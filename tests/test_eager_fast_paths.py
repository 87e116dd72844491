"""The eager recording shortcuts give what the general path gives: scalar (0-d float64) ops in
every situation the shortcut hands back (leaves, constants, views, a big operand, other tapes,
no_grad, anomaly mode), a basic index's offset read from the index, x ** 2 as a product; the
operators' scalar graph recorders and x[i] / x[a:b] record node for node what the general
functions and index resolution record."""

import random

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.core import tape as tape_mod
from numbagrad.core.tape import BIG, fresh_tape
from numbagrad.engine.record import _address
from numbagrad.engine.registry import BY_NAME
from numbagrad.ops.elementwise.forward import eager_forward
from numbagrad.ops.elementwise.pointwise import unary
from numbagrad.ops.index.indexing import _basic_offset
from numbagrad.ops.index.rules import resolve

torch = pytest.importorskip("torch")


def _scalar_program(lib, xs, c):
    """0-d ops over leaves ``xs`` and constant ``c``: leaf with leaf, leaf with constant,
    non-leaf with leaf, unary on a leaf, Python numbers on both sides, a graph kept across a
    no_grad block, a view of a 0-d tensor and a result of another tape's graph."""
    a, b, d = xs
    u = a * b + a * c - 0.5 * b
    v = lib.tanh(a) * lib.sin(u) / (1.5 + d * d)
    with lib.no_grad():
        w = u * 3.0  # not recorded: a constant below
    earlier = (d * 2.0).exp()  # recorded before the next ops: the same tape
    y = v - w * u + earlier / 4 + u.view(()) ** 2 + 2.0 ** a
    return y


@pytest.mark.parametrize("anomaly", [False, True])
def test_scalar_ops_match_torch(anomaly):
    vals = (0.3, -1.2, 0.7)
    results = []
    for lib in (ng, torch):
        xs = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in vals]
        c = lib.tensor(1.25, dtype=lib.float64)
        with lib.autograd.set_detect_anomaly(anomaly):
            y = _scalar_program(lib, xs, c)
            y.backward()
        results.append((y.item(), [x.grad.item() for x in xs], type(y.grad_fn).__name__))
    ours, theirs = results
    assert ours[2] == theirs[2]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-14)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-13)


def test_scalar_ops_on_a_big_operand_and_across_tapes():
    """A 0-d result of a big node is itself big (its value stays an array); a 0-d tensor of
    an older graph is bridged into the newer one."""
    n = BIG + 5
    data = np.linspace(-1, 1, n)
    results = []
    for lib in (ng, torch):
        x = lib.tensor(data, requires_grad=True)
        s = (x * x).sum()  # 0-d, from a big operand
        t = s * s + lib.tanh(s) * 0.5 - s / 3.0
        old = lib.tensor(0.4, dtype=lib.float64, requires_grad=True) * 2.0
        for _ in range(3):  # ops mixing the two graphs
            t = t * old + old
        t.backward()
        results.append((t.item(), x.grad.numpy().copy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


def test_scalar_grad_fn_names_and_requires_grad():
    def run(lib):
        a = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        k = lib.tensor(3.0, dtype=lib.float64)
        out = [a * k, k * k, a + 1, 1 - a, lib.tanh(a), lib.tanh(k), a * 2 / a]
        return [(t.requires_grad, type(t.grad_fn).__name__, t.item()) for t in out]
    ours, theirs = run(ng), run(torch)
    assert ours == theirs


def test_basic_index_offsets_equal_numpy_addresses():
    rng = random.Random(0)
    checked = 0
    for _ in range(3000):
        shape = tuple(rng.randint(0, 5) for _ in range(rng.randint(1, 4)))
        index = []
        for d in range(rng.randint(0, len(shape))):
            r = rng.random()
            if r < 0.3 and shape[d]:
                index.append(rng.randint(-shape[d], shape[d] - 1))
            elif r < 0.4:
                index.append(None)
            else:
                index.append(slice(rng.choice([None, -7, -2, 0, 1, 3, 8]),
                                   rng.choice([None, -7, -1, 0, 2, 4, 9]),
                                   rng.choice([None, 1, 2, 3])))
        try:
            basic, _, _ = resolve(shape, tuple(index))
        except (IndexError, ValueError):  # torch's errors (an empty dim's index and so on)
            continue
        a = np.zeros(shape)
        view = a[basic]
        if view.size:
            assert _basic_offset(shape, basic) == (_address(view) - _address(a)) // 8, \
                (shape, index)
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_square_is_the_kernels_value(dtype):
    """x ** 2 is computed by NumPy's product: the same bits as the kernel's pw."""
    x = (np.random.default_rng(0).standard_normal(10_000) * 1e3).astype(dtype)
    ours = (ng.tensor(x, requires_grad=True) ** 2).detach().numpy()
    kernel = eager_forward(BY_NAME["pow_scalar"], x, 2.0)
    assert ours.dtype == kernel.dtype == dtype
    assert np.array_equal(ours.view(np.uint8), np.asarray(kernel).view(np.uint8))
    assert np.array_equal(ours, (torch.tensor(x) ** 2).numpy())


def _records(y):
    """The tape of ``y``'s graph: node records, arguments, shapes, attributes and values."""
    tape = y._tape
    val = tape.val.array().copy()
    for node in range(len(tape)):  # (a value not kept: its place holds what memory held)
        if tape.unwritten(node) and tape.field(node, tape_mod.F_VOFF) >= 0:
            voff = tape.field(node, tape_mod.F_VOFF)
            val[voff:voff + tape.field(node, tape_mod.F_SIZE)] = 0.0
    return (tape.records().tolist(), bytes(tape.args), list(tape.shapes), list(tape.iat),
            list(tape.fat), val.tolist())


def _scalar_graph(shortcut):
    """The same scalar graph through the operators' recorders (``shortcut``) or through the
    general functions (ng.mul etc., which take record_0d's path), on a tape of its own."""
    fresh_tape()
    a = ng.tensor(0.3, dtype=ng.float64, requires_grad=True) * 1.0
    b = ng.tensor(-1.2, dtype=ng.float64, requires_grad=True) * 1.0
    if shortcut:
        return ng.tanh(a * b + a) - ng.sin(b) / 2.0 * (b - 0.25)
    p = ng.add(ng.mul(a, b), a)
    return ng.sub(unary("tanh", p), ng.mul(ng.div(unary("sin", b), 2.0), ng.sub(b, 0.25)))


def test_scalar_graph_recorders_record_what_the_general_path_records():
    fast, general = _scalar_graph(True), _scalar_graph(False)
    assert fast._data == general._data
    assert _records(fast) == _records(general)


def _leaf_graph(shortcut):
    """0-d leaves (0-d arrays, no node until used) straight into the operators: with a
    number on either side, with a non-leaf on either side, with each other."""
    fresh_tape()
    a = ng.tensor(0.3, dtype=ng.float64, requires_grad=True)
    b = ng.tensor(-1.2, dtype=ng.float64, requires_grad=True)
    if shortcut:
        u = a * 0.5 + 2.0 * b
        return (u * a - b * u) / (a - b) + (1.5 - a) - b / 4
    u = ng.add(ng.mul(a, 0.5), ng.mul(b, 2.0))
    return ng.sub(ng.add(ng.div(ng.sub(ng.mul(u, a), ng.mul(b, u)), ng.sub(a, b)),
                         ng.rsub(a, 1.5)), ng.div(b, 4))


def test_leaf_operands_record_what_the_general_path_records():
    fast, general = _leaf_graph(True), _leaf_graph(False)
    assert fast._data == general._data
    assert _records(fast) == _records(general)
    grads = []
    for lib in (ng, torch):
        a = lib.tensor(0.3, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(-1.2, dtype=lib.float64, requires_grad=True)
        u = a * 0.5 + 2.0 * b
        y = (u * a - b * u) / (a - b) + (1.5 - a) - b / 4
        y.backward()
        grads.append((float(y), float(a.grad), float(b.grad), y.grad_fn.name()))
    assert grads[0] == grads[1]


def test_basic_index_shortcut_records_what_resolve_records():
    """x[i] and x[a:b] (the shortcut) against x[(i,)] and x[(slice,)] (resolve's path)."""
    data = np.arange(24.0).reshape(4, 6)
    for index in (0, 3, -1, -4, slice(1, 3), slice(None), slice(-3, None), slice(2, 2),
                  slice(None, -1)):
        graphs = []
        for key in (index, (index,)):
            fresh_tape()
            x = ng.tensor(data, requires_grad=True)
            y = x[key] * 2.0
            graphs.append((_records(y), y._data.tolist(), type(y.grad_fn).__name__))
        assert graphs[0] == graphs[1], index


def test_sum_and_product_shortcuts_match_torch():
    rng = np.random.default_rng(3)
    for dtype in ("float32", "float64"):
        a, b = rng.standard_normal((3, 5)).astype(dtype), rng.standard_normal((5, 4)).astype(dtype)
        got = []
        for lib in (ng, torch):
            x, w = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
            y = (x @ w).sum() + x[1:].sum() * 0.5
            y.backward()
            got.append((y.item(), x.grad.numpy().copy(), w.grad.numpy().copy(),
                        type(y.grad_fn).__name__))
        tol = 1e-6 if dtype == "float32" else 1e-13
        np.testing.assert_allclose(got[0][0], got[1][0], rtol=tol)
        np.testing.assert_allclose(got[0][1], got[1][1], rtol=tol)
        np.testing.assert_allclose(got[0][2], got[1][2], rtol=tol)
        assert got[0][3] == got[1][3]


def _array_program(lib, arrays, stale=True):
    """Array ops of every kind record_array takes, and the cases it hands back to record():
    a leaf transposed (t() and .T), products, elementwise ops with a constant, with Python
    numbers on both sides and unary, a view of a base changed in place since, a value of
    another tape, an op on a big operand."""
    w_data, h_data, c_data, big_data = arrays
    w = lib.tensor(w_data, requires_grad=True)
    h = lib.tensor(h_data, requires_grad=True)
    c = lib.tensor(c_data)
    y = h @ w.T + c
    y = lib.tanh(y) * 0.5 - 1.5 * y + (1 - y) ** 2 / (y * y + 1.0)
    y = y @ w.t() - lib.exp(-y)
    base = y * 1.0
    v = base[:, 1:3]
    if stale:
        base.add_(1.0)  # v's node is stale: v is regenerated from base's new node
    y = y[:, :2] * v + v.sum()
    big = lib.tensor(big_data, requires_grad=True)
    return y.sum() + (big * 2.0).sum() + (w * w).mean(), (w, h, big)


def _arrays(dtype):
    rng = np.random.default_rng(5)
    return [rng.standard_normal(s).astype(dtype) for s in ((4, 4), (3, 4), (4,), (BIG + 3,))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_array_shortcut_records_what_record_records(dtype, monkeypatch):
    """record_array's nodes are record()'s, field for field, value for value."""
    from numbagrad.engine import record
    from numbagrad.ops.elementwise import pointwise
    from numbagrad.ops.linalg import matmul as linalg
    from numbagrad.ops.shape import join
    from numbagrad.ops.shape import movement as shape

    graphs = []
    for shortcut in (True, False):
        if not shortcut:
            def general(op, out, a, b=None, iat=(), fat=()):
                return record.record(op, out, (a,) if b is None else (a, b), iat, fat)
            for module in (linalg, pointwise, shape, join, record):
                monkeypatch.setattr(module, "record_array", general)
        fresh_tape()
        y, leaves = _array_program(ng, _arrays(dtype))
        y.backward()
        graphs.append((_records(y), y.item(), [x.grad.numpy().tolist() for x in leaves]))
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("anomaly", [False, True])
def test_array_shortcut_matches_torch(dtype, anomaly):
    got = []
    for lib in (ng, torch):
        with lib.autograd.set_detect_anomaly(anomaly):
            y, leaves = _array_program(lib, _arrays(dtype))
            y.backward()
        got.append((y.item(), [x.grad.numpy().copy() for x in leaves],
                    type(y.grad_fn).__name__))
    tol = 2e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=tol)
    for ours, theirs in zip(got[0][1], got[1][1]):
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)
    assert got[0][2] == got[1][2]


def test_array_shortcut_across_tapes_and_no_grad():
    """An operand of an older graph is bridged (record()'s path); under no_grad nothing is
    recorded; a constant-only op records nothing."""
    results = []
    for lib in (ng, torch):
        h = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
        old = h * 2.0
        if lib is ng:
            fresh_tape()
        new = lib.tensor(np.ones((3, 4)), requires_grad=True) * 3.0
        y = lib.tanh(old + new) * new
        with lib.no_grad():
            z = y * 2.0
        k = lib.tensor(np.ones(4)) * 2.0
        (y.sum() + (z * k).sum()).backward()
        results.append((z.requires_grad, k.requires_grad, z.grad_fn is None,
                        h.grad.numpy().tolist()))
    assert results[0][:3] == results[1][:3]
    np.testing.assert_allclose(results[0][3], results[1][3], rtol=1e-13)


def test_a_new_graph_starts_a_new_tape_once_nothing_holds_the_old():
    """current_tape() keeps recording on the graph of a live tensor or a held grad_fn, and
    starts a new tape once nothing holds the old one: a training loop does not grow one
    tape step after step."""
    import weakref

    x = ng.tensor(np.ones(3), requires_grad=True)
    y = x * 2.0
    first = weakref.ref(y._tape)
    assert (x * 3.0)._tape is first()  # y is alive
    grad_fn = y.grad_fn
    del y
    assert (x * 3.0)._tape is first()  # its grad_fn is held
    del grad_fn
    z = x * 4.0
    assert z._tape is not first() and first() is None  # the old tape is gone too
    del z
    for i in range(5):
        loss = (x * float(i) + 1.0).sum()
        loss.backward()
        assert len(loss._tape) == 4  # x, x * i, + 1, sum: this step's nodes only


@pytest.mark.parametrize("retain", [True, False])
def test_graphs_on_a_kept_non_leaf_stop_growing_its_tape_once_it_outgrew(monkeypatch, retain):
    """A loss recomputed in a loop from one kept non-leaf (``a = x + 1`` alive across steps):
    once a backward finds its tape outgrown, each later graph built on ``a`` goes on a tape
    of its own, bridged to it, and dies with its step; the gradients stay torch's."""
    monkeypatch.setattr(tape_mod, "_OUTGROWN_VALUES", 12_000)
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(1_000)

    def loop(lib, steps=12):
        x = lib.tensor(x0, requires_grad=True)
        a = x + 1.0  # saves nothing: a backward without retain_graph may go through it again
        sizes = []
        for i in range(steps):
            loss = (lib.tanh(a) * float(i + 1)).sum()
            loss.backward(retain_graph=retain)
            sizes.append(len(a._tape) if lib is ng else 0)
        return x.grad.numpy(), sizes

    got, sizes = loop(ng)
    want, _ = loop(torch)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert sizes[0] < sizes[3]  # it grows until a backward finds it outgrown...
    assert len(set(sizes[-6:])) == 1  # ...then the steps' graphs go elsewhere
    assert sizes[-1] * 1_000 < 12 * 1_000 * 3  # not every step's values are kept


def test_scalar_libm_forward_is_the_kernels_value_to_the_bit():
    """A one-input op whose formula is one C library function computes a float64 scalar with
    math's function: the same value as its scalar kernel, to the bit, also where math raises
    (inf, a pole, an overflow) and the kernel gives nan or inf."""
    from numbagrad.engine import formula, kernelgen
    from numbagrad.ops.elementwise.forward import _scalar_value, scalar_forward
    ops = [op for op in BY_NAME.values() if op.arity == 1 and op.fwd and not op.rounds_once
           and formula.single_call(op.fwd, "a") in kernelgen.LIBM]
    assert {"sin", "cos", "erf"} <= {op.name for op in ops}
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.standard_normal(2000) * s for s in (1e-8, 1, 30, 1e8)] + [
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324, 710.0, -1.0,
                  -1.5, 1.0, 1e-300])])
    for op in ops:
        forward = scalar_forward(op)
        for v in values:
            x = np.float64(v)
            got, want = forward(x), np.float64(_scalar_value(op, x))
            assert type(got) is np.float64
            assert got.tobytes() == want.tobytes() or (np.isnan(got) and np.isnan(want)), \
                (op.name, v, got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_branching_ops_kernel_forward_is_numpys_value_to_the_bit(dtype):
    """relu, sign and sqrt of an array run their kernel (kernel_first): the same bits as
    NumPy's forward, NaNs' signs, signed zeros, infinities and subnormals included; relu's
    and sign's as torch's too (torch's vectorized sqrt is not correctly rounded: it differs
    from NumPy's in the last bit for 1 value in 150)."""
    from numbagrad.ops.elementwise.forward import kernel_first
    ops = [op for op in BY_NAME.values() if op.elementwise and op.rounds_once and
           kernel_first(op)]
    assert {"relu", "sign", "sqrt"} <= {op.name for op in ops}
    special = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1e-310, -1e-310, 1e-40, -1e-40,
               1.5, -2.5, 3.0, 0.3]
    rng = np.random.default_rng(0)
    x = np.concatenate([np.array(special, dtype), rng.standard_normal(5000).astype(dtype)])
    for op in ops:
        with np.errstate(all="ignore"):
            want = op.forward(x)
        got = eager_forward(op, x)
        assert got.dtype == want.dtype == dtype, op.name
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), op.name
    for name in ("relu", "sign"):  # (relu keeps -0.0 and a NaN's sign, as torch's)
        ours = getattr(ng, name)(ng.tensor(x)).numpy()
        theirs = getattr(torch, name)(torch.tensor(x)).numpy()
        assert np.array_equal(ours.view(np.uint8), theirs.view(np.uint8)), name


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((64, 256), (256,)), ((128, 512), (1, 512)),
                                    ((3, 4, 40), (40,)), ((256,), (64, 256))])
def test_a_row_operand_gets_its_rows_summed_as_torch(shapes, dtype):
    """A binary op whose operand repeats along the leading dims (a bias row, on a small node
    of the sweep or a big one) takes the row case of its backward kernel: gradients as
    torch's, the row's added onto what it already had (used twice), its sum in row order
    (add's equals NumPy's column sum to the bit, in the dtype the node is differentiated in)."""
    rng = np.random.default_rng(0)
    a0 = rng.uniform(0.5, 2.0, shapes[0]).astype(dtype)
    b0 = rng.uniform(0.5, 2.0, shapes[1]).astype(dtype)
    # torch in float64 the oracle (its float32 row sums are the less accurate here)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)

    def grads(lib, op, dt=dtype):
        a = lib.tensor(a0.astype(dt), requires_grad=True)
        b = lib.tensor(b0.astype(dt), requires_grad=True)
        w = lib.tensor(np.linspace(-1, 1, int(np.prod(np.broadcast_shapes(*shapes))))
                       .astype(dt).reshape(np.broadcast_shapes(*shapes)))
        out = op(lib, a, b)
        ((out * w).sum() + (b * 3.0).sum()).backward()  # (b's adjoint written twice)
        return out.detach().numpy(), a.grad.numpy(), b.grad.numpy()

    ops = {"add": lambda lib, a, b: a + b, "sub": lambda lib, a, b: a - b,
           "mul": lambda lib, a, b: a * b, "div": lambda lib, a, b: a / b,
           "maximum": lambda lib, a, b: lib.maximum(a, b * 1.1),
           "atan2": lambda lib, a, b: lib.atan2(a, b), "pow": lambda lib, a, b: a ** b}
    for name, op in ops.items():
        for ours, theirs in zip(grads(ng, op), grads(torch, op, np.float64)):
            np.testing.assert_allclose(ours, theirs.astype(dtype), **tol, err_msg=name)
    g = rng.standard_normal(np.broadcast_shapes(*shapes)).astype(dtype)
    a, b = ng.tensor(a0, requires_grad=True), ng.tensor(b0, requires_grad=True)
    (a + b).backward(ng.tensor(g))
    row, full = (b, a) if b0.size < a0.size else (a, b)
    # (a small float32 node is differentiated in float64, rounded once: see limitations)
    wide = np.float64 if g.size < BIG else dtype
    want = g.astype(wide).reshape(-1, row._data.size).sum(axis=0).astype(dtype)
    assert np.array_equal(row.grad.numpy(), want.reshape(row.shape))
    assert np.array_equal(full.grad.numpy(), g)


def _changed_in_place(lib, which):
    """0-d ops after an in-place change (their operand's node holds its old value: they must
    read the new one), with a saved value changed (the backward raises), during a backward
    (a hook records ops while it sweeps the tape), or none: what a tape's ``plain`` flag
    must track."""
    seen = []
    a = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
    b = a * 2.0
    c = b * b  # saves b
    if which == "in_place":
        b.add_(1.0)
        c = a * 1.5
    elif which == "view":
        b.view(()).mul_(3.0)  # through a view: the counter b shares with it
        c = a * 1.5
    elif which == "saved":
        b.add_(1.0)  # c's saved b is stale now
    y = c * a + lib.tanh(b) * 0.5 + b * b
    if which == "sweep":
        y.register_hook(lambda g: seen.append(g * a * a))  # 0-d ops during the backward
    return a, b, y, seen


@pytest.mark.parametrize("which", ["none", "in_place", "view", "saved", "sweep"])
def test_scalar_ops_around_in_place_changes_and_sweeps_match_torch(which):
    results = []
    for lib in (ng, torch):
        a, b, y, seen = _changed_in_place(lib, which)
        try:
            y.backward()
        except RuntimeError as e:
            results.append(("error", type(e), str(e).split(";")[0], b._version))
            continue
        results.append((float(y), float(a.grad), b._version,
                        [float(s) for s in seen]))
        if lib is ng:  # plain again once the backward let go, unless a value changed
            assert y._tape.plain == (which in ("none", "sweep"))
    if results[1][0] == "error":
        assert results[0] == results[1]  # type, message, version
    else:
        assert results[0][2:] == results[1][2:]
        np.testing.assert_allclose(results[0][:2], results[1][:2], rtol=1e-14)


def _versions(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    s = (x * 2).sum()  # a 0-d op result
    v = s.view(())
    w = s.detach()
    counts = [s._version]
    v.add_(1.0)
    counts += [s._version, v._version, w._version]
    w.mul_(2.0)
    return counts + [s._version, v._version, w._version]


def test_version_counters_of_op_results_are_shared_with_views_as_torchs():
    assert _versions(ng) == _versions(torch)
