"""The Dask side of numbagrad.distributed: which client, checking the workers, data placed on
the workers that survives a worker's death, tree reductions, progress bars."""

import asyncio
import atexit
import concurrent.futures
import contextlib
import gc
import logging
import threading
import time
import uuid

import cloudpickle
import dask
import numpy as np
from dask import delayed
from dask.base import is_dask_collection
from dask.system import cpu_count
from distributed import Client, Future, LocalCluster, as_completed, default_client
from distributed.client import FutureCancelledError, FuturesCancelledError
from distributed.comm import connect
from tqdm.auto import tqdm

from .. import __version__
from . import _worker

# tasks whose inputs were lost with a dead worker are retried after placing the inputs again
_MAX_RETRIES = 3
_SCATTER_INLINE_BYTES = 1 << 20  # larger arguments are scattered once, not copied per task
SMALL_GRADIENT_BYTES = 1 << 16  # gradients up to this size are summed here, not on workers
_CONNECT_TIMEOUT = 5  # seconds; Dask's default (30 s) leaves a mistyped address hanging
# seconds to wait for a worker (a Nanny restarts a killed one in a few) before data that could
# not be placed is reported lost, rather than waiting on and on
_WORKER_WAIT = 60

_local = {"client": None}
_opened = {}  # scheduler address -> the Client numbagrad connected there, closed at exit
_local_lock = threading.Lock()


def local_client(n_workers=None, threads_per_worker=1, **cluster_kwargs):
    """A Client on a new ``LocalCluster`` of ``n_workers`` processes (default: one per core
    this process may use), each running Numba with ``threads_per_worker`` threads: n
    processes on n cores, not n * n threads. Close it (``client.close();
    client.cluster.close()``) when done.

    The cluster speaks TLS with credentials made for it and held only in this process's
    memory (Dask's ``security=True``): its scheduler and workers listen on local ports, and
    without them anyone on the machine could connect and run code as this user.

    Args:
        n_workers: the number of worker processes (default None: one per core this process
            may use).
        threads_per_worker: Numba's threads in each worker (default 1).
        **cluster_kwargs: passed to ``LocalCluster`` (over numbagrad's defaults).

    Returns:
        A ``dask.distributed.Client``.
    """
    # the CPUs this process may run on (affinity, cgroup quota), not os.cpu_count()'s machine
    n_workers = n_workers or cpu_count()
    # set before the spawn: a worker has imported Numba before Nanny's env applies
    key = "distributed.nanny.pre-spawn-environ.NUMBA_NUM_THREADS"
    kwargs = {"dashboard_address": None, "security": True, **cluster_kwargs}
    if kwargs["security"] is True:
        try:
            import cryptography  # noqa: F401 - what Dask's temporary credentials need
        except ImportError:
            raise ImportError(
                "numbagrad.distributed: the cluster numbagrad starts is secured with TLS "
                "credentials of its own, which need the 'cryptography' package: pip install "
                "'numbagrad[distributed]' (or pass a Client of your own)") from None
    with dask.config.set({key: threads_per_worker}):
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker,
                               processes=True, **kwargs)
    return Client(cluster, set_as_default=False)


def get_client(client=None):
    """``client`` (a Client, or a scheduler address such as ``"tcp://host:8786"`` that
    numbagrad connects to and closes at exit), else the process's default Dask client, else a
    LocalCluster numbagrad starts (``local_client()``: one worker process per core) and closes
    at exit."""
    if isinstance(client, str):
        return _connect(client)
    if client is not None:
        return client
    try:
        return default_client()
    except ValueError:
        pass
    with _local_lock:
        if _local["client"] is None or _local["client"].status != "running":
            _local["client"] = local_client()
            atexit.register(_close_local)
        return _local["client"]


def _connect(address):
    """A Client of the scheduler at ``address``, one per address, reused across calls."""
    if not address.strip():  # Dask would start a LocalCluster of its own for ""
        raise ValueError(f"numbagrad.distributed: client={address!r} is not a Dask scheduler "
                         "address")
    with _local_lock:
        client = _opened.get(address)
        if client is not None and client.status == "running":
            return client
        try:
            _probe(address)
            client = Client(address, timeout=_CONNECT_TIMEOUT, set_as_default=False)
        except OSError as exc:  # Dask's error for a scheduler it cannot reach
            error = OSError(f"numbagrad.distributed: no Dask scheduler answered at "
                            f"{address!r} within {_CONNECT_TIMEOUT} s ({exc})")
        except ValueError as exc:  # a malformed address
            error = ValueError(f"numbagrad.distributed: {address!r} is not a Dask scheduler "
                               f"address ({exc})")
        else:
            if not _opened:
                atexit.register(_close_opened)
            _opened[address] = client
            return client
    # Dask's half-made Client sits in a reference cycle; uncollected, its __del__ hangs at exit
    gc.collect()
    raise error


def _probe(address):
    """Ask the scheduler at ``address`` who it is, within the timeout. Dask's Client bounds
    only the TCP connect: a port that accepts and then says nothing (not a scheduler, a
    scheduler that hangs) would keep it waiting far longer."""
    async def identity():
        comm = await connect(address, timeout=_CONNECT_TIMEOUT)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded():  # a refused connection ends in connect()'s own timeout, quietly
        return await asyncio.wait_for(identity(), _CONNECT_TIMEOUT + 1)

    # a thread of its own: this process may already run an event loop (Jupyter)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        try:
            pool.submit(asyncio.run, bounded()).result()
        except TimeoutError as exc:
            raise OSError("it did not answer") from exc
        except (OSError, ValueError):
            raise
        except Exception as exc:  # noqa: BLE001 - something answered, not as a scheduler
            raise OSError(f"the answer is not a Dask scheduler's: {type(exc).__name__}: "
                          f"{exc}") from exc


def _close_opened():
    for client in list(_opened.values()):
        with contextlib.suppress(Exception):
            client.close()
    _opened.clear()


def _close_local():
    client = _local["client"]
    if client is not None:
        cluster = client.cluster
        # Closing on purpose: a worker's heartbeat that meets the closing scheduler (Dask's
        # shutdown race, seen on a loaded machine) would log a traceback that is not an error
        with contextlib.suppress(Exception):
            client.run(_quiet_worker_log, on_error="ignore")
        client.close()
        cluster.close()
        _local["client"] = None


def _quiet_worker_log():
    logging.getLogger("distributed.worker").setLevel(logging.CRITICAL)


def check_workers(client):
    """Raise a clear error when a worker cannot import numbagrad, or has another version."""
    probe = "__import__('numbagrad').__version__"
    found = client.run(eval, probe, on_error="return")
    # a worker that could not be reached (OSError: Dask's CommClosedError) is dying or gone,
    # which Dask handles; only what the live workers answer says anything about numbagrad
    found = {address: answer for address, answer in found.items()
             if not isinstance(answer, OSError)}
    if not found:
        raise RuntimeError("numbagrad.distributed: the Dask cluster has no workers")
    for address, version in sorted(found.items()):
        if isinstance(version, BaseException):
            raise RuntimeError(
                f"numbagrad.distributed: worker {address} cannot import numbagrad "
                f"({type(version).__name__}: {version}); install numbagrad[distributed] "
                "in the workers' environment") from None
        if version != __version__:
            raise RuntimeError(
                f"numbagrad.distributed: worker {address} has numbagrad {version}, this "
                f"process {__version__}; install the same version on both")


class Placed:
    """Objects on the workers, as futures. Those this process scattered are kept here too, so
    that one lost with a dead worker is scattered again and the call retried."""

    def __init__(self, client, objects, broadcast=False, what="object"):
        self.client, self.broadcast, self.what = client, broadcast, what
        self.local = list(objects)
        self.futures = scatter(client, self.local, broadcast, what, self._indices(
            range(len(self.local))))
        self._holders = None

    def where(self, i):
        """The workers holding object i, for a task that must run there (a task on a
        scattered shard moved elsewhere would copy the shard: Dask's work stealing does
        that when a worker is still compiling), or None to let Dask place it."""
        if self.local is None or self.broadcast:
            return None
        if self._holders is None:
            held = self.client.who_has(self.futures)
            self._holders = [list(held.get(f.key, ())) or None for f in self.futures]
        return self._holders[i]

    @classmethod
    def given(cls, client, futures):
        """Futures the user placed (or Dask computes): nothing to scatter again; a lost
        computed future is recomputed by Dask itself."""
        placed = cls.__new__(cls)
        placed.client, placed.broadcast, placed.what = client, False, "object"
        placed.local, placed.futures, placed._holders = None, list(futures), None
        return placed

    def _indices(self, indices):
        """Which objects, for an error: an object broadcast is the only one of its kind."""
        return None if self.broadcast else list(indices)

    def replace_lost(self):
        """Scatter again whatever was lost; False when nothing was lost or it can't be."""
        lost = [i for i, f in enumerate(self.futures) if f.status in ("lost", "cancelled",
                                                                       "error")]
        if not lost or self.local is None:
            return False
        # who held them, for the error if no worker comes back (known once a call ran)
        holders = sorted({w for i in lost for w in self._holders[i] or ()}
                         ) if self._holders else []
        again = scatter(self.client, [self.local[i] for i in lost], self.broadcast,
                        self.what, self._indices(lost), holders)
        for i, future in zip(lost, again):
            self.futures[i] = future
        self._holders = None
        return True


def scatter(client, objects, broadcast, what, indices, holders=()):
    """``client.scatter(objects)``, again when a worker dies while receiving them, on the
    workers left or those that come back; an error naming what was lost when no worker takes
    them within ``_WORKER_WAIT`` seconds (each try is bounded too: Dask's own connection
    to a worker that just died retries for 30 s)."""
    deadline = time.monotonic() + _WORKER_WAIT
    while True:
        left = deadline - time.monotonic()
        try:
            return _bounded(lambda: client.scatter(objects, broadcast=broadcast, hash=False,
                                                   timeout=max(left, 0.1)), left)
        except (OSError, TimeoutError) as exc:  # Dask's CommClosedError is an OSError
            if time.monotonic() + 0.5 >= deadline:
                raise _lost(what, indices, holders, exc) from exc
            time.sleep(0.5)  # the scheduler drops a dead worker within moments


def _bounded(call, seconds):
    """``call()``, or TimeoutError after ``seconds`` (the call is then abandoned)."""
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(call).result(timeout=max(seconds, 0.1))
    finally:
        pool.shutdown(wait=False)


def _lost(what, indices, holders, exc):
    if indices is None:
        which = f"the {what}"
    else:
        which = f"{what}{'s' * (len(indices) > 1)} {', '.join(map(str, indices))}"
    held = f" (held by worker{'s' * (len(holders) > 1)} {', '.join(holders)}, now gone)" \
        if holders else ""
    return RuntimeError(
        f"numbagrad.distributed: {which}{held} could not be placed on any worker within "
        f"{_WORKER_WAIT} s: the workers died or left and none came back "
        f"({type(exc).__name__}: {exc})")


class Sent:
    """An object every task of a distributed function needs (the function; the module and
    loss), under a token chosen here that workers cache it and its traces by. Pickled once
    here, a small one travels inside each task; a large one is scattered to every worker, and
    a worker whose copy Dask dropped fetches it again, but still uses the copy it first got."""

    def __init__(self, client, obj, what="function"):
        self.token = uuid.uuid4().hex
        data = cloudpickle.dumps(obj)
        if len(data) <= _SCATTER_INLINE_BYTES:
            self.placed, self._inline = None, _worker.Pickled(data)
        else:
            self.placed = Placed(client, [obj], broadcast=True, what=what)
            self._inline = None

    @property
    def arg(self):
        """What a task takes: the pickled bytes, or the future of the scattered object."""
        return self._inline if self.placed is None else self.placed.futures[0]

    @property
    def placements(self):
        """What run_with_retries scatters again when a worker holding it dies."""
        return [] if self.placed is None else [self.placed]

    def forget(self, client):
        """Let the workers drop the object and its traces."""
        with contextlib.suppress(Exception):  # a closed client or cluster holds nothing
            client.run(_worker.forget, self.token)


def place_shards(client, data_shards):
    """The shards as futures on the workers: a list of arrays or tuples of arrays is
    scattered; a Dask array (or a tuple of them with the same row chunks) gives one shard per
    block of rows; a list of futures is taken as it is."""
    if is_dask_collection(data_shards) or (
            isinstance(data_shards, tuple) and data_shards and
            all(is_dask_collection(a) for a in data_shards)):
        return Placed.given(client, client.compute(_row_blocks(data_shards)))
    shards = list(data_shards)
    if not shards:
        raise ValueError("numbagrad.distributed: data_shards is empty")
    if all(isinstance(s, Future) for s in shards):
        return Placed.given(client, shards)
    if any(isinstance(s, Future) for s in shards):
        raise TypeError("numbagrad.distributed: data_shards mixes futures and local data")
    return Placed(client, shards, what="shard")


def _row_blocks(arrays):
    """Delayed shards, one per block of rows of one Dask array or of several together."""
    several = isinstance(arrays, tuple)
    arrays = arrays if several else (arrays,)
    rows = arrays[0].chunks[0]
    if any(a.chunks[0] != rows for a in arrays):
        raise ValueError("numbagrad.distributed: the Dask arrays of a shard must have the "
                         f"same row chunks, got {[a.chunks[0] for a in arrays]}")
    blocks = []
    for a in arrays:
        a = a.rechunk({axis: -1 for axis in range(1, a.ndim)})  # whole rows per block
        blocks.append(list(a.to_delayed().reshape(-1)))
    if not several:
        return blocks[0]
    return [delayed(_worker.pack)(*parts) for parts in zip(*blocks)]


def ship(client, obj):
    """A small argument goes in each task; a large one is scattered once per call."""
    if isinstance(obj, np.ndarray) and obj.nbytes > _SCATTER_INLINE_BYTES:
        return client.scatter(obj, hash=False)
    return obj


def pairwise(items, add):
    """Sum items pairwise, in a fixed order (the same order on the workers and here)."""
    level = list(items)
    while len(level) > 1:
        paired = [add(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        level = paired + level[len(paired) * 2:]
    return level[0]


def tree_sum(client, futures):
    """Sum (value, gradient) pairs pairwise on the workers, in a fixed order."""
    return pairwise(futures, lambda a, b: client.submit(_worker.add_pair, a, b, pure=False))


def sum_here(client, futures):
    """The same sum done in this process: for small gradients, gathering the parts costs one
    round trip where a tree on the workers costs one per level."""
    return pairwise(client.gather(futures), _worker.add_pair)


def run_with_retries(placements, submit_all, gather):
    """``gather(submit_all())``; when that fails because a worker died with an input, place
    the lost inputs again and run the whole call again (the result is the same)."""
    for attempt in range(_MAX_RETRIES + 1):
        try:  # submitting asks where the inputs are: an input lost since then raises there
            return gather(submit_all())
        except (FutureCancelledError, FuturesCancelledError):
            replaced = [p.replace_lost() for p in placements]
            if attempt == _MAX_RETRIES or not any(replaced):
                raise


def progress_bar(total, desc, enabled):
    """A tqdm bar (tqdm.auto: a widget in Jupyter), or None when progress is off."""
    if not enabled:
        return None
    return tqdm(total=total, desc=desc)


def gather_in_order(client, futures, bar):
    """Results in submission order; the bar moves as each one finishes."""
    if bar is None:
        return client.gather(futures)
    try:
        for future in as_completed(futures):
            future.result()  # raises the worker's error at once
            bar.update(1)
    finally:
        bar.close()
    return client.gather(futures)
