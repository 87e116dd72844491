"""Each op's kernels, compiled the first time a graph uses the op, and the address tables
the sweeps call them through.

An op's module (kernelgen) is generated, written under a name hashing its text and the
@njit helpers it reaches (codecache), and imported when the op is first needed; its
per-node kernels become ``@cfunc(cache=True)`` functions whose addresses fill the op's slot
in one table per kind: ``bw_small`` (the reverse sweep's, for elementwise nodes of at most
kernelgen.INLINE_MAX elements whose operands have their size), ``bw`` (the reverse sweep's
on views), ``rbw`` (the replay's reverse sweep on views), ``fw`` (the replay's forward),
and the kinds only some nodes need (``bw_bcast``, ``fw_bcast``, ``fw32``). A
slot at 0 means "not compiled yet": the eager sweep hands such a node back to Python, which
compiles it here and resumes.
"""

import re
import sys
import threading

import numpy as np
from numba.core import sigutils
from numba.core.ccallback import CFunc
from numba.core.registry import CPUDispatcher

from ..core import compile_pool, gc_pause, progress, safe_cache
from . import codecache, kernel_abi, kernelgen, registry, scalar_math, scalar_special, vmath
from .kernel_abi import KERNEL_SIG

# the rows of the one block of tables (a replay's ``tables``); "small_ok" and "own_f32" are
# not kernel kinds but flags per op: whether it has a bw_small kernel (elementwise ops), and
# whether its float32 nodes replay through fw32 (replay_f32 ops)
KINDS = ("fw", "bw_small", "rbw", "small_ok", "bw", "fw_bcast", "bw_bcast", "fw32", "own_f32")
_ROW = {kind: row for row, kind in enumerate(KINDS)}
_KERNEL_SIG = sigutils.normalize_signature(KERNEL_SIG)
_lock = threading.RLock()
_modules = {}  # op code -> its kernels' module
_cfuncs = {}  # (op code, kind) -> the compiled cfunc (kept alive: a table holds its address)
# allocated once and never moved: compiled code (as_numba's callers, cached by Numba) finds
# it through a symbol of this process (kernel_abi.TABLES_SYMBOL), not a baked-in address
_block = np.zeros((len(KINDS), kernel_abi.TABLES_CAPACITY), np.int64)
kernel_abi.register_tables(_block)
_meta = {}  # "arity", "saves": arrays over the op table
_namespace = None


def _helper_namespace():
    """Names a generated module's header binds to @njit helpers outside it."""
    global _namespace
    if _namespace is None:
        ns = {}
        # (the scalar modules too: the header star-imports them, a change must rename)
        for mod in (*(sys.modules[m] for m in kernelgen.KERNEL_MODULES), scalar_math,
                    scalar_special):
            ns.update({k: v for k, v in vars(mod).items() if isinstance(v, CPUDispatcher)})
        ns.update(exp=vmath.vexp, log=vmath.vlog, sigmoid=vmath.vsigmoid, tanh=vmath.vtanh,
                  tape_arrays=kernel_abi.tape_arrays)
        _namespace = ns
    return _namespace


def _bindings(op):
    """Kernels given as functions (ops declared outside the kernels modules): module globals."""
    return {k.__name__: k for k in (op.kernel, op.replay, op.replay_bw)
            if k is not None and not isinstance(k, str)}


def module(op):
    """``op``'s kernels module (generated, written and imported on first use)."""
    mod = _modules.get(op.code)
    if mod is None:
        with _lock:
            mod = _modules.get(op.code)
            if mod is None:
                mod = _modules[op.code] = load_generated(
                    f"numbagrad_op_{op.name}_", kernelgen.op_source(op), _bindings(op))
    return mod


def load_generated(prefix, source, bindings=None):
    """Import a generated module (kernelgen's header, then its code), named by a hash of
    ``source`` and of every @njit helper it names (the registered kernel modules, vmath,
    ``bindings``): a changed helper makes a new module, never a stale Numba cache entry."""
    return codecache.load(generated_name(prefix, source, bindings), source, bindings)


def generated_name(prefix, source, bindings=None):
    """The name ``load_generated`` gives ``source``'s module."""
    ns = {**_helper_namespace(), **(bindings or {})}
    helpers = {ns[w] for w in set(re.findall(r"\b\w+\b", source))
               if isinstance(ns.get(w), CPUDispatcher)}
    return codecache.module_name(prefix, source, helpers)


def table(kind):
    """The address table of ``kind``, one slot per op code (0: not compiled yet)."""
    if len(registry.OPS) > kernel_abi.TABLES_CAPACITY:
        raise RuntimeError(f"numbagrad: more than {kernel_abi.TABLES_CAPACITY} ops declared")
    return _block[_ROW[kind]]


def block():
    """All the tables, rows in ``KINDS`` order (a replay's ``tables``)."""
    small_ok()
    return _block


def ensure(code, kind):
    """Compile (or load from Numba's cache) op ``code``'s kernel of ``kind``; its address."""
    t = table(kind)
    address = t[code]
    if address:
        return address
    op = registry.OPS[code]
    name = kernelgen.per_node_kernels(op).get(kind)
    if name is None:
        raise NotImplementedError(f"numbagrad: op {op.name} ({op.grad_fn}) has no {kind} kernel")
    with _lock:
        if not t[code]:
            mod = module(op)
            key = (code, name)
            fn = _cfuncs.get(key)
            if fn is None:
                with progress.compiling(f"the {kind} kernel of op {op.name}") as job:
                    fn = _cfuncs[key] = compile_kernel(getattr(mod, name))
                    if job is not None and fn.cache_hits:
                        job["loaded"] = True
            t[code] = fn.address
    return t[code]


def compile_kernel(fn):
    """``fn`` as a ``@cfunc(KERNEL_SIG, cache=True)`` whose cache entry is checked
    (core/safe_cache): what ``numba.cfunc`` does, with the cache guarded before the load."""
    kernel = _uncompiled(fn)
    with gc_pause.paused():  # a cfunc's compile fires no Numba compile event
        kernel.compile()
    return kernel


def _uncompiled(fn):
    kernel = CFunc(fn, _KERNEL_SIG, locals={}, options={"error_model": "numpy"})
    kernel.enable_caching()
    safe_cache.guard(kernel)
    return kernel


def ensure_named(name, kind):
    """``ensure`` by op name: a compile job (core/compile_pool) another process can run."""
    op = registry.BY_NAME[name]
    ensure(op.code, kind)


def ensure_many(pairs, cold_jobs=()):
    """``ensure`` each (op code, kind) of ``pairs``, and run ``cold_jobs`` (compile jobs,
    core/compile_pool, whose code is not in Numba's cache): in worker processes too when
    two or more of them all are not in the cache yet."""
    # structured ops' kernels first: they take longest (views, reductions: helpers to
    # compile), and this process starts from the front while the workers start from the back
    pairs = sorted(pairs, key=lambda p: registry.OPS[p[0]].elementwise)
    jobs = [("numbagrad.engine.kernel_tables", "ensure_named", registry.OPS[c].name, kind)
            for c, kind in pairs if not table(kind)[c]]
    also = list(cold_jobs)
    cold = len(also) + sum(not _on_disk(c, kind) for c, kind in pairs if not table(kind)[c])
    if cold >= 2:
        compile_pool.POOL.run(list(also) + jobs)
        return
    for job in list(also) + jobs:
        compile_pool.call(job)


def _on_disk(code, kind):
    """Whether Numba's cache holds an entry for op ``code``'s kernel of ``kind``."""
    name = kernelgen.per_node_kernels(registry.OPS[code]).get(kind)
    return name is None or safe_cache.on_disk(_uncompiled(getattr(module(registry.OPS[code]),
                                                                  name)))


def ensure_all(codes, kinds):
    """The tables of ``kinds`` with every op of ``codes`` (op codes, any iterable) compiled."""
    for code in sorted(set(int(c) for c in codes)):
        op = registry.OPS[code]
        for kind in kinds:
            if kind in kernelgen.per_node_kernels(op):
                ensure(code, kind)
    return [table(kind) for kind in kinds]


def njit_kernel(op, name):
    """The @njit function ``name`` of ``op``'s module (eager's forward kernels, the
    parallel backward kernels of big nodes)."""
    return getattr(module(op), name)


def arity():
    """Each op's number of inputs (-1: variadic; 0: a source), indexed by op code."""
    a = _meta.get("arity")
    if a is None or len(a) != len(registry.OPS):
        a = _meta["arity"] = np.array([op.arity for op in registry.OPS], np.int64)
    return a


def sweep_tables():
    """(block, arity, saves): the tables every eager sweep call passes, current for the ops
    declared so far (one check for the three)."""
    tables = _meta.get("sweep")
    if tables is None or _meta.get("sweep_ops") != len(registry.OPS):
        tables = _meta["sweep"] = (block(), arity(), saves())
        _meta["sweep_ops"] = len(registry.OPS)
    return tables


def small_ok():
    """Whether each op has a ``bw_small`` kernel (elementwise ops), 1 or 0 by op code: the
    block's row, filled for the ops declared so far (with the ``own_f32`` row)."""
    row = _block[_ROW["small_ok"]]
    if _meta.get("small_ok") != len(registry.OPS):
        row[:len(registry.OPS)] = [op.elementwise for op in registry.OPS]
        _block[_ROW["own_f32"], :len(registry.OPS)] = [bool(op.replay_f32) for op in registry.OPS]
        _meta["small_ok"] = len(registry.OPS)
    return row


def saves():
    """[op code, input] -> which saved values (bits x0, x1, x2, y) that input's derivative
    reads: what the sweep checks against freed and modified values."""
    s = _meta.get("saves")
    if s is None or len(s) != len(registry.OPS):
        s = _meta["saves"] = np.array([[op.save_mask(k) for k in range(3)]
                                       for op in registry.OPS], np.int64)
    return s
