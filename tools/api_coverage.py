#!/usr/bin/env python3
"""How much of torch's public API numbagrad has, with the checklist generated from torch.

usage: python tools/api_coverage.py [--missing] [--namespace NAME] [--json] [--module numbagrad]

The names come from the installed torch: the public (no leading underscore) entries of
`dir()` of each namespace in NAMESPACES, plus the functions `torch.overrides` lists for it
(`get_testing_overrides()` placed by `get_overridable_functions()`), without what a
namespace merely imports (stdlib and typing names, other modules). Names matching a
pattern in tools/api_exclusions.txt (each with its reason: sparse, quantized, complex-only,
device-specific, JIT internals...) are left out. Each remaining name is looked up in
numbagrad the way `import numbagrad as torch` code would reach it: `torch.nn.functional.X`
as numbagrad.nn.functional.X, `torch.Tensor.X` on numbagrad.Tensor. A name counts as
present when it resolves (attribute or importable submodule); whether it behaves as
torch's is for the tests to show. Prints a line per namespace and the total; --missing adds
the names still absent.
"""
import argparse
import fnmatch
import importlib
import inspect
import json
import os
import sys
import types

# the namespaces the checklist covers, as torch spells them
NAMESPACES = ["torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init",
              "torch.linalg", "torch.special", "torch.fft", "torch.autograd", "torch.func",
              "torch.optim", "torch.optim.lr_scheduler", "torch.distributions",
              "torch.utils.data"]

EXCLUSIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "api_exclusions.txt")

# the reasons an exclusion may give (the first word of its reason)
CATEGORIES = {"sparse", "quantized", "complex", "device", "jit", "internal", "deprecated",
              "dtype", "stdlib", "distributed", "storage", "nested", "named"}


def load_exclusions(path=EXCLUSIONS):
    """[(pattern, reason)] from the exclusions file: `pattern  category: why`, '#' comments."""
    out = []
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            pattern, _, reason = line.partition(" ")
            out.append((pattern, reason.strip()))
    return out


def _resolve_torch(dotted):
    import torch
    obj = torch
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part) if hasattr(obj, part) else importlib.import_module(
            f"{obj.__name__}.{part}")
    return obj


def _override_names():
    """{namespace: {name}} for the functions torch.overrides lists (torch's own spelling)."""
    import torch
    placed = {}
    for ns, funcs in torch.overrides.get_overridable_functions().items():
        key = {torch: "torch", torch.functional: "torch", torch.Tensor: "torch.Tensor",
               torch.nn.functional: "torch.nn.functional", torch.linalg: "torch.linalg",
               torch.fft: "torch.fft", torch.special: "torch.special"}.get(ns)
        for f in funcs:
            placed[id(f)] = (key, getattr(f, "__name__", None))
    out = {}
    for f in torch.overrides.get_testing_overrides():
        # Tensor properties are listed by their getters, under the property: dir() has them
        key, name = placed.get(id(f), (None, None))
        if key and name:
            out.setdefault(key, set()).add(name)
    return out


def _imported(ns, value):
    """Whether a namespace's attribute is an import (stdlib, typing, another torch module)
    rather than part of its API: `torch.nn.functional.math`, `torch.nn.init.Callable`."""
    if isinstance(value, types.ModuleType):
        # torch's own submodules count; inside a submodule, only its children do
        prefix = "torch." if ns == "torch" else ns + "."
        return not value.__name__.startswith(prefix)
    if type(value).__module__ in ("typing", "typing_extensions", "__future__"):
        return True
    if isinstance(value, type) or inspect.isroutine(value):
        mod = getattr(value, "__module__", None)
        return bool(mod) and mod != "torch" and not mod.startswith("torch.")
    return False


def torch_names():
    """{namespace: sorted public names} of the installed torch, before exclusions."""
    names = {}
    extra = _override_names()
    for ns in NAMESPACES:
        obj = _resolve_torch(ns)
        found = {n for n in dir(obj) if not n.startswith("_")}
        found |= {n for n in extra.get(ns, ()) if not n.startswith("_")}
        names[ns] = sorted(n for n in found
                           if hasattr(obj, n) and not _imported(ns, getattr(obj, n)))
    return names


def excluded(qualname, exclusions):
    return any(fnmatch.fnmatchcase(qualname, pat) for pat, _ in exclusions)


def resolve(root, dotted):
    """Whether `dotted` (below the root module) resolves as an attribute or a submodule."""
    obj, path = root, root.__name__
    for part in [p for p in dotted.split(".") if p]:
        if hasattr(obj, part):
            obj, path = getattr(obj, part), f"{path}.{part}"
            continue
        try:
            obj = importlib.import_module(f"{path}.{part}")
            path = f"{path}.{part}"
        except Exception:  # noqa: BLE001 - any failure means absent
            return False
    return True


def coverage(module="numbagrad", exclusions=None):
    """{namespace: (present names, missing names)} after the exclusions."""
    root = importlib.import_module(module)
    exclusions = load_exclusions() if exclusions is None else exclusions
    result = {}
    for ns, names in torch_names().items():
        rest = ns[len("torch"):].lstrip(".")
        have, miss = [], []
        for n in names:
            if excluded(f"{ns}.{n}", exclusions):
                continue
            (have if resolve(root, f"{rest}.{n}" if rest else n) else miss).append(n)
        result[ns] = (have, miss)
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--missing", action="store_true", help="list the names still absent")
    ap.add_argument("--namespace", help="only namespaces containing this string")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--module", default="numbagrad")
    args = ap.parse_args(argv)
    result = coverage(args.module)
    if args.namespace:
        result = {k: v for k, v in result.items() if args.namespace in k}
    have = sum(len(h) for h, _ in result.values())
    total = sum(len(h) + len(m) for h, m in result.values())
    if args.json:
        print(json.dumps({"namespaces": {k: {"present": len(h), "total": len(h) + len(m),
                                             **({"missing": m} if args.missing else {})}
                                         for k, (h, m) in result.items()},
                          "present": have, "total": total,
                          "percent": round(100 * have / max(total, 1), 1)}))
        return 0
    for ns, (h, m) in result.items():
        n = len(h) + len(m)
        share = f"{100 * len(h) / n:5.1f}%" if n else "  all excluded"
        print(f"{ns:28s} {len(h):5d} / {n:5d}  {share}")
        if args.missing and m:
            print("    missing: " + " ".join(m))
    print(f"{'total':28s} {have:5d} / {total:5d}  {100 * have / max(total, 1):5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
