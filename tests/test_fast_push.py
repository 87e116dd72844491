"""The C recorder of a small op's node (engine/_fast_push.c) writes what the Python pairs it
replaces write (Tape.push_0d / Tape.push_array, then _make), hands every other case to
those pairs, and the package uses it wherever a C compiler was there at install; its
push_big writes what Tape.push() writes for a big node."""

import shutil
import sysconfig

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.__main__ import scalar_graph
from numbagrad.core import tape as tape_mod
from numbagrad.engine import fast_push, record

torch = pytest.importorskip("torch")
compiled = fast_push._fast_push
needs_ext = pytest.mark.skipif(compiled is None, reason="the C extension was not built")
PAIRS = {"C": (compiled and compiled.push_make, compiled and compiled.push_array_make),
         "Python": (fast_push.push_make_python, fast_push.push_array_make_python)}


def test_extension_is_built_where_a_compiler_is():
    if shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) is None:
        pytest.skip("no C compiler on this machine: the Python recorder is used")
    assert compiled is not None, fast_push.unavailable
    assert record.push_make is compiled.push_make
    assert record.push_array_make is compiled.push_array_make
    assert tape_mod._native_push_big is compiled.push_big
    assert tape_mod._native_source is compiled.source_big


def _scalar_program(lib, n_ops):
    """A random scalar graph, then ops that take the other paths: a small array op (its
    value pending in the arena), a unary op with float attributes, numbers on both sides."""
    init = np.random.default_rng(3).uniform(-1, 1, 50)
    leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in init]
    y = scalar_graph(lib, leaves, n_ops)
    arr = lib.tensor(np.linspace(0.1, 0.9, 5), requires_grad=True)
    s = (arr * 2.0).sum()  # pending in the arena when the next scalar op comes
    z = y * s + lib.clamp(leaves[0], -0.5, 0.5) * 3 - 2.0 / (1.5 + leaves[1] * leaves[1])
    return z + 0.25 * lib.nn.functional.leaky_relu(leaves[2], 0.1), leaves + [arr]


def _array_program(lib, steps):
    """Array ops of every kind the array recorder takes: float32 and float64, products,
    attributes (a reduction's dim, a scalar), values a derivative reads (exp) or not (add),
    values of 2,048 elements or more left unwritten, more than 64 values pending."""
    rng = np.random.default_rng(4)
    w = lib.tensor(rng.standard_normal((16, 8)).astype(np.float32), requires_grad=True)
    bias = lib.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    x = lib.tensor(rng.standard_normal((4, 8)).astype(np.float32))
    big = lib.tensor(rng.standard_normal((64, 64)), requires_grad=True)
    h = lib.zeros(4, 16)
    for _ in range(steps):
        h = lib.tanh(x @ w.T + bias + h * 0.5)
    wide = (big * 2.0 + big).exp() * 1e-3  # 4,096 elements: the sum is not written
    v = (h.sum(1) ** 2).sum() + wide.sum() + (lib.sigmoid(big[:3]) * 0.5).sum()
    return v, [w, bias, big]


def _run(lib, program, arg, pair=None):
    old = record.push_make, record.push_array_make
    if pair is not None:
        record.push_make, record.push_array_make = pair
    try:
        y, leaves = program(lib, arg)
        tape = getattr(y, "_tape", None)
        snapshot = None if tape is None else (
            bytes(tape.nodes), bytes(tape.args), bytes(tape.shapes), bytes(tape.iat),
            bytes(tape.fat), tape.val.array().tobytes(), list(tape.unwritten_nodes),
            tape.has_unwritten)
        y.backward()
        grads = [None if t.grad is None else t.grad.numpy().copy() for t in leaves]
        return y.item(), grads, snapshot
    finally:
        record.push_make, record.push_array_make = old


def _counting_setup(handed):
    def scalar(*args):
        handed[0] += 1
        return fast_push.push_make_python(*args)

    def array_op(*args):
        handed[1] += 1
        return fast_push.push_array_make_python(*args)
    fast_push.setup(compiled, scalar, array_op)


@needs_ext
@pytest.mark.parametrize("program, arg, handed_ranges", [
    (_scalar_program, 10_000, ((1, 50), (0, 5))),
    (_array_program, 120, ((0, 5), (1, 50)))])
def test_records_equal_the_python_pairs(program, arg, handed_ranges):
    """Node for node, byte for byte (records, arguments, shapes, attributes, values, the
    nodes left unwritten), through the buffers' growth, flushes and pending values; both
    ways taken, and the gradients torch's."""
    handed = [0, 0]
    _counting_setup(handed)
    try:
        ours = _run(ng, program, arg, PAIRS["C"])
    finally:
        fast_push.setup(compiled)
    # both ways taken: C for most ops, the Python pairs where a buffer was full, a flush due
    assert all(lo <= n < hi for n, (lo, hi) in zip(handed, handed_ranges)), handed
    python = _run(ng, program, arg, PAIRS["Python"])
    assert ours[2] == python[2]
    assert ours[0] == python[0]
    for g, p in zip(ours[1], python[1]):
        np.testing.assert_array_equal(g, p)
    theirs = _run(torch, program, arg)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    for g, t in zip(ours[1], theirs[1]):
        if t is None:
            assert g is None or not np.any(g)
        else:
            np.testing.assert_allclose(g, t, rtol=2e-4, atol=1e-6)


@needs_ext
def test_tensors_equal_make():
    a = ng.tensor(0.5, dtype=ng.float64, requires_grad=True) * 2.0
    tape = a._tape
    value = np.ones(3)
    made = [compiled.push_make(tape, 5, np.float64(3.0), a._node, -1, ()),
            fast_push.push_make_python(tape, 5, np.float64(3.0), a._node, -1, ()),
            compiled.push_array_make(tape, 5, value, a._node, -1, (), (), 0, 0),
            fast_push.push_array_make_python(tape, 5, value, a._node, -1, (), (), 0, 0)]
    # every slot of Tensor, not only those the C function names: a slot _make comes to set
    # and the C function does not is a difference here
    slots = [n for n in ng.Tensor.__slots__ if n != "__weakref__"]
    assert set(fast_push.TENSOR_SLOTS) <= set(slots)
    for t, ref in (made[:2], made[2:]):
        for name in slots:
            if name != "_node":
                assert hasattr(t, name) == hasattr(ref, name), name
                if hasattr(ref, name):
                    got, want = getattr(t, name), getattr(ref, name)
                    assert got is want or type(got) is type(want) and np.all(got == want), name
        assert t._node == ref._node - 1
        assert not hasattr(t, "_view") and not hasattr(ref, "_view")


@needs_ext
def test_what_push_takes_is_none():
    """No element, a big value, a NumPy scalar: None from both (push() records them)."""
    a = ng.tensor(np.ones(3), requires_grad=True) * 2.0
    tape = a._tape
    n = len(tape)
    for value in (np.ones(0), np.ones(tape_mod.BIG)):
        for push in (compiled.push_array_make, fast_push.push_array_make_python):
            assert push(tape, 5, value, a._node, -1, (), (), 0, 0) is None
    assert len(tape) == n


@needs_ext
def test_a_viewed_buffer_takes_the_python_path():
    """A tape whose node buffer is viewed cannot grow: the op goes to a new tape (the
    BufferError path), as with the Python pairs, and gradients still reach the leaves."""
    results = []
    for lib in (ng, torch):
        a = lib.tensor(0.3, dtype=lib.float64, requires_grad=True)
        v = lib.tensor([0.1, 0.2], dtype=lib.float64, requires_grad=True)
        b = a * a
        u = v * 2.0
        view = memoryview(b._tape.nodes) if lib is ng else None
        c = b * 3.0 + b.sin() + (u * u).sum()
        if view is not None:
            assert c._tape is not b._tape
            view.release()
        c.backward()
        results.append((c.item(), a.grad.item(), *v.grad.tolist()))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-14)


@needs_ext
def test_bad_arguments_are_python_errors():
    a = ng.tensor(np.ones(2), requires_grad=True) * 2.0
    tape = a._tape
    n = len(tape)
    with pytest.raises(TypeError):
        compiled.push_make(tape, 5, np.float64(1.0), a._node)
    with pytest.raises(TypeError):
        compiled.push_make(tape, "code", np.float64(1.0), a._node, -1, ())
    with pytest.raises(TypeError):
        compiled.push_make(tape, 5, "value", a._node, -1, ())
    with pytest.raises(TypeError):
        compiled.push_array_make(tape, 5, np.ones(2), a._node, -1, ("x",), (), 0, 0)
    with pytest.raises(TypeError):
        compiled.push_array_make(tape, 5, np.ones(2), a._node, -1, (), (None,), 0, 0)
    assert len(tape) == n  # nothing written


@needs_ext
def test_setup_refuses_what_it_cannot_write():
    """Names that are not slots are refused, and a refused setup leaves the functions on the
    Python pairs (still right) until a setup succeeds."""
    try:
        with pytest.raises(TypeError, match="not a slot"):
            compiled.setup(ng.Tensor, ("_data",) * 10 + ("shape",), tape_mod.Tape,
                           fast_push.TAPE_SLOTS, fast_push.Arena, fast_push.ARENA_SLOTS,
                           np.ndarray, fast_push.LAYOUT, fast_push.array("q", [1]),
                           fast_push.push_make_python, fast_push.push_array_make_python,
                           vars(tape_mod))
        a = ng.tensor(0.5, dtype=ng.float64, requires_grad=True)
        v = ng.tensor([1.0, 2.0], requires_grad=True)
        y = a * a * 3.0 + (v * v).sum()
        y.backward()
        assert (y.item(), a.grad.item(), v.grad.tolist()) == (5.75, 3.0, [2.0, 4.0])
    finally:
        fast_push.setup(compiled)
    assert _run(ng, _array_program, 3, PAIRS["C"])[2] == \
        _run(ng, _array_program, 3, PAIRS["Python"])[2]


def _big_program(lib, _):
    """Big nodes of every form push() takes: sources, a t() node and a product (tuple
    operands and int attributes), ReLU (operands in a list), a loss (an index map of int64
    in an ndarray), float attributes, a reduction over a dim."""
    rng = np.random.default_rng(5)
    w = lib.tensor(rng.standard_normal((256, 200)).astype(np.float32) * 0.1, requires_grad=True)
    b = lib.tensor(np.zeros(256, np.float32), requires_grad=True)
    x = lib.tensor(rng.standard_normal((160, 200)).astype(np.float32))
    h = lib.nn.functional.linear(x, w, b).relu() * 0.5
    loss = lib.nn.functional.cross_entropy(h[:, :10], lib.tensor(rng.integers(0, 10, 160)))
    return loss + h.sum(1).mean() * 1e-3, [w, b]


def _tape_bytes(tape):
    return (bytes(tape.nodes), bytes(tape.args), bytes(tape.shapes), bytes(tape.iat),
            bytes(tape.fat), [v.shape for v in tape.big_val], tape.has_big, tape.plain)


def _python_pushes(monkeypatch):
    """Every node and source pushed by the Python code alone from now on."""
    from numbagrad.ops.linalg import matmul

    monkeypatch.setattr(tape_mod, "_native_push_big", None)
    monkeypatch.setattr(tape_mod, "_native_source", None)
    monkeypatch.setattr(record, "push_node", record.push_node_python)
    monkeypatch.setattr(matmul, "push_node", record.push_node_python)


@needs_ext
def test_big_nodes_equal_pythons_push(monkeypatch):
    """C's push_node and push_big write the records Python's push_node and Tape.push write,
    and the gradients follow (also torch's)."""
    from numbagrad.ops.linalg import matmul

    calls, handed = [], []

    def counting(*args):
        calls.append(args[1].name)
        return compiled.push_node(*args)

    def python_body(*args):
        handed.append(args[1].name)
        return record.push_node_python(*args)
    monkeypatch.setattr(record, "push_node", counting)
    monkeypatch.setattr(matmul, "push_node", counting)
    compiled.setup_push_node(python_body, record._anomaly, record.on_user_blas)
    try:
        y, leaves = _big_program(ng, None)
    finally:
        compiled.setup_push_node(record.push_node_python, record._anomaly, record.on_user_blas)
    ours = _tape_bytes(y._tape)
    y.backward()
    grads = [t.grad.numpy().copy() for t in leaves]
    # the graph's big nodes pushed in C (t, addmm, relu, mul, slice, log_softmax, sum),
    # the loss's scalars by Python
    assert len(calls) - len(handed) >= 6
    del y
    _python_pushes(monkeypatch)
    y2, leaves2 = _big_program(ng, None)
    assert ours == _tape_bytes(y2._tape)
    y2.backward()
    for g, t in zip(grads, leaves2):
        np.testing.assert_array_equal(g, t.grad.numpy())
    t_loss, t_leaves = _big_program(torch, None)
    t_loss.backward()
    np.testing.assert_allclose(float(y2.item()), t_loss.item(), rtol=1e-5)
    for g, t in zip(grads, t_leaves):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-4, atol=1e-6)


@needs_ext
def test_push_node_hands_back_what_it_does_not_push(monkeypatch):
    """Anomaly mode, a float32 elementwise node with float attributes, a node flagging its
    tape for a BLAS hold, a small node: the Python body pushes them (the same records)."""
    handed = []

    def python_body(*args):
        handed.append(args[1].name)
        return record.push_node_python(*args)
    compiled.setup_push_node(python_body, record._anomaly, True)
    try:
        x = ng.tensor(np.ones((300, 300), np.float32), requires_grad=True)
        w = ng.tensor(np.ones((300, 300), np.float32), requires_grad=True)
        y = ng.nn.functional.linear(x, w, w[0])  # products flag the tape here
        with ng.autograd.detect_anomaly():
            z = y.relu()
    finally:
        compiled.setup_push_node(record.push_node_python, record._anomaly, record.on_user_blas)
    assert "addmm" in handed and "relu" in handed
    with pytest.raises(TypeError):
        compiled.push_node(y._tape, None)
    del z


def _sources(tape):
    """What source() wrote besides the records, by position (ids differ between runs)."""
    refs = tape.source_refs
    position = {id(t): k for k, t in enumerate(refs)}
    return (sorted((position[i], node) for i, node in tape.sources.items()),
            [(node, position[id(t)]) for node, t in tape.leaves], bytes(tape.leaf_nodes),
            [[ref() is tape for ref in t._captured_by] for t in refs])


@needs_ext
def test_big_sources_equal_pythons(monkeypatch):
    """Leaves and constants new to a tape that become big nodes: C's source_big writes
    what Tape.source's Python writes (records, sources, leaves, _captured_by)."""
    pushed = []

    def counting(*args):
        node = compiled.source_big(*args)
        pushed.append(node is not None)
        return node
    monkeypatch.setattr(tape_mod, "_native_source", counting)
    y, _ = _big_program(ng, None)
    ours = _tape_bytes(y._tape) + (bytes(y._tape.leaf_nodes),), _sources(y._tape)
    assert len(pushed) >= 3 and all(pushed)  # w, b and x, none handed back
    del y  # (its tape is done with: the next graph goes on a new one)
    _python_pushes(monkeypatch)
    y2, _ = _big_program(ng, None)
    assert ours == (_tape_bytes(y2._tape) + (bytes(y2._tape.leaf_nodes),), _sources(y2._tape))


@needs_ext
@pytest.mark.parametrize("native", [True, False])
def test_a_source_keeps_only_live_tapes(monkeypatch, native):
    """A weight used on a new tape at every step of a loop: its list of tapes is cleared of
    the dead ones, by C as by Python."""
    if not native:
        monkeypatch.setattr(tape_mod, "_native_source", None)
    pushed = []

    def counting(*args):
        node = compiled.source_big(*args)
        pushed.append(node is not None)
        return node
    if native:
        monkeypatch.setattr(tape_mod, "_native_source", counting)
    w = ng.tensor(np.ones((300, 300), np.float32), requires_grad=True)
    b, x = ng.zeros(300, requires_grad=True), ng.ones(64, 300)
    kept = []
    for step in range(3 * tape_mod._PRUNE_AT):
        y = ng.nn.functional.linear(x, w, b).sum()
        y.backward()  # (the next graph goes on a new tape)
        if step % 5 == 0:
            kept.append(y)  # graphs still alive
        assert len(w._captured_by) <= tape_mod._PRUNE_AT + 1
    live = [ref() for ref in w._captured_by if ref() is not None]
    assert all(t._tape in live for t in kept) and y._tape in live
    assert all(pushed) and len(pushed) == (9 * tape_mod._PRUNE_AT if native else 0)


@needs_ext
def test_source_big_hands_back_what_it_does_not_read():
    """A trace's tape, a value below the big size, a tensor whose _captured_by is not a
    list, an object that is no Tensor: None, nothing pushed (source() takes them)."""
    tape = tape_mod.Tape()
    before = _tape_bytes(tape), _sources(tape)
    small = ng.tensor(np.ones(3), requires_grad=True)
    odd = ng.tensor(np.ones((300, 300)), requires_grad=True)
    odd._captured_by = ()
    assert compiled.source_big(tape, small, False) is None
    assert compiled.source_big(tape, odd, False) is None
    assert compiled.source_big(tape, np.ones((300, 300)), False) is None
    tape.guards = object()
    assert compiled.source_big(tape, ng.ones(300, 300), True) is None
    assert (_tape_bytes(tape), _sources(tape)) == before
    with pytest.raises(TypeError):
        compiled.source_big(tape, small)


@needs_ext
def test_push_big_hands_back_what_it_does_not_read():
    """A shape that is not a tuple, attributes of other kinds or dims, more than 16 operands,
    an unwritten node: None, nothing pushed (push() takes them)."""
    a = ng.tensor(np.ones((200, 200)), requires_grad=True) * 2.0
    tape = a._tape
    before = _tape_bytes(tape)
    big, value = tape_mod.FLAG_BIG, np.ones((200, 200))
    for shape, args, iat, fat, flags in [
            ([200, 200], (0,), (), (), big), ((200, 200), (0,) * 17, (), (), big),
            ((200, 200), (0,), np.ones((2, 2), np.int64), (), big),
            ((200, 200), (0,), np.ones(3, np.int32), (), big),
            ((200, 200), (0,), (1.5,), (), big), ((200, 200), (0,), (), ("x",), big),
            ((200, 200), (0,), (), np.ones(2, np.float32), big),
            ((200, 200), (0,), (), (), big | tape_mod.FLAG_UNWRITTEN)]:
        assert compiled.push_big(tape, 5, value, value.size, shape, args, iat, fat,
                                 flags) is None
    assert _tape_bytes(tape) == before
    with pytest.raises(TypeError):
        compiled.push_big(tape, 5, value)


@needs_ext
def test_reached_leaves_equal_numpys_reads(monkeypatch):
    """After a sweep, the C loop finds the leaves the NumPy reads find, with their value
    offsets and first adjoints: 0-d leaves reached and not, a small array leaf, a big leaf
    (its adjoint a buffer of its own), a leaf that does not require grad; the gradients
    equal torch's."""
    from numbagrad.autograd import leaf_grads
    reads = []

    def both(run, tape):
        n = len(tape.leaf_nodes)
        out = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n)
        counts.append(compiled.reached_leaves(tape.leaf_nodes, run.touched, run.nodes,
                                              run.adj, *out))
        reads.append((leaf_grads._read_reached(run, tape),
                      leaf_grads._read_reached_numpy(run, tape)))
        real(run, tape)

    counts = []  # the C loop's, -1 where it declines (then both reads would be NumPy's)

    real = leaf_grads._accumulate_many
    monkeypatch.setattr(leaf_grads, "_accumulate_many", both)
    values = [0.5 * i - 3.0 for i in range(20)] + [np.arange(5.0), np.linspace(0, 1, 40_000)]
    results = []
    for lib in (ng, torch):
        leaves = [lib.tensor(v, requires_grad=i != 3) for i, v in enumerate(values)]
        unreached = leaves[16] * leaves[17]  # noqa: F841 - on the tape, not in y's graph
        y = sum(x * x * (i + 1) for i, x in enumerate(leaves[:15])) + leaves[3] * leaves[18]
        y = y + (leaves[20] * 3.0).sum() + (leaves[21].tanh()).sum()
        y.backward()
        results.append([None if x.grad is None else np.asarray(x.grad) for x in leaves])
    (hit, voffs, firsts), (hit_np, voffs_np, firsts_np) = reads[0]
    # reached: 14 of the first 15 (the 4th needs no gradient), the 19th, 21st and 22nd
    assert hit == hit_np and voffs == voffs_np and len(hit) == 17 == counts[0]
    assert [f for f, v in zip(firsts, voffs) if v >= 0] == \
        [f for f, v in zip(firsts_np, voffs_np) if v >= 0]
    assert any(v < 0 for v in voffs)  # the big leaf's
    for ours, theirs in zip(*results):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@needs_ext
def test_reached_leaves_declines_what_it_cannot_read():
    """Buffers of other item sizes, an out-of-range node: -1 (the NumPy reads take them)."""
    leaf_nodes = np.array([0, 2], np.int64)
    touched = np.ones(3, np.uint8)
    nodes = np.zeros((3, tape_mod.NODE_FIELDS), np.int64)
    adj = np.zeros(4)
    out = (np.empty(2, np.int64), np.empty(2, np.int64), np.empty(2))
    assert compiled.reached_leaves(leaf_nodes, touched, nodes, adj, *out) == 2
    assert compiled.reached_leaves(leaf_nodes, touched, nodes, adj.astype(np.float32),
                                   *out) == -1
    assert compiled.reached_leaves(leaf_nodes, touched.astype(np.int64), nodes, adj,
                                   *out) == -1
    assert compiled.reached_leaves(np.array([0, 3], np.int64), touched, nodes, adj,
                                   *out) == -1
    nodes[2, tape_mod.F_VOFF] = 4  # past the arena
    assert compiled.reached_leaves(leaf_nodes, touched, nodes, adj, *out) == -1
    with pytest.raises(TypeError):
        compiled.reached_leaves(leaf_nodes, touched)


def _leaf_program(lib, write):
    """A graph over 14 leaves of every kind _write_leaf tells apart, differentiated twice
    (the second backward accumulates); ``write``: leaf_grads' C writer, or None."""
    from numbagrad.autograd import leaf_grads
    posts = []
    values = [0.25 * i - 1.0 for i in range(8)]
    leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
    leaves += [lib.tensor(0.5, dtype=lib.float32, requires_grad=True),  # float32
               lib.tensor(1.5, dtype=lib.float64),  # needs no gradient
               lib.nn.Parameter(lib.tensor(2.0, dtype=lib.float64)),
               lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True),  # not 0-d
               lib.tensor(0.75, dtype=lib.float64, requires_grad=True),  # hooked
               lib.tensor(-0.5, dtype=lib.float64, requires_grad=True)]  # post-hooked
    leaves[12].register_hook(lambda g: g * 3)
    leaves[13].register_post_accumulate_grad_hook(lambda t: posts.append(t.grad.item()))
    with pytest.MonkeyPatch.context() as mp:
        if lib is ng:
            mp.setattr(leaf_grads, "write_scalar_grads", write)
        for _ in range(2):
            y = sum(x * x * (i + 1) for i, x in enumerate(leaves[:8]))
            y = y + leaves[8] * leaves[9] + leaves[10].tanh() + leaves[11].sum() * leaves[12]
            (y + leaves[13] * leaves[12]).backward()
    return leaves, posts


@needs_ext
def test_scalar_grads_equal_pythons():
    """The C writer's .grad tensors equal _write_leaf's slot for slot (a 0-d float64 or
    float32 leaf, a Parameter; hooked, post-hooked and 1-d leaves handed to Python, as is
    every leaf of the second, accumulating backward), and torch's values."""
    ours, posts = _leaf_program(ng, fast_push.write_scalar_grads)
    ref, ref_posts = _leaf_program(ng, None)
    theirs, torch_posts = _leaf_program(torch, None)
    slots = [n for n in ng.Tensor.__slots__ if n != "__weakref__"]
    assert posts == ref_posts == pytest.approx(torch_posts) and len(posts) == 2
    for t, r, o in zip(ours, ref, theirs):
        assert (t.grad is None) == (r.grad is None) == (o.grad is None)
        if t.grad is None:
            continue
        for name in slots:
            got, want = getattr(t.grad, name, None), getattr(r.grad, name, None)
            assert got is want or type(got) is type(want) and np.all(got == want), name
        np.testing.assert_allclose(np.asarray(t.grad), o.grad.numpy(), rtol=1e-6)
        assert np.asarray(t.grad).dtype == o.grad.numpy().dtype


@needs_ext
def test_write_scalar_grads_hands_back_what_it_does_not_write():
    """Arguments of other kinds: None (Python writes every leaf); a place out of range, a pair
    that is not one, an object that is no Tensor: handed back."""
    f64 = np.dtype(np.float64)
    leaf = ng.tensor(1.0, dtype=ng.float64, requires_grad=True)
    leaves = [(0, leaf), (1, "no tensor"), [2, leaf]]
    assert compiled.write_scalar_grads((0,), [0], [0], [1.0], f64) is None
    assert compiled.write_scalar_grads(leaves, [0, 1], [0], [1.0], f64) is None
    assert compiled.write_scalar_grads(leaves, [3, 1, 2], [0, 0, 0],
                                       [np.float64(1.0)] * 3, f64) == [0, 1, 2]
    assert leaf.grad is None
    assert compiled.write_scalar_grads(leaves, [0], [0], [np.float64(2.5)], f64) == []
    assert leaf.grad.item() == 2.5 and type(leaf.grad._data) is np.float64
    with pytest.raises(TypeError):
        compiled.write_scalar_grads(leaves, [0])
