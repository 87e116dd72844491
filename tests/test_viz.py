"""numbagrad.viz (graph pictures, the tape as a table) and numbagrad.autograd.graph (Node,
metadata of graph nodes, the tape as read-only arrays)."""

import os
import re
import stat
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import numbagrad
from numbagrad import nn, viz
from numbagrad.autograd import graph
from numbagrad.core.tape import BIG
from numbagrad.seed_examples import SEED_004_SAMPLE_MODEL

SVG = "{http://www.w3.org/2000/svg}"


def seed_004():
    """Seed 004 up to its loss (before backward), run on numbagrad: its namespace."""
    source, cut, _ = SEED_004_SAMPLE_MODEL.partition("# Backward pass")
    assert cut, "seed 004 changed: no '# Backward pass' to stop at"
    source = (source.replace("import torch.nn as nn", "import numbagrad.nn as nn")
              .replace("import torch.optim as optim", "import numbagrad.optim as optim")
              .replace("import torch\n", "import numbagrad as torch\n"))
    assert "import torch" not in source
    ns = {}
    exec(compile(source, "seed-004", "exec"), ns)
    return ns


def walk(tensor):
    """Every grad_fn reachable from ``tensor`` through next_functions (as torchviz walks)."""
    seen, stack = [], [tensor.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.append(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return seen


def svg_texts(svg):
    root = ET.fromstring(svg)
    return [t.text for t in root.iter(SVG + "text")]


def boxes_of(svg):
    """(x, y, width, height) of every box of a pure-Python-layout SVG."""
    root = ET.fromstring(svg)
    return [tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))
            for r in root.iter(SVG + "rect")]


# ---- draw -------------------------------------------------------------------------------
def test_seed_004_picture_names_the_ops_and_parameters():
    ns = seed_004()
    model, loss = ns["model"], ns["loss"]
    picture = viz.draw(loss, params=dict(model.named_parameters()), layout="python")
    svg = picture._repr_svg_()
    texts = svg_texts(svg)  # parses as XML, or raises
    for name in ("AddmmBackward0", "MseLossBackward0", "TBackward0", "weight", "bias"):
        assert name in texts, name
    # each leaf box tells its shape, dtype and that it requires grad
    i = texts.index("weight")
    assert texts[i + 1:i + 3] == ["(1, 1) float32", "requires_grad=True"]
    i = texts.index("bias")
    assert texts[i + 1:i + 3] == ["(1,) float32", "requires_grad=True"]
    # x and y need no gradient: drawn as constants that say so
    assert texts.count("requires_grad=False") == 2


def test_picture_names_the_same_ops_as_torchs_graph():
    torch = pytest.importorskip("torch")
    ns = seed_004()
    ours = {b.lines[0] for b in viz.draw(ns["loss"]).boxes if b.kind == "op"}
    model = torch.nn.Linear(1, 1)
    x = torch.tensor([[1.0], [2.0], [3.0]])
    loss = torch.nn.MSELoss()(model(x), 2 * x)
    theirs = {fn.name() for fn in walk(loss) if "AccumulateGrad" not in fn.name()}
    assert ours == theirs


def test_every_op_and_leaf_reachable_is_drawn_once():
    torch = numbagrad
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    params = dict(mlp.named_parameters())
    loss = nn.CrossEntropyLoss()(mlp(torch.randn(5, 4)), torch.tensor([0, 1, 2, 1, 0]))
    loss = loss + 0.01 * sum((p ** 2).sum() for p in mlp.parameters())
    picture = viz.draw(loss, params=params, layout="python")
    fns = walk(loss)
    ops = [b for b in picture.boxes if b.kind == "op"]
    leaves = [b for b in picture.boxes if b.kind == "leaf"]
    assert len(ops) == sum(not isinstance(f, graph.AccumulateGrad) for f in fns)
    assert sorted(b.lines[0] for b in leaves) == sorted(params)
    # one arrow per (input, consumer) pair: count them from next_functions
    arrows = {(f, g) for g in fns for f, _ in g.next_functions if f is not None}
    # inputs that need no gradient (next_functions: None) are constant boxes, one per tensor
    const_uses = {(id(m.tensor), g) for g in fns if not isinstance(g, graph.AccumulateGrad)
                  for (f, _), m in zip(g.next_functions, graph.input_metadata(g)) if f is None}
    consts = sum(1 for b in picture.boxes if b.kind == "const")
    assert consts == len({t for t, _ in const_uses}) >= 1  # the batch at least
    assert len(picture.edges) == len(arrows) + len(const_uses) + 1  # + the output's arrow
    svg = picture.svg()
    assert len(ET.fromstring(svg).findall(f"{SVG}path[@class='edge']")) == len(picture.edges)


def test_python_layout_boxes_do_not_overlap_and_arrows_point_down():
    torch = numbagrad
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    h = [a * b, a + b, a.exp(), b.sin()]
    out = (h[0] * h[1] + h[2] * h[3]).tanh().sum() + (h[0] - h[3]).sum()
    picture = viz.draw(out, layout="python")
    svg = picture.svg()
    rects = boxes_of(svg)
    assert len(rects) == len(picture.boxes)
    for i, (x0, y0, w0, h0) in enumerate(rects):
        for x1, y1, w1, h1 in rects[i + 1:]:
            apart = x0 + w0 <= x1 or x1 + w1 <= x0 or y0 + h0 <= y1 or y1 + h1 <= y0
            assert apart, "two boxes overlap"
    for path in ET.fromstring(svg).iter(SVG + "path"):
        if path.get("class") != "edge":
            continue
        ys = [float(v) for v in re.findall(r"[-\d.]+,([-\d.]+)", path.get("d"))]
        assert ys[0] < ys[-1]  # from a producer above to its consumer below
    # the output is the lowest box
    out_box = [r for r, b in zip(rects, picture.boxes) if b.kind == "output"][0]
    assert out_box[1] == max(r[1] for r in rects)


def test_constants_can_be_left_out():
    ns = seed_004()
    full = viz.draw(ns["loss"])
    bare = viz.draw(ns["loss"], show_constants=False)
    assert [b.kind for b in bare.boxes].count("const") == 0
    assert sorted(b.lines for b in bare.boxes) == \
        sorted(b.lines for b in full.boxes if b.kind != "const")
    assert len(bare.edges) == len(full.edges) - 2  # x into addmm, y into mse_loss
    ET.fromstring(bare.svg())


def test_several_outputs_share_their_subgraph():
    torch = numbagrad
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    shared = x.exp()
    p = viz.draw((shared.sum(), (shared * 2).mean()))
    assert sum(b.kind == "output" for b in p.boxes) == 2
    names = [b.lines[0] for b in p.boxes]
    assert names.count("ExpBackward0") == 1
    assert names.count("AccumulateGrad") == 1


def test_a_leaf_is_drawn_as_itself():
    w = numbagrad.zeros(3, requires_grad=True)
    p = viz.draw(w, params={"w": w})
    assert [(b.kind, b.lines) for b in p.boxes] == \
        [("leaf", ("w", "(3,) float32", "requires_grad=True"))]
    ET.fromstring(p.svg())


def test_names_are_escaped_in_svg_and_dot():
    w = numbagrad.ones(2, requires_grad=True)
    name = 'w<"&>\\'
    p = viz.draw((w * 2).sum(), params={name: w}, layout="python")
    assert name in svg_texts(p.svg())
    assert 'w<\\"&>\\\\' in p.source
    # one node statement per box, one arrow per edge
    assert len(re.findall(r"^  n\d+ \[", p.source, re.M)) == len(p.boxes)
    assert p.source.count(" -> ") == len(p.edges)


def test_save_writes_svg_or_dot(tmp_path):
    out = (numbagrad.ones(2, requires_grad=True) * 3).sum()
    p = viz.draw(out, layout="python")
    ET.parse(p.save(tmp_path / "g.svg"))
    assert p.save(tmp_path / "g.dot").read_text() == p.source


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for dot")
def test_graphviz_dot_is_used_when_installed(tmp_path, monkeypatch):
    fake = tmp_path / "dot"
    fake.write_text(f'#!/bin/sh\ncat > "{tmp_path}/stdin.dot"\n'
                    "echo '<svg xmlns=\"http://www.w3.org/2000/svg\"><text>from dot</text></svg>'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ["PATH"])
    out = (numbagrad.ones(2, requires_grad=True) * 3).sum()
    p = viz.draw(out)
    assert svg_texts(p._repr_svg_()) == ["from dot"]
    assert (tmp_path / "stdin.dot").read_text() == p.source
    assert "from dot" not in svg_texts(viz.draw(out, layout="python").svg())


def test_layout_dot_without_graphviz_raises(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no dot
    p = viz.draw((numbagrad.ones(2, requires_grad=True) * 3).sum(), layout="dot")
    with pytest.raises(RuntimeError, match="dot"):
        p.svg()
    with pytest.raises(ValueError, match="layout"):
        viz.draw(numbagrad.ones(1), layout="neato")


# ---- tape_table -------------------------------------------------------------------------
def test_tape_table_rows_match_the_graph():
    torch = numbagrad
    w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    x = torch.tensor([1.0, 2.0])
    b = torch.tensor(0.1, requires_grad=True)
    h = w @ x
    s = h.sin()
    out = s.sum() + b
    other = (w * 3).cos().sum()  # recorded on the same tape, not a dependency of out
    table = viz.tape_table(out, params={"w": w, "b": b, "x": x})
    fns = walk(out)
    op_rows = table[table["needs_grad"] & (table["grad_fn"] != "AccumulateGrad")]
    assert sorted(op_rows["grad_fn"]) == sorted(f.name() for f in fns
                                                if "AccumulateGrad" not in f.name())
    assert "CosBackward0" not in table["grad_fn"]
    assert "CosBackward0" in viz.tape_table(other)["grad_fn"]
    # the leaves by name, the constant x too; only it does not need grad
    named = {r["name"]: r for r in table}
    assert named["w"]["grad_fn"] == "AccumulateGrad" and named["w"]["shape"] == (2, 2)
    assert named["b"]["shape"] == () and named["b"]["needs_grad"]
    assert not named["x"]["needs_grad"] and named["x"]["op"] == "const"
    assert list(table["needs_grad"]).count(False) == 1
    # rows in tape order, each argument a row of the table, the tensor's node last
    nodes = list(table["node"])
    assert nodes == sorted(nodes)
    for row in table:
        assert all(a in nodes and a < row["node"] for a in row["args"])
    assert table[-1]["grad_fn"] == out.grad_fn.name()
    # shapes and dtypes as the tensors have them
    by_fn = {r["grad_fn"]: r for r in table}
    assert by_fn["MvBackward0"]["shape"] == tuple(h.shape) == (2,)
    assert by_fn["SinBackward0"]["shape"] == tuple(s.shape)
    assert set(table["dtype"]) == {"float32"}


def test_tape_table_dtypes_of_float64_and_big_nodes():
    x = numbagrad.ones(BIG, dtype=numbagrad.float32, requires_grad=True)
    y = numbagrad.ones(3, dtype=numbagrad.float64, requires_grad=True)
    big = (x * 2).exp()
    t = viz.tape_table(big.sum())
    assert list(t["dtype"]) == ["float32"] * 4
    assert graph.node_metadata(big.grad_fn).shape == (BIG,)
    t = viz.tape_table((y * 2).sum())
    assert list(t["dtype"]) == ["float64"] * 3


def test_tape_table_reprs():
    torch = numbagrad
    x = torch.tensor(0.5, requires_grad=True)
    out = x
    for _ in range(40):
        out = out.sin() * 1.5
    table = viz.tape_table(out)
    assert len(table) == 81
    text = repr(table)
    assert text.splitlines()[0].split() == list(viz.COLUMNS)
    assert "..." in text and "[81 rows]" in text
    assert "SinBackward0" in text and "MulBackward0" in text
    html = table._repr_html_()
    root = ET.fromstring(f"<div>{html}</div>")  # well-formed
    assert [th.text for th in root.iter("th")] == list(viz.COLUMNS)
    assert len(root.findall(".//tbody/tr")) == table.max_rows + 1  # + the "…" row
    assert len(viz.tape_table(torch.ones(2, requires_grad=True))) == 0


# ---- autograd.graph --------------------------------------------------------------------
def test_grad_fns_are_graph_nodes():
    ns = seed_004()
    fn = ns["loss"].grad_fn
    assert isinstance(fn, graph.Node)
    assert isinstance(fn, numbagrad.autograd.graph.Node)
    for f in walk(ns["loss"]):
        assert isinstance(f, graph.Node)
    assert not isinstance(ns["x"], graph.Node)


def test_metadata_of_nodes_and_their_inputs():
    ns = seed_004()
    loss, model = ns["loss"], ns["model"]
    meta = graph.node_metadata(loss.grad_fn)
    assert (meta.shape, meta.dtype, meta.requires_grad) == ((), numbagrad.float32, True)
    addmm = loss.grad_fn.next_functions[0][0]
    inputs = graph.input_metadata(addmm)
    assert len(inputs) == len(addmm.next_functions) == 3
    for (fn, _), m in zip(addmm.next_functions, inputs):
        assert (fn is None) == (not m.requires_grad)
    assert inputs[0].tensor is model.bias and inputs[1].tensor is ns["x"]
    assert inputs[2].shape == (1, 1) and inputs[2].tensor is None  # t(weight): not a source
    leaf = addmm.next_functions[0][0]
    assert graph.node_metadata(leaf).tensor is model.bias
    assert graph.input_metadata(leaf) == ()
    with pytest.raises(TypeError):
        graph.node_metadata(loss)


def test_tape_arrays_are_read_only_and_describe_the_tape():
    ns = seed_004()
    loss = ns["loss"]
    arrays = graph.tape_arrays(loss)
    root = int(arrays["root"])
    # the whole tape (other graphs may share it): at least the rows loss depends on
    assert arrays["nodes"].shape[1] == len(graph.NODE_FIELD_NAMES)
    assert set(viz.tape_table(loss)["node"]) <= set(range(len(arrays["nodes"])))
    assert root == viz.tape_table(loss)["node"][-1]
    for name, a in arrays.items():
        assert isinstance(a, np.ndarray | np.generic), name
        if isinstance(a, np.ndarray) and a.size:
            with pytest.raises(ValueError, match="read-only"):
                a.reshape(-1)[0] = 1
    # the root's record: its op, its (empty) shape, its argument nodes
    from numbagrad.engine.registry import OPS
    assert OPS[arrays["code"][root]].grad_fn == "MseLossBackward0"
    assert arrays["ndim"][root] == 0
    args = arrays["args"][arrays["arg_ptr"][root]:][:arrays["nargs"][root]]
    assert OPS[arrays["code"][args[0]]].grad_fn == "AddmmBackward0"
    p = arrays["shape_ptr"][args[0]]
    assert tuple(arrays["shapes"][p:p + arrays["ndim"][args[0]]]) == (3, 1)
    # small values live in the arena: the loss's value is there
    assert arrays["val"][arrays["voff"][root]] == pytest.approx(loss.item())
    # a snapshot: the tape keeps recording (a live view would forbid it) and backward runs
    again = ns["criterion"](ns["model"](ns["x"]), ns["y"])
    again.backward()
    assert len(graph.tape_arrays(again)["nodes"]) > len(arrays["nodes"])
    with pytest.raises(ValueError, match="leaf"):
        graph.tape_arrays(ns["model"].weight)
