"""Type checking a user's script: ``mypy --strict`` sees numbagrad's types through the generated
stubs (numbagrad/**/*.pyi) and finds no error; the types it reveals are the runtime's; and the
stubs are what ``python -m numbagrad.stubgen`` generates from the runtime now."""

import builtins
import collections.abc
import importlib
import os
import pathlib
import re
import runpy
import subprocess
import sys
import typing

import pytest

import numbagrad
from numbagrad import stubgen
from numbagrad.stubgen.torch_types import split_union

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "typecheck" / "train_model.py"
# strict, as many users run it; the stubs keep the runtime's class tree, whose overrides change
# signatures as torch's do (ReduceLROnPlateau.step(metrics)): mypy reports nothing in an
# installed package, and here nothing of that kind
CONFIG = """[mypy]
strict = True
mypy_path = {root}
[mypy-numbagrad.*]
disable_error_code = override
"""
_NOTE = re.compile(r'^(?P<path>[^:]+):(?P<line>\d+): note: Revealed type is "(?P<type>.*)"$')


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory):
    """mypy's output on the script: (errors, {line: revealed type})."""
    pytest.importorskip("mypy")
    config = tmp_path_factory.mktemp("mypy") / "mypy.ini"
    config.write_text(CONFIG.format(root=ROOT))
    # its own process: mypy retunes the garbage collector of the process it runs in; no cache
    # (one cold run: writing one costs more than it saves)
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config),
                          "--cache-dir", os.devnull, "--no-error-summary", str(SCRIPT)],
                         capture_output=True, text=True, check=False)
    out, err = run.stdout, run.stderr
    revealed, errors = {}, [err] if err.strip() else []
    for line in out.splitlines():
        m = _NOTE.match(line)
        if m and pathlib.Path(m["path"]).name == SCRIPT.name:  # builtins: as mypy 2 spells them
            revealed[int(m["line"])] = m["type"].replace("builtins.", "")
        elif line.strip():
            errors.append(line)
    return errors, revealed


def _expected():
    """{line: type} from the script's ``# revealed:`` comments."""
    out = {}
    for number, line in enumerate(SCRIPT.read_text().splitlines(), 1):
        if "reveal_type(" in line:
            out[number] = line.split("# revealed: ", 1)[1] if "# revealed: " in line else None
    return out


def _same(revealed, expected):
    """``X[...]`` expects any parameters of X (numpy's ndarray's change with numpy)."""
    if expected is not None and expected.endswith("[...]"):
        return revealed.startswith(expected[:-4])
    return revealed == expected


def test_mypy_finds_no_error_in_the_script_or_the_stubs(mypy_report):
    errors, _ = mypy_report
    assert errors == []


def test_mypy_reveals_numbagrad_types(mypy_report):
    _, revealed = mypy_report
    expected = _expected()
    assert revealed.keys() == expected.keys()
    wrong = {n: (revealed[n], expected[n]) for n in expected if not _same(revealed[n], expected[n])}
    assert wrong == {}
    assert sum(t == "numbagrad.tensor.Tensor" for t in revealed.values()) >= 40


def _class(name, script_globals):
    if name in ("Any", "None"):
        return {"Any": object, "None": type(None)}[name]
    if "." not in name:
        return getattr(builtins, name)
    module, attr = name.rsplit(".", 1)
    if module == SCRIPT.stem:
        return script_globals[attr]
    if module == "typing":
        return getattr(collections.abc, attr)
    return getattr(importlib.import_module(module), attr)


def _holds(static, value, script_globals):
    """Whether a value of the runtime is of a type as mypy spells it (a generic type's class
    only, a callable's being callable)."""
    if static.startswith("def "):
        return callable(value)
    return any(isinstance(value, _class(p.split("[", 1)[0], script_globals))
               for p in split_union(static))


def test_the_revealed_types_are_the_runtimes(monkeypatch):
    """Run the script: each value it reveals has the type its comment names (which is mypy's,
    when test_mypy_reveals_numbagrad_types passes)."""
    revealed, seen = _expected(), []

    def reveal_type(value):
        frame = sys._getframe(1)
        if frame.f_code.co_filename == str(SCRIPT):
            seen.append((frame.f_lineno, value))
        return value

    monkeypatch.setattr(typing, "reveal_type", reveal_type)
    state = numbagrad.get_rng_state()  # the script seeds the generator: later tests' draws stay
    try:
        script = runpy.run_path(str(SCRIPT), run_name="__main__")
    finally:
        numbagrad.set_rng_state(state)
    wrong = [(line, revealed[line], type(value).__name__) for line, value in seen
             if not _holds(revealed[line], value, script)]
    assert wrong == []
    assert {line for line, _ in seen} == set(revealed)  # every line ran


def test_stubs_are_current():
    pytest.importorskip("torch")  # the generator reads torch's annotations
    new, old = stubgen.generate(), stubgen.on_disk()
    stale = sorted(p for p in new.keys() | old.keys() if new.get(p) != old.get(p))
    assert stale == [], "stubs are stale: python tools/regenerate.py"
