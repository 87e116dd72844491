"""numbagrad.distributed on a real Dask LocalCluster of two worker processes: values and
gradients equal one process's, training and many optimizations match local runs, errors name
the shard and carry the worker's traceback, and a worker killed mid-call changes nothing."""

import copy
import operator
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import cloudpickle
import dask
import numpy as np
import psutil
import pytest
import scipy.optimize

import numbagrad as ng
from numbagrad import func

pytest.importorskip("distributed")
from dask.distributed import Client, LocalCluster, default_client  # noqa: E402
from dask.system import cpu_count  # noqa: E402
from distributed.comm.core import CommClosedError  # noqa: E402

from numbagrad import distributed as nd  # noqa: E402
from numbagrad.distributed import _cluster, _worker  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
# the workers can't import this test module: its functions travel by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def client():
    # Dask closes a killed worker's Nanny for good when its new worker has not joined within
    # lost-worker-timeout (15 s): on a loaded machine a new worker importing numbagrad takes longer
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "300s"}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        with Client(cluster) as c:
            yield c
        cluster.close()


def least_squares(w, shard):
    X, y = shard
    r = X @ w - y
    return (r * r).sum()


SIZES = (5, 16, 3)  # inputs, hidden, outputs of the MLP below


def mlp_loss(params, shard):
    """A two-layer MLP's summed squared error, its weights unpacked from one flat vector."""
    X, Y = shard
    n_in, n_hid, n_out = SIZES
    a = n_in * n_hid
    b = a + n_hid
    c = b + n_hid * n_out
    hidden = ng.tanh(X @ params[:a].reshape(n_in, n_hid) + params[a:b])
    out = hidden @ params[b:c].reshape(n_hid, n_out) + params[c:]
    return ((out - Y) ** 2).sum()


def rosenbrock(x, a):
    return (a * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def _data(rows=600, cols=5, outs=None, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, cols))
    y = rng.standard_normal(rows if outs is None else (rows, outs))
    return X, y


def _local(f, params, data):
    value, grad = ng.compile(func.value_and_grad(f))(params, data)
    return float(value), np.asarray(grad)


def test_least_squares_value_and_gradient_equal_one_process(client):
    X, y = _data()
    w = np.random.default_rng(1).standard_normal(5)
    vg = nd.value_and_grad(least_squares, nd.split(X, y, n=5), client)
    value, grad = vg(w)
    ref_value, ref_grad = _local(least_squares, w, (X, y))
    assert isinstance(value, float) and grad.shape == w.shape and grad.dtype == np.float64
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-12 * abs(ref_grad).max())
    assert vg.n_shards == 5 and vg.client is client


def test_mlp_loss_value_and_gradient_equal_one_process(client):
    n_in, n_hid, n_out = SIZES
    X, Y = _data(rows=400, outs=n_out, seed=2)
    n_params = n_in * n_hid + n_hid + n_hid * n_out + n_out
    params = np.random.default_rng(3).standard_normal(n_params) * 0.3
    vg = nd.value_and_grad(mlp_loss, nd.split(X, Y, n=4), client)
    value, grad = vg(params)
    ref_value, ref_grad = _local(mlp_loss, params, (X, Y))
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-12 * abs(ref_grad).max())
    # and against the eager (uncompiled) gradient over the whole data
    eager_value, eager_grad = func.value_and_grad(mlp_loss)(params, (X, Y))
    np.testing.assert_allclose(grad, np.asarray(eager_grad), rtol=1e-12,
                               atol=1e-12 * abs(ref_grad).max())


def test_the_default_client_is_used(client):
    X, y = _data(rows=40)
    vg = nd.value_and_grad(least_squares, nd.split(X, y, n=2))
    assert vg.client is client


def test_dask_array_and_future_shards(client):
    da = pytest.importorskip("dask.array")
    X, y = _data(rows=500)
    w = np.linspace(-1, 1, 5)
    ref_value, ref_grad = _local(least_squares, w, (X, y))
    from_arrays = nd.value_and_grad(least_squares, (da.from_array(X, chunks=(128, 2)),
                                                    da.from_array(y, chunks=128)), client)
    assert from_arrays.n_shards == 4
    futures = client.scatter(nd.split(X, y, n=3))
    from_futures = nd.value_and_grad(least_squares, futures, client)
    for vg in (from_arrays, from_futures):
        value, grad = vg(w)
        np.testing.assert_allclose(value, ref_value, rtol=1e-12)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="same row chunks"):
        nd.value_and_grad(least_squares, (da.from_array(X, chunks=100),
                                          da.from_array(y, chunks=128)), client)


def test_minimize_through_the_distributed_gradient_reaches_the_same_optimum(client):
    X, y = _data(rows=800, seed=4)
    vg = nd.value_and_grad(least_squares, nd.split(X, y, n=4), client)
    x0 = np.zeros(5)
    distributed = scipy.optimize.minimize(vg, x0, jac=True, method="L-BFGS-B",
                                          options={"gtol": 1e-12, "ftol": 1e-15})
    local = ng.optimize.minimize(least_squares, x0, args=((X, y),), method="L-BFGS-B",
                                 options={"gtol": 1e-12, "ftol": 1e-15})
    exact = np.linalg.lstsq(X, y, rcond=None)[0]
    np.testing.assert_allclose(distributed.x, local.x, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(distributed.x, exact, rtol=1e-7, atol=1e-10)
    through_numbagrad = ng.optimize.minimize(vg, x0, method="BFGS")  # takes (value, grad)
    np.testing.assert_allclose(through_numbagrad.x, exact, rtol=1e-5, atol=1e-8)
    assert through_numbagrad.success and distributed.success


def _rss():
    return psutil.Process().memory_info().rss


def _traces_and_shards(client, vg):
    """Per worker: (the traces it holds for ``vg``, the shards of ``vg`` it holds)."""
    traces = client.run(_worker.traces_of, vg.function.token)
    held = client.who_has(vg.shards.futures)
    shards = {w: sum(w in held[f.key] for f in vg.shards.futures) for w in traces}
    return {w: (traces[w], shards[w]) for w in traces}


def _wait_one_copy(client, future, timeout=10):
    """Until the scheduler knows one copy of ``future`` only (Dask dropped the others)."""
    deadline = time.monotonic() + timeout
    while len(client.who_has([future])[future.key]) > 1:
        assert time.monotonic() < deadline, "Dask did not drop the extra copies"
        time.sleep(0.05)


def test_every_call_after_the_first_replays_while_dask_drops_extra_copies(client):
    """Dask's Active Memory Manager (on by default) drops a worker's extra copies of a
    broadcast object; the worker fetches it again as a new object. The traces are still
    found: one per shard on each worker over 100 calls, and the workers' memory stays flat."""
    assert dask.config.get("distributed.scheduler.active-memory-manager.start")
    X, y = _data(rows=64, seed=10)
    bulk = np.ones(_cluster._SCATTER_INLINE_BYTES // 8 + 1)

    def heavy(w, shard):  # too large to travel in each task: scattered to every worker
        return least_squares(w, shard) * bulk[0]

    vg = nd.value_and_grad(heavy, nd.split(X, y, n=4), client)
    assert vg.function.placed is not None
    w = np.linspace(-1, 1, 5)
    vg(w)
    before = client.run(_rss)
    for call in range(100):
        value, grad = vg(w)
        if call % 20 == 0:  # Dask drops the copies every 2 s; here at once, for certain
            client.amm.run_once()
            _wait_one_copy(client, vg.function.arg)
    after = client.run(_rss)
    for worker, (traces, shards) in _traces_and_shards(client, vg).items():
        assert traces == shards, (worker, traces, shards)
    assert sum(shards for _, shards in _traces_and_shards(client, vg).values()) == 4
    for worker in before:
        assert after[worker] < 1.05 * before[worker], (worker, before[worker], after[worker])
    ref_value, ref_grad = _local(heavy, w, (X, y))
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-12)

    small = nd.value_and_grad(least_squares, nd.split(X, y, n=3), client)
    assert small.function.placed is None  # travels pickled in each task
    for _ in range(5):
        small(w)
    for worker, (traces, shards) in _traces_and_shards(client, small).items():
        assert traces == shards, (worker, traces, shards)
    small.close()
    vg.close()
    assert set(client.run(_worker.traces_of, vg.function.token).values()) == {0}


def _mlp(seed):
    ng.manual_seed(seed)
    return ng.nn.Sequential(ng.nn.Linear(5, 16), ng.nn.Tanh(), ng.nn.Linear(16, 3)).double()


def _mse(model, xb, yb):
    return ng.nn.functional.mse_loss(model(xb), yb)


def test_data_parallel_training_matches_one_process_for_20_steps(client):
    X, _ = _data(rows=20 * 48, seed=5)
    Y = np.tanh(X @ np.random.default_rng(9).standard_normal((5, 3)))  # learnable
    batches = [(X[i * 48:(i + 1) * 48], Y[i * 48:(i + 1) * 48]) for i in range(20)]
    model = _mlp(0)
    reference = copy.deepcopy(model)
    optimizer = ng.optim.Adam(model.parameters(), lr=1e-2)
    ref_optimizer = ng.optim.Adam(reference.parameters(), lr=1e-2)
    losses = nd.DataParallel(model, _mse, client, n_parts=3).train(batches, optimizer,
                                                                    progress=False)
    ref_losses = []
    for xb, yb in batches:
        ref_optimizer.zero_grad()
        loss = _mse(reference, ng.from_numpy(xb), ng.from_numpy(yb))
        loss.backward()
        ref_optimizer.step()
        ref_losses.append(loss.item())
    assert len(losses) == 20 and np.mean(losses[-5:]) < np.mean(losses[:5])
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-10)
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-9,
                                   atol=1e-12, err_msg=name)


def test_data_parallel_backward_accumulates_like_backward(client):
    X, Y = _data(rows=30, outs=3, seed=6)
    model = _mlp(1)
    reference = copy.deepcopy(model)
    dp = nd.DataParallel(model, _mse, client)
    loss = dp.backward(ng.from_numpy(X), ng.from_numpy(Y))
    dp.backward(X, Y)  # a second backward adds to .grad
    ref_loss = _mse(reference, ng.from_numpy(X), ng.from_numpy(Y))
    ref_loss.backward()
    np.testing.assert_allclose(loss, ref_loss.item(), rtol=1e-12)
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), 2 * q.grad.numpy(), rtol=1e-10, atol=1e-14)
        assert p.grad.dtype == q.grad.dtype


def test_map_minimize_of_20_problems_matches_20_local_runs(client, capsys):
    rng = np.random.default_rng(7)
    x0s = [rng.uniform(-1.5, 1.5, size=6) for _ in range(20)]
    args_list = [(float(a),) for a in rng.uniform(1, 100, size=20)]
    results = nd.map_minimize(rosenbrock, x0s, args_list, client, method="L-BFGS-B",
                              progress=True)
    assert "problems" in capsys.readouterr().err  # the progress bar
    assert len(results) == 20
    for x0, args, result in zip(x0s, args_list, results):
        local = ng.optimize.minimize(rosenbrock, x0, args, method="L-BFGS-B")
        assert result.success and result.nit == local.nit
        np.testing.assert_allclose(result.x, local.x, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(result.fun, local.fun, rtol=1e-9, atol=1e-15)
    with pytest.raises(ValueError, match="20 starting points but 2"):
        nd.map_minimize(rosenbrock, x0s, args_list[:2], client)


def test_an_error_in_f_names_the_shard_and_carries_the_worker_traceback(client):
    X, y = _data(rows=60)
    shards = nd.split(X, y, n=3)
    shards[2] = (shards[2][0][:, :4], shards[2][1])  # one shard with a column missing
    vg = nd.value_and_grad(least_squares, shards, client)
    with pytest.raises(nd.WorkerError) as info:
        vg(np.ones(5))
    message = str(info.value)
    assert "shard 2 raised on worker tcp://" in message
    assert "Traceback on the worker" in message and "least_squares" in message
    assert info.value.worker.startswith("tcp://")

    def bad_loss(model, xb, yb):
        raise ValueError("no loss today")
    # both parts raise: the first error to reach this process names its part
    with pytest.raises(nd.WorkerError, match=r"part \d of the batch.*no loss today"):
        nd.DataParallel(_mlp(0), bad_loss, client).backward(X, y)
    with pytest.raises(nd.WorkerError, match="problem 1 raised"):
        nd.map_minimize(rosenbrock, [np.zeros(3), np.zeros(2, int)], [(1.0,), ("x",)], client,
                        progress=False)


def test_a_worker_without_numbagrad_is_named(tmp_path):
    hide = tmp_path / "hide_numbagrad.py"
    hide.write_text("import sys\nsys.modules['numbagrad'] = None\n")
    with LocalCluster(n_workers=1, processes=True, dashboard_address=None,
                      preload=[str(hide)]) as cluster, Client(cluster, set_as_default=False) as c:
        with pytest.raises(RuntimeError, match="cannot import numbagrad.*numbagrad\\[distributed\\]"):
            nd.value_and_grad(least_squares, [np.ones((2, 2))], c)


def test_an_unreachable_worker_is_not_taken_for_one_without_numbagrad():
    """A worker killed a moment ago may still be listed: its probe fails with Dask's
    CommClosedError, which says nothing about numbagrad (CI saw this right after a kill)."""
    class Answers:
        def __init__(self, answers):
            self.answers = answers

        def run(self, *args, on_error):
            return self.answers

    _cluster.check_workers(Answers({"tcp://a": CommClosedError("Stream is closed"),
                                    "tcp://b": ng.__version__}))
    with pytest.raises(RuntimeError, match="tcp://b cannot import numbagrad"):
        _cluster.check_workers(Answers({"tcp://a": CommClosedError("closed"),
                                        "tcp://b": ImportError("no numbagrad")}))
    with pytest.raises(RuntimeError, match="has no workers"):
        _cluster.check_workers(Answers({"tcp://a": CommClosedError("closed")}))


def _kill_soon(client, address, delay):
    """SIGKILL the worker process at ``address`` after ``delay`` seconds."""
    pid = client.run(os.getpid)[address]

    def kill():
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
    thread = threading.Thread(target=kill)
    thread.start()
    return thread


def _wait_replaced(client, dead, timeout=180):
    """Until the scheduler has dropped the killed worker and its Nanny's new one has joined
    (a new worker imports numbagrad: on a loaded 2-core machine that took over a minute)."""
    deadline = time.monotonic() + timeout
    while True:
        workers = client.scheduler_info()["workers"]
        if dead not in workers and len(workers) == 2:
            return
        assert time.monotonic() < deadline, f"worker {dead} was not replaced: {list(workers)}"
        time.sleep(0.1)


def _slow_to_trace(f, seconds):
    """``f``, sleeping while its trace is recorded (Python code runs then: the first call on
    each worker), so that a worker can be killed in the middle of a call."""
    def slow(*args):
        time.sleep(seconds)
        return f(*args)
    return slow


def test_a_worker_killed_during_a_call_changes_nothing(client):
    X, y = _data(rows=300, seed=8)
    w = np.arange(5.0)
    vg = nd.value_and_grad(_slow_to_trace(least_squares, 1.5), nd.split(X, y, n=4), client)
    holder = next(iter(client.who_has([vg.shards.futures[0]])[vg.shards.futures[0].key]))
    before = list(vg.shards.futures)
    killer = _kill_soon(client, holder, delay=0.5)
    value, grad = vg(w)  # the worker dies while tracing: its shards are scattered again
    killer.join()
    assert vg.shards.futures[0] is not before[0]  # the lost shard was placed again
    _wait_replaced(client, holder)
    ref_value, ref_grad = _local(least_squares, w, (X, y))
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-12)

    x0s = [np.full(3, 0.1 * i) for i in range(8)]
    victim = sorted(client.scheduler_info()["workers"])[0]
    killer = _kill_soon(client, victim, delay=0.5)
    results = nd.map_minimize(_slow_to_trace(rosenbrock, 1.5), x0s, [(10.0,)] * 8, client,
                              progress=False)  # Dask runs the dead worker's problems again
    killer.join()
    _wait_replaced(client, victim)
    for x0, result in zip(x0s, results):
        local = ng.optimize.minimize(rosenbrock, x0, (10.0,))
        np.testing.assert_allclose(result.x, local.x, rtol=1e-10, atol=1e-12)



class _Sleep:
    """Unpickles as ``time.sleep(seconds)``: no class of this module reaches the worker."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __reduce__(self):
        return (time.sleep, (self.seconds,))


class _SlowToUnpickle:
    """``array``, unpickled on the worker only after ``seconds``: a worker can be killed
    while value_and_grad scatters the shards to it."""

    def __init__(self, array, seconds):
        self.array, self.seconds = array, seconds

    def __reduce__(self):
        return (operator.getitem, ((_Sleep(self.seconds), self.array), 1))


def test_a_worker_killed_while_the_shards_are_scattered_changes_nothing(client):
    X, y = _data(rows=200, seed=11)
    w = np.linspace(-1, 1, 5)
    shards = [(_SlowToUnpickle(a, 1.5), b) for a, b in nd.split(X, y, n=2)]
    _cluster.check_workers(client)  # the workers import numbagrad before the clock starts
    victim = sorted(client.scheduler_info()["workers"])[0]
    killer = _kill_soon(client, victim, delay=0.5)
    start = time.monotonic()
    vg = nd.value_and_grad(least_squares, shards, client)  # the victim dies receiving one
    value, grad = vg(w)
    killer.join()
    assert time.monotonic() - start < _cluster._WORKER_WAIT + 60  # bounded, not hung
    ref_value, ref_grad = _local(least_squares, w, (X, y))
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-12)
    _wait_replaced(client, victim)


def test_both_workers_killed_during_a_call_change_nothing(client):
    X, y = _data(rows=300, seed=12)
    w = np.arange(5.0)
    vg = nd.value_and_grad(_slow_to_trace(least_squares, 1.5), nd.split(X, y, n=4), client)
    workers = sorted(client.scheduler_info()["workers"])
    killers = [_kill_soon(client, address, delay=0.5) for address in workers]
    start = time.monotonic()
    value, grad = vg(w)  # no worker is left: the shards wait for the Nannies' new ones
    for killer in killers:
        killer.join()
    assert time.monotonic() - start < _cluster._WORKER_WAIT + 60  # bounded, not hung
    ref_value, ref_grad = _local(least_squares, w, (X, y))
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-12)
    for address in workers:
        _wait_replaced(client, address)


def test_shards_no_worker_takes_are_named_in_a_bounded_time(monkeypatch):
    monkeypatch.setattr(_cluster, "_WORKER_WAIT", 2)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster, \
            Client(cluster, set_as_default=False) as c:
        start = time.monotonic()
        with pytest.raises(RuntimeError, match="shards 0, 1 could not be placed on any "
                                               "worker within 2 s"):
            _cluster.place_shards(c, [np.ones(3), np.zeros(3)])
        assert time.monotonic() - start < 10

# Run by test_without_a_client_...: an intruder on the same machine, with no credentials
# (its own temporary ones, or none), tries to run code on every listener of the cluster.
_INTRUDER = """
import asyncio, sys
from distributed import Client
from distributed.comm import connect
from distributed.security import Security
marker, addresses = sys.argv[1], sys.argv[2:]
def payload():
    open(marker, "w").write("ran")
own = Security.temporary()
for address in addresses:
    plain = "tcp://" + address.split("://", 1)[1]
    for target, sec in ((address, own), (plain, None)):
        try:
            c = Client(target, timeout=5, security=sec, set_as_default=False)
            c.run(payload)
            print("RAN", target)
        except Exception as exc:
            pass
        async def raw(target=target, sec=sec):
            kw = sec.get_connection_args("client") if sec else {}
            comm = await connect(target, timeout=5, **kw)
            await comm.write({"op": "identity", "reply": True})
            return await asyncio.wait_for(comm.read(), 5)
        try:
            asyncio.run(raw())
            print("ANSWERED", target)
        except Exception:
            print("refused")
"""


def test_without_a_client_numbagrad_starts_a_local_cluster_and_closes_it(tmp_path):
    """No client given and none made: a LocalCluster of one process per core, one Numba
    thread each, closed at exit without errors, and closed to anyone else on the machine:
    another process (of another user too, where this one may switch) can neither run code
    on its scheduler or workers nor get an answer from them."""
    script = tmp_path / "no_client.py"
    marker = tmp_path / "pwned"
    script.write_text(
        "import os, subprocess, sys\n"
        "import numpy as np\n"
        "from numbagrad import distributed as nd\n"
        "def f(w, shard):\n"
        "    return ((shard @ w) ** 2).sum()\n"
        "def as_nobody():\n"
        "    os.setgid(65534)\n"
        "    os.setuid(65534)\n"
        "if __name__ == '__main__':\n"
        "    x = np.arange(12.0).reshape(6, 2)\n"
        "    vg = nd.value_and_grad(f, nd.split(x, n=2))\n"
        "    value, grad = vg(np.ones(2))\n"
        "    assert value == ((x @ np.ones(2)) ** 2).sum()\n"
        "    assert np.allclose(grad, 2 * x.T @ (x @ np.ones(2)))\n"
        "    threads = vg.client.run(eval, \"__import__('numba').get_num_threads()\")\n"
        "    print(type(vg.client.cluster).__name__, len(threads), set(threads.values()))\n"
        "    addresses = [vg.client.scheduler.address, *threads]\n"
        "    print(sorted({a.split('://')[0] for a in addresses}))\n"
        "    users = [None] + ([as_nobody] if os.geteuid() == 0 else [])\n"
        "    for user in users:\n"
        "        try:\n"
        # (the intruder's code on its command line: another user may not read tmp_path)
        f"            done = subprocess.run([sys.executable, '-c', {_INTRUDER!r}, {str(marker)!r},\n"
        "                                   *addresses], capture_output=True, text=True,\n"
        "                                  preexec_fn=user, timeout=240)\n"
        "        except PermissionError:\n"
        "            continue  # another user may not run this Python here\n"
        "        if user is not None and done.returncode and 'Error' in done.stderr and \\\n"
        "                not done.stdout:\n"
        "            continue  # nor read its packages or the script\n"
        "        assert done.stdout.split('\\n')[:-1] == ['refused'] * (2 * len(addresses)), \\\n"
        "            (done.stdout, done.stderr)\n"
        "        print('intruder', 'nobody' if user else 'same-user', 'refused')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # one worker per CPU this process may use (its affinity), as Dask counts them
    assert lines[0].split() == ["LocalCluster", str(cpu_count()), "{1}"]
    assert lines[1] == "['tls']"  # every listener speaks TLS
    assert "intruder same-user refused" in lines[2:]
    assert not marker.exists()
    assert " ERROR " not in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.skipif(shutil.which("taskset") is None or not hasattr(os, "sched_getaffinity"),
                    reason="needs taskset and CPU affinity (Linux)")
def test_the_default_local_cluster_counts_the_cpus_this_process_may_use():
    """Under ``taskset -c 0`` the process may use one CPU: one worker, not os.cpu_count()."""
    code = ("import sys\n"
            "from numbagrad.distributed import _cluster\n"
            "def cluster(**kwargs):\n"  # no cluster started: the worker count is the answer
            "    print(kwargs['n_workers'])\n"
            "    sys.exit(0)\n"
            "_cluster.LocalCluster = cluster\n"
            "_cluster.local_client()\n")
    done = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1"]


def test_a_scheduler_address_is_accepted_as_client():
    """``client="tcp://..."``: numbagrad connects, reuses that Client across calls, leaves the
    default client alone, and closes what it opened at exit (the cluster stays up)."""
    X, y = _data(rows=60)
    w = np.linspace(-1, 1, 5)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        vg = nd.value_and_grad(least_squares, nd.split(X, y, n=2), client=address)
        ref_value, ref_grad = _local(least_squares, w, (X, y))
        value, grad = vg(w)
        np.testing.assert_allclose(value, ref_value, rtol=1e-12)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-12)
        assert vg.client.scheduler.address == address
        results = nd.map_minimize(rosenbrock, [np.zeros(2)], [(1.0,)], address,
                                  progress=False)
        assert np.allclose(results[0].x, 1.0, atol=1e-5)
        dp = nd.DataParallel(_mlp(0), _mse, address)
        assert dp.client is vg.client
        dp.backward(X, np.tile(y[:, None], 3))
        assert _cluster.get_client(address) is vg.client  # one connection per address
        try:
            default = default_client()
        except ValueError:  # no default client in this process
            default = None
        assert default is not vg.client  # not made the default client
        opened = vg.client
        _cluster._close_opened()  # what numbagrad runs at exit
        assert opened.status == "closed" and cluster.status.name == "running"


def _unused_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_wrong_scheduler_address_fails_soon_naming_it(monkeypatch):
    assert _cluster._CONNECT_TIMEOUT <= 10  # Dask's default would wait 30 s
    monkeypatch.setattr(_cluster, "_CONNECT_TIMEOUT", 1)  # (the test's own wait, shorter)
    pytest.importorskip("distributed")  # (imported before the clock starts: a cold import
    # of Dask alone took seconds on a new machine; the bound tells 1 s from Dask's 30)
    address = f"tcp://127.0.0.1:{_unused_port()}"
    start = time.monotonic()
    with pytest.raises(OSError, match=f"no Dask scheduler answered at '{address}'"):
        nd.map_minimize(rosenbrock, [np.zeros(2)], [(1.0,)], address, progress=False)
    assert time.monotonic() - start < 15
    with socket.socket() as silent:  # accepts connections, never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        with pytest.raises(OSError, match=f"no Dask scheduler answered at '{address}'"):
            nd.DataParallel(_mlp(0), _mse, address)
        assert time.monotonic() - start < 15  # Dask's Client alone waits on and on
    for bad in ("127.0.0.1", "nope://127.0.0.1:1", ""):
        with pytest.raises(ValueError, match="is not a Dask scheduler address"):
            nd.value_and_grad(least_squares, [np.ones((2, 2))], client=bad)


def test_split():
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10.0)
    parts = nd.split(X, y, n=3)
    assert [len(p[0]) for p in parts] == [4, 3, 3]
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), y)
    assert len(nd.split(y, n=2)) == 2 and isinstance(nd.split(y, n=2)[0], np.ndarray)
    with pytest.raises(ValueError, match="different numbers of rows"):
        nd.split(X, y[:5], n=2)
    with pytest.raises(ValueError, match="n=11"):
        nd.split(y, n=11)
