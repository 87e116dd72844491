"""engine/formula.py, the one reader of the op table's formulas: what it reports about a
formula, renaming that leaves the rest of the text as it was, the elementwise function, and
that no other module runs a regex or ``ast`` over formula text."""

import ast
import math
from pathlib import Path

import numpy as np
import pytest

from numbagrad.engine import formula, registry

PACKAGE = Path(__file__).resolve().parent.parent / "numbagrad"


def _table_formulas():
    out = set()
    for op in registry.OPS:
        out.update(f for f in (op.fwd, *(op.grads or ())) if f)
    return sorted(out)


def test_every_table_formula_parses_and_its_names_are_the_variables_it_reads():
    formulas = _table_formulas()
    assert len(formulas) > 200
    for text in formulas:
        names = {n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)}
        assert formula.parse(text).names == names
        for name in ("g", "a", "b", "y", "m", "f0", "f1"):
            assert formula.uses(text, name) == (name in names)


def test_uses_reads_whole_names_and_takes_several_formulas():
    assert formula.uses("g * exp(a)", "a")
    assert not formula.uses("g * exp(a)", "ex")
    assert not formula.uses("g * ab", "a")
    assert formula.uses(["g * a", None, "g * b"], "b")
    assert not formula.uses([None, "g"], "a")
    assert formula.calls("g * exp(a) + math.sqrt(b)") == {"exp", "sqrt"}


def test_rename_changes_only_the_named_variables():
    assert formula.rename("a * ab + b / a", {"a": "av"}) == "av * ab + b / av"
    assert formula.rename("g if (a >= f0 and a <= f1) else 0.0",
                          {"g": "G", "a": "A", "f0": "F0"}) == \
        "G if (A >= F0 and A <= f1) else 0.0"
    assert formula.rename("exp(a)", {"exp": "x", "a": "y"}) == "x(y)"  # (a callee is a name)
    assert formula.rename("1e-5 * a", {"e": "E"}) == "1e-5 * a"


def test_arithmetic_steps():
    assert formula.arithmetic_steps("a + b") == 1
    assert formula.arithmetic_steps("-a") == 0
    assert formula.arithmetic_steps("1e-5 * a") == 1
    assert formula.arithmetic_steps("a * b + 1.0") == 2
    assert formula.arithmetic_steps("sqrt(a)") == 1
    assert formula.arithmetic_steps("a if a > 0.0 else 0.0") == 0
    assert formula.arithmetic_steps("a ** 2") is None


def test_rounds_once_follows_the_steps():
    ops = {op.name: op for op in registry.OPS}
    assert ops["add"].rounds_once and ops["relu"].rounds_once and ops["sqrt"].rounds_once
    assert not ops["tanh"].rounds_once and not ops["pow_scalar"].rounds_once


def test_compared_and_powers_of():
    assert formula.compared("g if a * f0 > f1 else 0.0") == {"f0"}
    assert formula.compared("a if abs(f0) < 0.5 else b") == frozenset()
    assert formula.compared("a if (a >= f0 or a != a) else f0") == {"a"}
    assert formula.powers_of("f0 ** a", "f0")
    assert not formula.powers_of("a ** f0", "f0")


def _np_namespace():
    kinds = {"gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal,
             "eq": np.equal, "ne": np.not_equal}
    return {"_where": np.where, "_and": np.logical_and, "_or": np.logical_or,
            "_cmp": lambda kind, x, y: kinds[kind](x, y), "abs": np.abs, "exp": np.exp}


@pytest.mark.parametrize("text", ["g if (a >= f0 and a <= f1) else 0.0",
                                  "a if (a >= f0 or a != a) else f0",
                                  "g * exp(a) if abs(a) > 0.5 else -g"])
def test_elementwise_function_equals_the_formula_element_by_element(text):
    params = ("g", "a", "b", "y", "f0", "f1", "m")
    fn = formula.elementwise_function(text, params, _np_namespace())
    a = np.array([-2.0, -0.25, 0.0, 0.3, 0.7, 3.0, np.nan])
    got = fn(1.5, a, None, None, -0.5, 0.5, None)
    want = [eval(text, {"abs": abs, "exp": math.exp},  # noqa: S307 - the test's own texts
                 {"g": 1.5, "a": x, "f0": -0.5, "f1": 0.5}) for x in a]
    np.testing.assert_array_equal(np.broadcast_to(got, a.shape), want)


def test_elementwise_function_refuses_a_chained_comparison():
    with pytest.raises(ValueError, match="chained comparisons"):
        formula.elementwise_function("g if 0 < a < 1 else 0.0", ("g", "a"), _np_namespace())


def test_a_formula_is_one_line():
    with pytest.raises(ValueError, match="one line"):
        formula.parse("a +\nb")


def _reads_formula(node):
    """Whether an expression names an op's formula text: ``op.fwd``, ``op.grads``, or a
    variable called formula(s)."""
    return any(isinstance(n, ast.Attribute) and n.attr in ("fwd", "grads") or
               isinstance(n, ast.Name) and "formula" in n.id for n in ast.walk(node))


def test_no_other_module_parses_formula_text():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "formula.py" and path.parent.name == "engine":
            continue
        for call in ast.walk(ast.parse(path.read_text())):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
                    isinstance(call.func.value, ast.Name) and \
                    call.func.value.id in ("re", "ast", "tokenize") and \
                    any(_reads_formula(arg) for arg in call.args):
                offenders.append(f"{path.relative_to(PACKAGE)}:{call.lineno}")
    assert not offenders, f"formula text parsed outside engine/formula.py: {offenders}"


def test_single_call_names_a_formula_that_is_one_call_on_the_variable():
    assert formula.single_call("sin(a)", "a") == "sin"
    assert formula.single_call("sin(a) + 1.0", "a") is None
    assert formula.single_call("sin(b)", "a") is None
    assert formula.single_call("pw(a, f0)", "a") is None
    assert formula.single_call("math.sin(a)", "a") is None
