"""numbagrad.distributed: gradients of sums over data, training and many optimizations, on a
Dask cluster.

Three entry points, all on any ``dask.distributed.Client`` or scheduler address
(``client="tcp://host:8786"``; by default the Client already made in this process, else a
``LocalCluster`` of one worker process per core this process may use):

- ``value_and_grad(f, data_shards)``: the shards stay on the workers; each call sends the
  parameters, every worker runs its compiled ``value_and_grad`` of ``f`` on its shards
  (compiled once per worker process and shard) and the parts are summed by a tree
  reduction.
- ``DataParallel(module, loss_fn)``: each step sends the module's ``state_dict()``, the
  workers compute the gradients of their part of the batch, and ``.grad`` receives the
  batch's gradient; the usual optimizer then steps.
- ``map_minimize(f, x0s, args_list)``: one compiled ``numbagrad.optimize.minimize`` per
  problem across the cluster.

A worker that dies mid-call, or while the data is scattered, loses nothing: Dask reruns its
tasks elsewhere, and data this process scattered is scattered again, on the workers left or
those that come back (all of them may die); if none takes it within 60 s, a RuntimeError
names what was lost. An error in ``f`` on a worker raises ``WorkerError``
naming the shard, part or problem, with the worker's traceback.
"""

try:
    import dask  # noqa: F401 - the check that the extra is installed
    import distributed as _dask_distributed  # noqa: F401
except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
    raise ImportError("numbagrad.distributed needs Dask: pip install 'numbagrad[distributed]'"
                      ) from exc

import numpy as np

from ..factories import from_numpy
from ..tensor import Tensor
from . import _cluster, _worker
from ._cluster import local_client
from ._worker import WorkerError

__all__ = ["value_and_grad", "DistributedValueAndGrad", "DataParallel", "map_minimize",
           "split", "local_client", "WorkerError"]


def split(*arrays: np.ndarray, n: int) -> list:
    """Split arrays along their first axis into ``n`` shards of nearly equal rows: a list of
    arrays for one array, else a list of tuples (the row blocks of each array together).

    Args:
        *arrays: array-likes with the same number of rows.
        n: the number of shards, between 1 and the number of rows.

    Returns:
        A list of ``n`` arrays, or of ``n`` tuples of arrays.
    """
    if not arrays:
        raise TypeError("split() needs at least one array")
    arrays = [np.asarray(a) for a in arrays]
    rows = {len(a) for a in arrays}
    if len(rows) != 1:
        raise ValueError(f"split(): the arrays have different numbers of rows {sorted(rows)}")
    if not 1 <= n <= rows.pop():
        raise ValueError(f"split(): n={n} must be between 1 and the number of rows")
    blocks = [np.array_split(a, n) for a in arrays]
    return blocks[0] if len(arrays) == 1 else list(zip(*blocks))


class DistributedValueAndGrad:
    """``vg(params) -> (value, gradient)``: the sum over the shards of ``f(params, shard)``
    and its gradient with respect to ``params``, computed on the workers holding the shards.
    NumPy in, ``(float, ndarray)`` out, so ``scipy.optimize.minimize(vg, x0, jac=True)`` and
    ``numbagrad.optimize.minimize(vg, x0)`` take it directly.

    Attributes:
        returns_value_and_grad: True: calls return the value and the gradient together
            (``numbagrad.optimize.minimize`` reads it).

    Args:
        f: ``f(params, shard)``, returning the shard's scalar part of the sum.
        data_shards: the data, as for ``value_and_grad``.
        client: a Dask Client or a scheduler address (default None: the default client,
            else a local cluster numbagrad starts).
    """

    returns_value_and_grad = True  # what numbagrad.optimize.minimize looks for

    def __init__(self, f, data_shards, client=None):
        self.client = _cluster.get_client(client)
        _cluster.check_workers(self.client)
        self.f = f
        self.shards = _cluster.place_shards(self.client, data_shards)
        self.function = _cluster.Sent(self.client, f)

    @property
    def n_shards(self) -> int:
        """How many shards the data is in."""
        return len(self.shards.futures)

    def __repr__(self):
        return (f"<numbagrad.distributed.value_and_grad({getattr(self.f, '__name__', '?')}) "
                f"over {self.n_shards} shards>")

    def __call__(self, params: np.ndarray) -> tuple[float, np.ndarray]:
        params = np.asarray(params)
        if params.dtype.kind != "f":
            params = params.astype(np.float64)
        client = self.client

        function = self.function

        def submit_all():
            sent = _cluster.ship(client, params)
            parts = [client.submit(_worker.shard_value_and_grad, function.token, function.arg,
                                   sent, shard.key, shard, i, pure=False,
                                   workers=self.shards.where(i))
                     for i, shard in enumerate(self.shards.futures)]
            return parts if small else _cluster.tree_sum(client, parts)

        def gather(futures):
            return _cluster.sum_here(client, futures) if small else futures.result()

        small = params.nbytes <= _cluster.SMALL_GRADIENT_BYTES
        value, grad = _cluster.run_with_retries([self.shards, *function.placements],
                                                submit_all, gather)
        return value, grad.reshape(params.shape)

    def close(self):
        """Release the shards this object placed and the workers' traces of them (the
        workers otherwise keep the traces of up to 256 shards until newer ones push them
        out)."""
        self.function.forget(self.client)
        self.shards.futures = []


def value_and_grad(f, data_shards, client=None) -> DistributedValueAndGrad:
    """Data-parallel ``value_and_grad``: ``f(params, shard)`` returns a scalar (the shard's
    part of a sum: sum, don't average, or weight by the shard's share); the result is a
    callable ``vg(params) -> (float, ndarray)`` of the sum over all shards.

    ``data_shards``: a list of arrays or of tuples of arrays (``split`` makes one), scattered
    to the workers once; a Dask array, or a tuple of Dask arrays with the same row chunks (one
    shard per block of rows); or a list of Dask futures. ``f`` is compiled with
    ``numbagrad.compile`` on each worker, once per worker process and shard, with the shard's
    data built into the trace (a call copies only the parameters).

    Args:
        f: ``f(params, shard)``, returning the shard's scalar part of the sum.
        data_shards: the data, as said above.
        client: a Dask Client or a scheduler address (default None: the default client,
            else a local cluster numbagrad starts).

    Returns:
        A ``DistributedValueAndGrad``.
    """
    return DistributedValueAndGrad(f, data_shards, client)


class DataParallel:
    """Data-parallel training of ``module``: ``backward(*batch)`` splits the batch's rows
    into parts, each worker computes ``loss_fn(module, *part)`` and its gradients on its copy
    of the module (loaded with this process's ``state_dict()`` at each step), and each
    parameter's ``.grad`` receives the batch's gradient (added to what is there, as
    ``backward()`` does). Then the usual optimizer steps.

    ``reduction="mean"``: ``loss_fn`` returns the mean over its part, and parts are weighted by
    their rows, so the result equals one process's mean loss over the whole batch (to
    rounding); ``"sum"``: parts are added. Buffers the forward updates on the workers (batch
    norm's running statistics) are not sent back, and each part draws its own dropout masks.

    Args:
        module: the nn.Module trained; its parameters receive the gradients.
        loss_fn: ``loss_fn(module, *part)``, returning the scalar loss of a part.
        client: a Dask Client or a scheduler address (default None: the default client,
            else a local cluster numbagrad starts).
        n_parts: how many parts a batch is split into (default None: one per worker).
        reduction: "mean" or "sum", as above (default "mean").
    """

    def __init__(self, module, loss_fn, client=None, *, n_parts=None, reduction="mean"):
        if reduction not in ("mean", "sum"):
            raise ValueError(f"DataParallel: reduction must be 'mean' or 'sum', got {reduction!r}")
        self.client = _cluster.get_client(client)
        _cluster.check_workers(self.client)
        self.module, self.reduction = module, reduction
        self.n_parts = n_parts or len(self.client.scheduler_info()["workers"])
        self.remote = _cluster.Sent(self.client, (module, loss_fn), "module and loss")

    def backward(self, *batch) -> float:
        """Fill ``.grad`` with the gradient of the batch's loss; returns the loss (a float).

        Args:
            *batch: arrays or Tensors with the same number of rows, split into parts by
                rows.

        Returns:
            The batch's loss, a float.
        """
        arrays = [b.detach().numpy() if isinstance(b, Tensor) else np.asarray(b) for b in batch]
        rows = len(arrays[0])
        parts = split(*arrays, n=min(self.n_parts, rows))
        parts = [p if isinstance(p, tuple) else (p,) for p in parts]
        weights = [len(p[0]) / rows if self.reduction == "mean" else 1.0 for p in parts]
        state = {k: v.numpy() for k, v in self.module.state_dict().items()}
        client = self.client
        placed_parts = _cluster.Placed(client, parts, what="part")
        placed_state = _cluster.Placed(client, [state], broadcast=True, what="module state")

        def submit_all():
            remote = self.remote
            grads = [client.submit(_worker.module_part_grads, remote.token, remote.arg,
                                   placed_state.futures[0], part, w, i, pure=False)
                     for i, (part, w) in enumerate(zip(placed_parts.futures, weights))]
            return _cluster.tree_sum(client, grads)

        loss, grads = _cluster.run_with_retries([*self.remote.placements, placed_parts,
                                                 placed_state], submit_all,
                                                lambda total: total.result())
        for name, p in self.module.named_parameters():
            g = grads.get(name)
            if g is None:
                continue
            g = from_numpy(np.asarray(g, dtype=p.detach().numpy().dtype))
            p.grad = g if p.grad is None else p.grad + g
        return loss

    def train(self, batches, optimizer, *, progress: bool = True) -> list[float]:
        """For each batch (a tuple of arrays or Tensors): ``zero_grad()``, ``backward``,
        ``step()``. Returns the losses; ``progress`` shows a bar over the steps.

        Args:
            batches: an iterable of batches, each a tuple of arrays or Tensors.
            optimizer: the optimizer of the module's parameters.
            progress: whether to show a progress bar (default True).

        Returns:
            The list of the batches' losses, floats.
        """
        total = len(batches) if hasattr(batches, "__len__") else None
        bar = _cluster.progress_bar(total, "training steps", progress)
        losses = []
        try:
            for batch in batches:
                optimizer.zero_grad()
                losses.append(self.backward(*batch))
                optimizer.step()
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(loss=f"{losses[-1]:.4g}")
        finally:
            if bar is not None:
                bar.close()
        return losses


def map_minimize(f, x0s, args_list=None, client=None, *, method=None,
                 compile: bool = True, progress: bool = True, **kwargs) -> list:  # noqa: A002
    """``numbagrad.optimize.minimize(f, x0s[i], args_list[i], method, **kwargs)`` for every
    problem i, across the cluster; returns scipy's ``OptimizeResult``s in order. ``f`` is
    compiled once per worker process and its traces reused across that worker's problems;
    ``progress`` shows a bar over the problems.

    Args:
        f: the objective, as for ``numbagrad.optimize.minimize``.
        x0s: the starting points, one per problem.
        args_list: the extra arguments of each problem (tuples, or single values), as many
            as ``x0s`` (default None: none).
        client: a Dask Client or a scheduler address (default None: the default client,
            else a local cluster numbagrad starts).
        method: scipy's method name (default None: scipy's choice).
        compile: as for ``numbagrad.optimize.minimize`` (default True).
        progress: whether to show a progress bar (default True).
        **kwargs: passed to ``numbagrad.optimize.minimize`` for every problem.

    Returns:
        The list of scipy ``OptimizeResult``s, in the order of ``x0s``.
    """
    client = _cluster.get_client(client)
    _cluster.check_workers(client)
    x0s = [np.asarray(x, np.float64) for x in x0s]
    if args_list is None:
        args_list = [()] * len(x0s)
    args_list = [tuple(a) if isinstance(a, (tuple, list)) else (a,) for a in args_list]
    if len(args_list) != len(x0s):
        raise ValueError(f"map_minimize: {len(x0s)} starting points but {len(args_list)} "
                         "argument tuples")
    function = _cluster.Sent(client, f)

    def submit_all():
        return [client.submit(_worker.minimize_one, function.token, function.arg, x0, args,
                              method, compile, kwargs, i, pure=False)
                for i, (x0, args) in enumerate(zip(x0s, args_list))]

    def gather(futures):
        bar = _cluster.progress_bar(len(futures), "problems", progress)
        return _cluster.gather_in_order(client, futures, bar)

    try:
        return _cluster.run_with_retries(function.placements, submit_all, gather)
    finally:
        function.forget(client)
