"""Type stubs (``.pyi``) for numbagrad's public API: ``python -m numbagrad.stubgen``.

Most of the API is made at import time (Tensor's methods are bound with setattr, functions come
from factories and star-imports), so a type checker reading the sources sees ``Any`` or nothing.
The stubs are generated from the runtime instead: every public name and Tensor member with the
runtime's parameters, typed with torch's annotations for the same name (torch.Tensor ->
numbagrad.Tensor). Generating needs torch; tests/test_typing.py checks the stubs are current.
"""

import pathlib

from .emit import Emitter
from .model import Stub
from .torch_types import TorchTypes
from .walk import Walker

PACKAGE = pathlib.Path(__file__).resolve().parents[1]


def generate():
    """{path relative to the package's parent: stub text} for every stub."""
    stubs = Walker(TorchTypes()).run()
    out = {}
    for module, stub in stubs.items():
        parts = module.split(".")
        is_package = (PACKAGE.parent.joinpath(*parts) / "__init__.py").exists()
        path = "/".join(parts) + ("/__init__.pyi" if is_package else ".pyi")
        out[path] = Emitter(stub).text()
    for path in list(out):  # a package between the public ones: an empty stub keeps mypy
        parts = path.split("/")[:-1]  # from reading its implementation
        for i in range(2, len(parts) + 1):
            init = "/".join(parts[:i]) + "/__init__.pyi"
            if init not in out and PACKAGE.parent.joinpath(*parts[:i], "__init__.py").exists():
                out[init] = Emitter(Stub(".".join(parts[:i]))).text()
    return dict(sorted(out.items()))


def on_disk():
    """{path: text} of the stubs in the package now."""
    return {str(p.relative_to(PACKAGE.parent)): p.read_text()
            for p in sorted(PACKAGE.rglob("*.pyi"))}


def write():
    """Write the stubs into the package, removing stale ones."""
    stale = on_disk()
    for path, text in generate().items():
        stale.pop(path, None)
        (PACKAGE.parent / path).write_text(text)
    for path in stale:
        (PACKAGE.parent / path).unlink()
