"""What runs inside a Dask worker process: one shard's compiled value and gradient, one part
of a batch's module gradients, one optimization. Everything here is pickled by reference, so
the workers need numbagrad installed (checked before any task is sent)."""

import collections
import threading
import traceback

import cloudpickle
import numpy as np
from distributed import get_worker

from .. import func, optimize
from ..compiler.compiled import compile as _compile
from ..factories import from_numpy

# Keyed on what stays the same across calls: a token chosen when the distributed function
# was made, and the shard's Dask key. Python ids do not: Dask's Active Memory Manager drops a
# worker's extra copy of a broadcast object, and the worker fetches it again as a new object.
_CACHE_SIZE = 256
_held = collections.OrderedDict()  # token -> (the first copy of the object seen, its lock)
_compiled = collections.OrderedDict()  # (token, shard key) -> compiled value_and_grad
_cache_lock = threading.Lock()


class Pickled:
    """An object cloudpickled once on the client, travelling inside each task (small enough
    that this is cheaper than a fetch from another worker); unpickled once per worker."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data

    def __reduce__(self):
        return (Pickled, (self.data,))


class WorkerError(RuntimeError):
    """A user function raised on a worker: the message names the shard, part or problem, the
    worker's address, and carries the worker's traceback.

    Args:
        what: what raised (a shard, part or problem, named).
        worker: the worker's address.
        error: the error raised there.
        remote_traceback: the worker's traceback, as text.
    """

    def __init__(self, what, worker, error, remote_traceback):
        self.what, self.worker, self.error = what, worker, error
        self.remote_traceback = remote_traceback
        super().__init__(f"{what} raised on worker {worker}: {error}\n\n"
                         f"Traceback on the worker:\n{remote_traceback}")

    def __reduce__(self):  # Dask pickles the exception back to the client
        return (WorkerError, (self.what, self.worker, self.error, self.remote_traceback))


def _worker_address():
    try:
        return get_worker().address
    except ValueError:
        return "(not a Dask worker)"


def _reraise(what, exc):
    """Turn any exception of a user's function into a WorkerError carrying the traceback as
    text, so it survives the trip to the client even when its type does not unpickle there."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    raise WorkerError(what, _worker_address(), f"{type(exc).__name__}: {exc}", text) from None


def _remember(table, key, make):
    with _cache_lock:
        entry = table.get(key)
        if entry is None:
            entry = table[key] = make()
            while len(table) > _CACHE_SIZE:
                table.popitem(last=False)
        table.move_to_end(key)
        return entry


def held(token, sent):
    """(object, lock): the copy of the object sent under ``token`` (a ``Pickled`` or the
    object itself) this worker first received, and a lock for tasks that mutate it."""
    def make():
        obj = cloudpickle.loads(sent.data) if isinstance(sent, Pickled) else sent
        return obj, threading.Lock()
    return _remember(_held, token, make)


def compiled_value_and_grad(token, sent_fn, shard_key, shard):
    """``numbagrad.compile`` of ``params -> fn(params, shard)``, made once per worker, function
    and shard: the shard's data is built into the trace as constants, so a call copies only
    the parameters into the replay's arena, not the shard."""
    fn = held(token, sent_fn)[0]

    def make():
        data = _as_tensors(shard)
        return _compile(func.value_and_grad(lambda params: fn(params, data)))
    return _remember(_compiled, (token, shard_key), make)


def traces_of(token):
    """How many shard traces this worker holds for ``token``: what the tests watch."""
    with _cache_lock:
        return sum(key[0] == token for key in _compiled)


def forget(token):
    """Drop what this worker holds for ``token`` (its distributed function was closed)."""
    with _cache_lock:
        _held.pop(token, None)
        for key in [k for k in _compiled if k[0] == token]:
            del _compiled[key]


def _as_tensors(shard):
    if isinstance(shard, (tuple, list)):
        return type(shard)(_as_tensors(part) for part in shard)
    return from_numpy(shard) if isinstance(shard, np.ndarray) else shard


def shard_value_and_grad(token, sent_fn, params, shard_key, shard, index):
    """The compiled value and gradient of ``fn(params, shard)``, as (float, array)."""
    try:
        value, grad = compiled_value_and_grad(token, sent_fn, shard_key, shard)(params)
        return float(value), np.asarray(grad)
    except Exception as exc:  # noqa: BLE001 - any user error goes back with its traceback
        _reraise(f"shard {index}", exc)


def add_pair(a, b):
    """One step of the tree reduction of (value, gradient) pairs."""
    if isinstance(a[1], dict):
        return a[0] + b[0], {k: _add_or_none(g, b[1][k]) for k, g in a[1].items()}
    return a[0] + b[0], a[1] + b[1]


def _add_or_none(a, b):
    if a is None:
        return b
    return a if b is None else a + b


def module_part_grads(token, sent, state, part, weight, index):
    """Load ``state`` into this worker's copy of the module, compute ``loss_fn(module, *part)``
    and its gradients, and return both scaled by ``weight`` (the part's share of the batch)."""
    (module, loss_fn), lock = held(token, sent)
    with lock:  # tasks on a multi-threaded worker share the module object
        try:
            module.load_state_dict(state)
            for p in module.parameters():
                p.grad = None
            loss = loss_fn(module, *(from_numpy(np.asarray(a)) for a in part))
            loss.backward()
        except Exception as exc:  # noqa: BLE001
            _reraise(f"part {index} of the batch", exc)
        grads = {name: None if p.grad is None else np.asarray(p.grad.numpy(), np.float64) * weight
                 for name, p in module.named_parameters() if p.requires_grad}
        return float(loss.item()) * weight, grads


def minimize_one(token, sent_fn, x0, args, method, use_compile, kwargs, index):
    """One problem of map_minimize: numbagrad.optimize.minimize on this worker (one copy of
    ``fn`` per worker, so that optimize's traces of it are reused across problems)."""
    fn = held(token, sent_fn)[0]
    try:
        return optimize.minimize(fn, x0, args, method, compile=use_compile, **kwargs)
    except Exception as exc:  # noqa: BLE001
        _reraise(f"problem {index}", exc)


def pack(*parts):
    """A shard of several arrays (Dask array blocks of the same rows), as one tuple."""
    return tuple(parts)
