"""numbagrad.viz: a picture of an autograd graph, and the tape as a table, for notebooks.

``draw(loss, params=dict(model.named_parameters()))`` walks ``grad_fn.next_functions`` as
torchviz's ``make_dot`` does and returns a picture that Jupyter shows as SVG: laid out by
Graphviz ``dot`` when it is installed, otherwise by ``numbagrad._svg_layout`` (pure Python).
``tape_table(loss)`` lists the tape records the tensor depends on.
"""

import html
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np

from . import _svg_layout
from .autograd import graph
from .engine.registry import BRIDGE, CONST, LEAF, OPS
from .tensor import AccumulateGrad, GradFn, Tensor

__all__ = ["draw", "GraphPicture", "tape_table", "TapeTable"]

# torchviz's colours: outputs green, parameters (leaves) blue; ops grey, constants white
FILL = {"output": "#caff70", "op": "#e8e8e8", "leaf": "#add8e6", "const": "#ffffff"}
_QUALIFIER = "torch::autograd::"


def _short(fn):
    """torch qualifies some names (torch::autograd::AccumulateGrad); torchviz shows them
    without, and so do the pictures and tables here."""
    name = fn.name()
    return name[len(_QUALIFIER):] if name.startswith(_QUALIFIER) else name


def _describe(shape, dtype):
    return f"{tuple(shape)} {dtype.name}"


def _as_tensors(tensor_or_tensors):
    if isinstance(tensor_or_tensors, Tensor):
        return (tensor_or_tensors,)
    tensors = tuple(tensor_or_tensors)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensors, got {type(t).__name__}")
    return tensors


# ---- the graph ------------------------------------------------------------------------------
def draw(tensor_or_tensors, params=None, show_constants=True, layout="auto"):
    """A picture of the graph that produced ``tensor_or_tensors`` (a Tensor or a sequence).

    ``params``: a mapping name -> Tensor (e.g. ``dict(model.named_parameters())``) naming the
    leaves, inputs or outputs it contains. ``show_constants``: also draw the inputs that need
    no gradient (``next_functions`` lists them as None). ``layout``: "auto" (``dot`` when
    installed, else the pure-Python layout), "dot" or "python".

    Args:
        tensor_or_tensors: a Tensor or a sequence of Tensors, the graph's outputs.
        params: a mapping name -> Tensor naming the tensors it contains (default None).
        show_constants: whether to draw the inputs that need no gradient (default True).
        layout: "auto", "dot" or "python" (default "auto").

    Returns:
        A ``GraphPicture``.
    """
    if layout not in ("auto", "dot", "python"):
        raise ValueError(f"layout must be 'auto', 'dot' or 'python', not {layout!r}")
    walk = _Walk(params, show_constants)
    walk.run(_as_tensors(tensor_or_tensors))
    return GraphPicture(walk.boxes, walk.edges, layout)


class Box:
    """One box of a picture: ``kind`` is output, op, leaf or const; ``lines`` its text."""

    __slots__ = ("kind", "lines", "tooltip")

    def __init__(self, kind, lines, tooltip):
        self.kind, self.lines, self.tooltip = kind, tuple(lines), tooltip

    def __repr__(self):
        return f"Box({self.kind!r}, {self.lines!r})"


class _Walk:
    """Collects boxes and edges (producer index, consumer index) from the outputs down."""

    def __init__(self, params, show_constants):
        self.names = {id(t): name for name, t in (params or {}).items()}
        self.show_constants = show_constants
        self.boxes, self.edges, self.index = [], [], {}
        self.pending = []  # op nodes whose inputs are still to be walked

    def box(self, key, kind, lines, tooltip):
        if key not in self.index:
            self.index[key] = len(self.boxes)
            self.boxes.append(Box(kind, lines, tooltip))
        return self.index[key]

    def tensor_lines(self, t, fallback):
        return [self.names.get(id(t), fallback), _describe(t.shape, t.dtype),
                f"requires_grad={t.requires_grad}"]

    def run(self, outputs):
        for i, t in enumerate(outputs):
            title = self.names.get(id(t), "output" if len(outputs) == 1 else f"output {i}")
            fn = t.grad_fn
            if fn is None:  # a leaf, or a tensor outside any graph: only itself to show
                self.box(("tensor", id(t)), "leaf" if t.requires_grad else "const",
                         self.tensor_lines(t, title), title)
                continue
            out = self.box(("output", i), "output", [title, _describe(t.shape, t.dtype)],
                           title)
            self.edges.append((self.node(fn), out))
        while self.pending:
            fn = self.pending.pop()
            me = self.index[fn]
            metas = graph.input_metadata(fn)
            for k, ((nxt, _), meta) in enumerate(zip(fn.next_functions, metas)):
                if nxt is not None:
                    self.edges.append((self.node(nxt), me))
                elif self.show_constants:
                    self.edges.append((self.constant(fn, k, meta), me))
        self.edges = list(dict.fromkeys(self.edges))  # an input used twice: one arrow

    def node(self, fn):
        """The box of grad_fn ``fn``; a new op box is queued so that its inputs get walked."""
        if fn in self.index:
            return self.index[fn]
        if isinstance(fn, AccumulateGrad):
            leaf = fn.variable
            meta = graph.node_metadata(fn)
            lines = (self.tensor_lines(leaf, "AccumulateGrad") if leaf is not None else
                     ["AccumulateGrad", _describe(meta.shape, meta.dtype), "requires_grad=True"])
            return self.box(fn, "leaf", lines, "AccumulateGrad")
        meta = graph.node_metadata(fn)
        self.pending.append(fn)
        return self.box(fn, "op", [_short(fn), _describe(meta.shape, meta.dtype)], fn.name())

    def constant(self, fn, k, meta):
        tooltip = f"input {k} of {_short(fn)}"
        if meta.tensor is not None:  # the same constant feeding several ops: one box
            return self.box(("const", id(meta.tensor)), "const",
                            self.tensor_lines(meta.tensor, "constant"), tooltip)
        return self.box(("const", fn, k), "const", ["constant", _describe(meta.shape, meta.dtype),
                                                    f"requires_grad={meta.requires_grad}"],
                        tooltip)


def _dot_quote(*lines):
    """A DOT string literal; its lines joined with DOT's centred line break, \\n."""
    return '"' + "\\n".join(t.replace("\\", "\\\\").replace('"', '\\"') for t in lines) + '"'


class GraphPicture:
    """What ``draw`` returns: Jupyter shows it through ``_repr_svg_``; ``source`` is the
    Graphviz DOT text, ``save(path)`` writes the SVG (or the DOT text for .dot / .gv).

    Args:
        boxes: the graph's boxes (``draw`` makes them), in node order.
        edges: the (from, to) pairs of box indices.
        layout: "auto", "dot" or "python", as for ``draw`` (default "auto").
    """

    def __init__(self, boxes, edges, layout="auto"):
        self.boxes = tuple(boxes)
        self.edges = tuple(edges)
        self.layout = layout
        self._svg = None

    @property
    def source(self):
        """The graph in Graphviz's DOT language."""
        lines = ["digraph {",
                 '  node [shape=box, style="filled,rounded", fontname="monospace", '
                 "fontsize=11]"]
        for i, b in enumerate(self.boxes):
            style = ', style="filled,rounded,dashed"' if b.kind == "const" else ""
            lines.append(f"  n{i} [label={_dot_quote(*b.lines)}, "
                         f'fillcolor="{FILL[b.kind]}", tooltip={_dot_quote(b.tooltip)}{style}]')
        lines += [f"  n{u} -> n{v}" for u, v in self.edges]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def svg(self):
        """The picture as an SVG document (a string)."""
        if self._svg is None:
            dot = shutil.which("dot") if self.layout in ("auto", "dot") else None
            if dot is None and self.layout == "dot":
                raise RuntimeError("layout='dot' needs Graphviz's `dot` on PATH")
            self._svg = self._dot_svg(dot) if dot else None
            if self._svg is None:
                self._svg = _svg_layout.render(
                    [(b.lines, FILL[b.kind], b.kind == "const", b.tooltip) for b in self.boxes],
                    self.edges)
        return self._svg

    def _dot_svg(self, dot):
        try:
            done = subprocess.run([dot, "-Tsvg"], input=self.source.encode(),
                                  capture_output=True, timeout=60, check=True)
        except (OSError, subprocess.SubprocessError) as e:
            if self.layout == "dot":
                raise
            warnings.warn(f"Graphviz dot failed ({e}); using the built-in layout", stacklevel=3)
            return None
        return done.stdout.decode()

    def _repr_svg_(self):
        return self.svg()

    def save(self, path):
        """Write the picture to ``path``: SVG, or DOT for a ``.dot``/``.gv`` path.

        Args:
            path: the file to write (a string or a Path), as UTF-8 text.

        Returns:
            The path, a ``pathlib.Path``.
        """
        path = Path(path)
        text = self.source if path.suffix in (".dot", ".gv") else self.svg()
        path.write_text(text, encoding="utf-8")
        return path

    def __repr__(self):
        return f"<GraphPicture: {len(self.boxes)} boxes, {len(self.edges)} edges>"


# ---- the tape as a table --------------------------------------------------------------------
def tape_table(tensor, params=None):
    """The tape records ``tensor`` depends on, in tape order (the sweep visits them in
    reverse): node index, op code, op name, grad_fn name, argument nodes, shape, dtype,
    needs-grad flag, and the leaf's name from ``params`` (name -> Tensor) when known.
    A leaf tensor has no tape: the table is empty.

    Args:
        tensor: the Tensor whose records to list.
        params: a mapping name -> Tensor naming the leaves (default None).

    Returns:
        A ``TapeTable``.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"expected a Tensor, got {type(tensor).__name__}")
    rows = []
    tape = tensor._tape
    if tape is not None:
        names = {id(t): name for name, t in (params or {}).items()}
        sources = graph.source_tensors(tape)
        for node in _dependencies(tape, tensor._node):
            meta = graph.record_metadata(tape, node, sources)
            code = tape.code(node)
            rows.append((node, code, OPS[code].name, _grad_fn_name(tape, node, code),
                         tuple(tape.arg_nodes(node)), meta.shape, meta.dtype.name,
                         tape.needs_grad(node),
                         names.get(id(meta.tensor), "") if meta.tensor is not None else ""))
    return TapeTable(rows)


def _dependencies(tape, root):
    """The nodes ``root`` reads, directly or not, itself included, in ascending order.
    Arguments always precede their node on a tape, so one downward pass finds them all."""
    needed = bytearray(root + 1)
    needed[root] = 1
    for node in range(root, -1, -1):
        if needed[node]:
            for a in tape.arg_nodes(node):
                needed[a] = 1
    return [i for i in range(root + 1) if needed[i]]


def _grad_fn_name(tape, node, code):
    if code == LEAF.code:
        return "AccumulateGrad"
    if code == CONST.code:
        return ""  # needs no gradient: no grad_fn
    if code == BRIDGE.code:  # stands for a node of an older tape: show that node's name
        return _short(GradFn(*tape.bridges[node]))
    return _short(GradFn(tape, node))


COLUMNS = ("node", "code", "op", "grad_fn", "args", "shape", "dtype", "needs_grad", "name")


class TapeTable:
    """Rows of ``tape_table``: ``array`` is a NumPy structured array (``table["op"]`` gives
    a column, ``table[i]`` a row); shown as HTML in Jupyter; ``to_pandas()`` if installed.

    Attributes:
        max_rows: longer tables show their first and last ``max_rows // 2`` rows.

    Args:
        rows: the rows, tuples (node, code, op, grad_fn, args, shape, dtype, needs_grad,
            name) as ``tape_table`` makes them.
    """

    max_rows = 60  # longer tables show their first and last 30 rows, as pandas does

    def __init__(self, rows):
        def width(k):
            return max([len(r[k]) for r in rows] + [1])

        dtype = [("node", np.int64), ("code", np.int64), ("op", f"U{width(2)}"),
                 ("grad_fn", f"U{width(3)}"), ("args", object), ("shape", object),
                 ("dtype", "U8"), ("needs_grad", np.bool_), ("name", f"U{width(8)}")]
        self.array = np.empty(len(rows), dtype)
        for i, row in enumerate(rows):
            self.array[i] = row

    def __len__(self):
        return len(self.array)

    def __getitem__(self, key):
        return self.array[key]

    def __iter__(self):
        return iter(self.array)

    def to_pandas(self):
        """The table as a pandas DataFrame (needs pandas)."""
        import pandas as pd  # optional: only this method needs it
        return pd.DataFrame({c: list(self.array[c]) for c in COLUMNS})

    def _cells(self):
        """Header and rows as strings, the middle cut out of long tables (None marks it)."""
        def fmt(row):
            return [str(row["node"]), str(row["code"]), row["op"], row["grad_fn"],
                    ", ".join(map(str, row["args"])), str(tuple(row["shape"])), row["dtype"],
                    str(bool(row["needs_grad"])), row["name"]]
        rows = [fmt(r) for r in self.array]
        if len(rows) > self.max_rows:
            half = self.max_rows // 2
            rows = rows[:half] + [None] + rows[-half:]
        return list(COLUMNS), rows

    def __repr__(self):
        header, rows = self._cells()
        widths = [max([len(h)] + [len(r[i]) for r in rows if r is not None])
                  for i, h in enumerate(header)]
        out = ["  ".join(h.rjust(w) for h, w in zip(header, widths))]
        for r in rows:
            out.append("..." if r is None else "  ".join(c.rjust(w) for c, w in zip(r, widths)))
        out.append(f"[{len(self)} rows]")
        return "\n".join(out)

    def _repr_html_(self):
        header, rows = self._cells()
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        body = []
        for r in rows:
            cells = ([f'<td colspan="{len(header)}">…</td>'] if r is None else
                     [f"<td>{html.escape(c)}</td>" for c in r])
            body.append("<tr>" + "".join(cells) + "</tr>")
        return (f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
                f"<p>{len(self)} rows</p>")
