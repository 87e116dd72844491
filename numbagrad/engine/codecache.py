"""Generated kernel modules on disk: a private cache directory, names that hash their inputs.

Numba caches a function beside its source file and keys the entry on that file's stamp, not
on the functions it calls, so every generated module is named by a hash of its own text, of
the source of every @njit helper it reaches, of the Numba and NumPy versions and of the
machine-dependent constants those helpers compile in: a changed formula, helper or constant
makes a new file, never a stale entry. The code run is always the text
generated in this process (compiled from memory, the file only anchors Numba's cache), and
the directory must belong to the user and be writable by nobody else: Numba unpickles its
index files, so a directory another user can write into would let them run code here.
"""

import atexit
import hashlib
import importlib.util
import inspect
import os
import shutil
import stat
import sys
import tempfile
import threading
import warnings
from pathlib import Path

import numba
import numpy as np
from numba.core.registry import CPUDispatcher

from ..core import safe_cache

_lock = threading.Lock()
_dir = None
_sources = {}  # dispatcher -> the sources of it and every dispatcher it calls


def default_dir():
    base = os.environ.get("NUMBAGRAD_CACHE_DIR")
    if base:
        return Path(base)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "numbagrad"


def _private(path):
    """Why ``path`` (a directory) is unsafe to keep code in, or None when it is ours alone."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return "it belongs to another user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "other users can write to it"
    return None


def cache_dir():
    """The directory generated modules go to: the user's cache directory when it is private
    and writable, else a new private temporary one for this process (with a warning: its
    compiled kernels are not kept for the next process)."""
    global _dir
    if _dir is not None:
        return _dir
    with _lock:
        if _dir is None:
            path = default_dir()
            try:
                path.mkdir(mode=0o700, parents=True, exist_ok=True)
                problem = _private(path)
                if problem is None and not os.access(path, os.W_OK | os.X_OK):
                    problem = "it cannot be written"
            except OSError as err:
                problem = f"it cannot be created ({err.strerror})"
            if problem is not None:
                fallback = Path(tempfile.mkdtemp(prefix="numbagrad-"))
                atexit.register(shutil.rmtree, fallback, ignore_errors=True)
                warnings.warn(f"numbagrad: not using the cache directory {path}: {problem}. "
                              f"Kernels compile into {fallback} for this process only; set "
                              "NUMBAGRAD_CACHE_DIR to a directory of your own to keep them.",
                              UserWarning, stacklevel=3)
                path = fallback
            _dir = path
    return _dir


def dispatcher_sources(disp):
    """The source of an @njit function and of every @njit function it calls, recursively."""
    found = _sources.get(disp)
    if found is not None:
        return found
    seen, out, todo = set(), [], [disp]
    while todo:
        d = todo.pop()
        if id(d) in seen:
            continue
        seen.add(id(d))
        fn = d.py_func
        try:
            out.append(inspect.getsource(fn))
        except (OSError, TypeError):
            out.append(fn.__code__.co_code.hex())
        for name in _names(fn.__code__):
            g = fn.__globals__.get(name)
            if isinstance(g, CPUDispatcher):
                todo.append(g)
    found = _sources[disp] = "\n".join(sorted(out))
    return found


def _names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _names(const)
    return names


def module_name(prefix, source, helpers=()):
    """``prefix`` + a hash of ``source``, the sources ``helpers`` (@njit functions the module
    calls) reach, the Numba and NumPy versions and the machine-dependent constants the
    helpers compile in (``safe_cache.KEY_PARTS``: not in their sources)."""
    h = hashlib.sha256(source.encode())
    for disp in sorted(helpers, key=lambda d: (d.py_func.__module__, d.py_func.__qualname__)):
        h.update(dispatcher_sources(disp).encode())
    h.update(numba.__version__.encode())
    h.update(np.__version__.encode())
    h.update(repr(sorted(safe_cache.KEY_PARTS.items())).encode())
    return prefix + h.hexdigest()[:20]


def _set_aside(path, why):
    """Rename ``path`` to a free ``<name>.bad<k>`` (with a warning) so a fresh file can go
    there, as safe_cache does with damaged Numba entries."""
    for k in range(100):
        aside = path.with_name(f"{path.name}.bad{k or ''}")
        if not aside.exists():
            try:
                os.replace(path, aside)
            except OSError:
                continue
            warnings.warn(f"numbagrad: {path} was set aside as {aside.name} ({why}); "
                          "generating it again.", UserWarning, stacklevel=3)
            return


def load(name, source, bindings=None):
    """Import generated ``source`` as module ``name`` (from ``module_name``): written to the
    cache directory if its file is missing or differs, then run from ``source`` itself.
    ``bindings`` become module globals before it runs (functions it calls by name)."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    path = cache_dir() / (name + ".py")
    if path.is_dir() and not path.is_symlink():
        _set_aside(path, "a directory stood where its module goes")
    try:
        current = path.read_text() if path.exists() else None
    except OSError:
        current = None
    if current != source:
        tmp = path.with_name(f".{name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)  # atomic: parallel processes never see half a file
    spec = importlib.util.spec_from_loader(name, loader=None, origin=str(path))
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    if bindings:
        module.__dict__.update(bindings)
    code = compile(source, str(path), "exec")
    with _lock:
        existing = sys.modules.get(name)
        if existing is not None:
            return existing
        exec(code, module.__dict__)
        safe_cache.guard_module(module)
        sys.modules[name] = module
    return module
