"""The one reader of the op table's formulas.

A formula is one Python expression over a scalar element: ``a``, ``b`` (the operands), ``y``
(the output), ``g`` (the output's gradient), ``m`` (a mask element), ``f0``, ``f1`` (float
attributes), calls of vmath's and the table's functions. Kernel generation, the compiled
scalar stream and fused regions rename its names and ask which it reads; the differentiable
backward turns it into a function of Tensors. Each text is parsed once, here, with ``ast``.
"""

import ast
import copy
from functools import cache

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)


class Formula:
    """A parsed formula: its expression tree and what it names."""

    __slots__ = ("tree", "names", "calls", "_spans")

    def __init__(self, text):
        self.tree = ast.parse(text, mode="eval").body
        nodes = list(ast.walk(self.tree))
        self.names = frozenset(n.id for n in nodes if isinstance(n, ast.Name))
        self.calls = frozenset(_callee(n.func) for n in nodes if isinstance(n, ast.Call))
        # where each name stands in the text (for rename), last first
        self._spans = sorted(((n.col_offset, n.end_col_offset, n.id) for n in nodes
                              if isinstance(n, ast.Name)), reverse=True)


def _callee(func):
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


@cache
def parse(text):
    """``text`` parsed (memoized: formulas are few and read many times)."""
    if "\n" in text:
        raise ValueError(f"a formula is one line: {text!r}")
    return Formula(text)


def uses(formulas, name):
    """Whether ``formulas`` (one text, or several: None for none) name ``name`` (a
    variable, or a function they call)."""
    if isinstance(formulas, str):
        return name in parse(formulas).names
    return any(f and name in parse(f).names for f in formulas)


def calls(text):
    """The names of the functions formula ``text`` calls."""
    return parse(text).calls


def single_call(text, name):
    """The function formula ``text`` is, when it is one call of a plain function on variable
    ``name`` alone (``"sin(a)"``: ``"sin"``); else None."""
    tree = parse(text).tree
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and not tree.keywords \
            and len(tree.args) == 1 and isinstance(tree.args[0], ast.Name) and \
            tree.args[0].id == name:
        return tree.func.id
    return None


def rename(text, names):
    """``text`` with each variable in ``names`` (a dict) replaced by its value, the rest of
    the text as it was (generated kernels' sources, and so their cache keys, stay put)."""
    out = text
    for start, end, name in parse(text)._spans:
        new = names.get(name)
        if new is not None:
            out = out[:start] + new + out[end:]
    return out


def arithmetic_steps(text):
    """How many times ``text`` rounds in arithmetic: its +, -, * and / between two operands
    and its sqrt calls; None if it calls anything else or raises to a power."""
    steps = 0
    for node in ast.walk(parse(text).tree):
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                return None
            if isinstance(node.op, _ARITHMETIC):
                steps += 1
        elif isinstance(node, ast.Call):
            steps += _callee(node.func) == "sqrt"
    return steps


def compared(text):
    """The variables that stand right before a comparison operator in ``text`` (an
    attribute compared so chooses a branch: ``f0 > 0``, ``a * f0 > f1``'s f0)."""
    return frozenset(name for _, end, name in parse(text)._spans
                     if text[end:].lstrip().startswith(("<", ">", "==", "!=")))


def powers_of(text, name):
    """Whether ``name`` is the base of a power in ``text`` (``f0 ** a``)."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and
               isinstance(n.left, ast.Name) and n.left.id == name
               for n in ast.walk(parse(text).tree))


def elementwise_function(text, params, namespace):
    """``text`` as a Python function of ``params`` (names) that evaluates elementwise on
    arrays: its conditional, ``and``/``or`` and comparisons become calls of ``_where(c, x,
    y)``, ``_and(*xs)``, ``_or(*xs)`` and ``_cmp(kind, x, y)`` (kind "gt", "ge", "lt",
    "le", "eq", "ne"), which ``namespace`` gives with the functions the formula calls."""
    body = ast.fix_missing_locations(_Elementwise().visit(copy.deepcopy(parse(text).tree)))
    # a real function (not eval per call): the formula is its return expression
    fn_def = ast.parse(f"def derivative({', '.join(params)}):\n    return 0")
    fn_def.body[0].body[0].value = body
    scope = dict(namespace)
    code = compile(ast.fix_missing_locations(fn_def), f"<derivative {text!r}>", "exec")
    exec(code, scope)  # noqa: S102 - formulas come from the op table
    return scope["derivative"]


_CMP = {ast.Gt: "gt", ast.GtE: "ge", ast.Lt: "lt", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}


class _Elementwise(ast.NodeTransformer):
    """A formula's branches and comparisons as calls (elementwise_function)."""

    def visit_IfExp(self, node):  # noqa: N802 - ast's naming
        self.generic_visit(node)
        return ast.Call(ast.Name("_where", ast.Load()), [node.test, node.body, node.orelse], [])

    def visit_BoolOp(self, node):  # noqa: N802
        self.generic_visit(node)
        fn = "_and" if isinstance(node.op, ast.And) else "_or"
        return ast.Call(ast.Name(fn, ast.Load()), node.values, [])

    def visit_Compare(self, node):  # noqa: N802
        self.generic_visit(node)
        if len(node.ops) != 1:
            raise ValueError("chained comparisons are not supported in derivative formulas")
        return ast.Call(ast.Name("_cmp", ast.Load()),
                        [ast.Constant(_CMP[type(node.ops[0])]), node.left, node.comparators[0]],
                        [])
