"""The package's layers point down (core < engine < ops < autograd < func < compiler < the
rest: nn, optim, utils, optimize, distributed...), no import cycles among numbagrad's
modules, and no import hidden inside a function to dodge one."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "numbagrad"

# The layers from the bottom; each imports nothing from a layer after it, nor from the rest
# (every other module of the package: the torch namespaces, nn, optim, utils...), which
# comes last
LAYERS = ("core", "engine", "ops", "autograd", "func", "compiler")
REST = ("nn", "optim", "utils", "optimize", "distributed", "distributions", "viz", "profiler")

# Function-level imports of numbagrad modules that stay: (importing module, imported module)
# -> why. Anything else belongs at the top of its module.
ALLOWED_LATE = {}


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _target(name):
    """The numbagrad module an imported dotted name lives in (a name may be an attribute)."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        candidate = ".".join(parts[:k])
        if candidate in MODULES:
            return candidate
    return None


def _imports(module):
    """(imported numbagrad module, line, inside a function) for each import in ``module``."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.Lambda))
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[:len(package.split(".")) - child.level + 1]
                    base = ".".join(base + ([child.module] if child.module else []))
                else:
                    base = child.module
                # `from p import x` imports submodule p.x when there is one, else p itself
                names = [f"{base}.{alias.name}" for alias in child.names]
            else:
                names = []
            for name in names:
                target = _target(name)
                if target is not None and target != module:
                    found.append((target, child.lineno, in_function))
            visit(child, inner)

    visit(ast.parse(path.read_text(), str(path)), False)
    return found


def _under(module, layer):
    return module == f"numbagrad.{layer}" or module.startswith(f"numbagrad.{layer}.")


def _violations(layer, above):
    return sorted({f"{m}:{line} imports {t}" for m in MODULES if _under(m, layer)
                   for t, line, _ in _imports(m) if t == "numbagrad" or
                   any(_under(t, a) for a in above)})


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_nothing_above_it(layer):
    bad = _violations(layer, LAYERS[LAYERS.index(layer) + 1:] + REST)
    assert not bad, "\n".join(bad)


def test_the_layers_are_folders_of_the_package():
    for layer in LAYERS + REST:
        assert f"numbagrad.{layer}" in MODULES, layer


def test_no_function_level_imports_of_numbagrad_modules():
    late = sorted({f"{m}:{line} imports {t}" for m in MODULES
                   for t, line, in_function in _imports(m)
                   if in_function and (m, t) not in ALLOWED_LATE})
    assert not late, f"{len(late)} function-level imports:\n" + "\n".join(late)


def test_the_allow_list_has_no_stale_entries():
    stale = [entry for entry in ALLOWED_LATE
             if not any(t == entry[1] and f for t, _, f in _imports(entry[0]))]
    assert not stale


def test_no_import_cycles():
    graph = {m: {t for t, _, f in _imports(m) if not f} for m in MODULES}
    cycles = []
    state = {}  # module -> 1 on the current path, 2 done

    def visit(m, path):
        state[m] = 1
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycles.append(" -> ".join(path[path.index(t):] + [t]))
            elif t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, "\n".join(cycles)


# "modules of one job under ~500 lines": above 600, a module says at its top why it is one
LONG_MODULE = 600


def test_a_long_module_says_why_at_its_top():
    unexplained = []
    for module, path in MODULES.items():
        lines = path.read_text().splitlines()
        if len(lines) > LONG_MODULE and not any(
                line.startswith("# Over 600 lines:") for line in lines[:3]):
            unexplained.append(f"{module}: {len(lines)} lines")
    assert not unexplained, "\n".join(unexplained)
