"""Numba cache entries that heal: a file that fails to load, or holds another function's code,
is moved aside with one warning and the function is compiled again.

Numba unpickles its index (``.nbi``) and data (``.nbc``) files and trusts what it finds: a
truncated or garbage file raised from every later process, and a data file swapped with
another function's of the same signature ran that function's code. ``guard`` wraps a
dispatcher's or cfunc's cache so that any error while loading is a miss, and a loaded entry
must name the function and signature that asked for it (the compiled code's own module,
qualified name and argument types, which Numba keeps in it).

Numba's cache directory must also be one only this user (or root) can write: unpickling a file
another user planted runs their code. ``guard`` moves the cache of a function whose directory,
or any directory above it, another user owns or can write into (a sticky one, like /tmp, ends
the check) to a private directory of this process.
"""

import atexit
import functools
import hashlib
import os
import shutil
import stat
import sys
import tempfile
import threading
import warnings
from pathlib import Path

from numba.core import caching
from numba.core.registry import CPUDispatcher

from . import compile_lock

_PACKAGE = Path(__file__).resolve().parent.parent


class SafeCache:
    """A Numba cache (``FunctionCache``) whose loads never raise and never return another
    function's code."""

    def __init__(self, inner, py_func):
        self._inner = inner
        self._py_func = py_func

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def load_overload(self, sig, target_context):
        index = self._inner._cache_file._index_path
        cres = self._load(sig, target_context, index)
        # a miss: compile under the function's lock (compile_lock), and if another process
        # held it, what it compiled may be there now
        if cres is None and compile_lock.ENABLED and \
                compile_lock.acquire(index, self._py_func.__qualname__):
            cres = self._load(sig, target_context, index)
        if cres is not None:
            compile_lock.release(index)
        return cres

    def save_overload(self, sig, data):
        try:
            self._inner.save_overload(sig, data)
        finally:
            compile_lock.release(self._inner._cache_file._index_path)

    def _load(self, sig, target_context, index):
        owner = _owner(index)
        if owner is not None and owner not in _TRUSTED:
            self._set_aside(sig, target_context, "another user wrote it")
            return None
        try:
            cres = self._inner.load_overload(sig, target_context)
        except Exception as err:  # any failure to read an entry is a miss
            self._set_aside(sig, target_context, f"it failed to load ({type(err).__name__})")
            return None
        if cres is not None and not self._belongs(cres, sig):
            self._set_aside(sig, target_context, "it holds another function's code")
            return None
        return cres

    def _belongs(self, cres, sig):
        fndesc = getattr(cres, "fndesc", None)
        if fndesc is None:
            return True
        fn = self._py_func
        args = getattr(sig, "args", sig)
        return (fndesc.modname == fn.__module__ and fndesc.qualname == fn.__qualname__
                and tuple(fndesc.argtypes) == tuple(args))

    def _set_aside(self, sig, target_context, why):
        """Move the entry's files aside (``<file>.bad``) so that the compile that follows
        writes fresh ones."""
        cache_file = self._inner._cache_file
        paths = []
        try:
            overloads = cache_file._load_index()
        except Exception:
            paths.append(cache_file._index_path)  # the index itself is what fails
        else:
            key = self._inner._index_key(sig, target_context.codegen())
            name = overloads.get(key)
            paths.append(cache_file._data_path(name) if name else cache_file._index_path)
        for path in paths:
            try:
                os.replace(path, path + ".bad")
            except OSError:
                pass
        warnings.warn(f"numbagrad: Numba's cache entry {paths[0]} for "
                      f"{self._py_func.__module__}.{self._py_func.__qualname__} was set aside "
                      f"({why}); compiling it again.", UserWarning, stacklevel=2)


# machine-dependent constants the package's kernels compile in (each set at import by the
# module that decides it, before a kernel that reads it compiles): part of every package
# kernel's key, so a cache made under other ones is not loaded
KEY_PARTS = {}


@functools.cache
def package_fingerprint():
    """A hash of the package's source files. Numba keys a cache entry on its function's own
    file and bytecode, not on the constants and helpers it takes from other modules (a node
    field's offset in core/tape.py): the package's own functions add this to their key."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(_PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def _in_package(py_func):
    module = py_func.__module__ or ""
    return module == _PACKAGE.name or module.startswith(_PACKAGE.name + ".")


_TRUSTED = {os.getuid(), 0} if hasattr(os, "getuid") else None


def _owner(path):
    try:
        return os.lstat(path).st_uid if _TRUSTED is not None else None
    except OSError:
        return None


@functools.cache
def unsafe_dir(path):
    """Why code loaded from directory ``path`` could be another user's, or None: the first
    directory on the way up that another user (not root) owns or that others can write into,
    unless it is sticky (like /tmp: others cannot replace what is ours there)."""
    if _TRUSTED is None:
        return None
    p = os.path.realpath(path)
    while True:
        try:
            st = os.stat(p)
        except OSError:
            st = None  # not made yet: what is above decides who could make it
        if st is not None:
            if st.st_uid not in _TRUSTED:
                return f"{p} belongs to another user"
            if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                if st.st_mode & stat.S_ISVTX:
                    return None
                return f"other users can write to {p}"
        parent = os.path.dirname(p)
        if parent == p:
            return None
        p = parent


_private_lock = threading.Lock()


@functools.cache
def private_root():
    """A directory of this process's own for Numba caches moved off unsafe ones (removed at
    exit)."""
    root = tempfile.mkdtemp(prefix="numbagrad-numba-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def _relocated(cache, py_func, problem):
    """A cache of the same kind as ``cache`` for ``py_func``, in ``private_root()``."""
    with _private_lock:
        root = private_root()
    if not _warned:
        _warned.append(problem)
        warnings.warn(f"numbagrad: not loading compiled code from Numba's cache directory "
                      f"({problem}); numbagrad's kernels are cached in {root} for this process "
                      "only. Point NUMBA_CACHE_DIR at a directory only you can write to keep "
                      "them.", UserWarning, stacklevel=4)

    class PrivateLocator(caching.UserProvidedCacheLocator):
        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(root, self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            locator = cls(py_func, py_file)
            locator.ensure_cache_path()
            return locator

    impl = type("PrivateImpl", (type(cache._impl),), {"_locator_classes": [PrivateLocator]})
    return type("PrivateCache", (type(cache),), {"_impl_class": impl})(py_func)


_warned = []


def guard(compiled):
    """Give ``compiled`` (an @njit dispatcher or a ``CFunc`` with caching enabled) a
    SafeCache, in a private directory when its own is unsafe (``unsafe_dir``); returns it.
    A function of the package itself also gets the package's fingerprint in its entries'
    key (generated kernels hash what they depend on instead)."""
    cache = getattr(compiled, "_cache", None)
    if cache is not None and hasattr(cache, "_cache_file") and not isinstance(cache, SafeCache):
        py_func = getattr(compiled, "py_func", None) or compiled._pyfunc
        problem = unsafe_dir(cache._cache_path)
        if problem is not None:
            cache = _relocated(cache, py_func, problem)
        if _in_package(py_func):
            numba_key = cache._index_key
            cache._index_key = lambda sig, codegen: (*numba_key(sig, codegen),
                                                     package_fingerprint(),
                                                     tuple(sorted(KEY_PARTS.items())))
        compiled._cache = SafeCache(cache, py_func)
    return compiled


def on_disk(compiled):
    """Whether Numba's cache holds an index for ``compiled`` (an @njit dispatcher or a
    ``CFunc`` with caching enabled): a hint that a call loads rather than compiles."""
    cache_file = getattr(getattr(compiled, "_cache", None), "_cache_file", None)
    return cache_file is not None and os.path.exists(cache_file._index_path)


def guard_module(module):
    """Guard every cached @njit function ``module`` defines."""
    for value in list(vars(module).values()):
        if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
            guard(value)


def guard_loaded(prefix="numbagrad"):
    """Guard the @njit functions of every module already imported under ``prefix``."""
    for name, module in list(sys.modules.items()):
        if module is not None and (name == prefix or name.startswith(prefix + ".")):
            guard_module(module)
