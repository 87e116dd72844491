"""The BLAS thread pools (numbagrad/_blas.py): importing numbagrad leaves them as they are
unless NUMBAGRAD_BLAS_THREADS asks; set_blas_threads sets them and puts them back; numbagrad
holds them at one thread only during its own calls that run BLAS, and puts back the user's
counts afterwards, whatever those are.

Each check runs in a fresh process whose pools start at THREADS threads (not the default,
nor one: a count numbagrad could only keep by leaving the pools alone)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

THREADS = 3

PRELUDE = f"""
import json, os, sys, threading
import numpy as np
import scipy.linalg.cython_blas  # SciPy's BLAS loaded too, as numbagrad's kernels load it
import threadpoolctl

threadpoolctl.threadpool_limits({THREADS}, user_api="blas")


def all_counts():
    return {{i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas"}}


def counts():  # the user's pools: all but numbagrad's own BLAS copy (engine/gemm.py)
    blas = sys.modules.get("numbagrad._blas")
    private = blas._private if blas else set()
    return {{p: n for p, n in all_counts().items() if os.path.realpath(p) not in private}}


start = counts()
assert len(start) >= 1 and set(start.values()) == {{{THREADS}}}, start
report = {{}}
"""


def _run(body, **env):
    """Run PRELUDE + ``body`` in a new interpreter; returns the ``report`` dict it prints."""
    program = PRELUDE + textwrap.dedent(body) + "\nprint(json.dumps(report))\n"
    environ = {k: v for k, v in os.environ.items() if k != "NUMBAGRAD_BLAS_THREADS"}
    environ.update(env)
    done = subprocess.run([sys.executable, "-c", program], env=environ, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_leaves_the_pools_and_does_not_load_threadpoolctl():
    report = _run("""
        del sys.modules["threadpoolctl"]  # the prelude's: does numbagrad import it again?
        import numbagrad
        report["threadpoolctl"] = "threadpoolctl" in sys.modules
        import threadpoolctl
        report["same"] = counts() == start
        report["info"] = threadpoolctl.threadpool_info()
    """)
    assert report["same"], report["info"]
    assert not report["threadpoolctl"]


@pytest.mark.parametrize("value", ["1", "2"])
def test_environment_variable_sets_every_pool(value):
    report = _run("""
        import numbagrad
        report["counts"] = list(counts().values())
        report["restored"] = (numbagrad.set_blas_threads(None), counts() == start)[1]
    """, NUMBAGRAD_BLAS_THREADS=value)
    assert report["counts"] and set(report["counts"]) == {int(value)}
    assert report["restored"]


def test_environment_variable_zero_leaves_the_pools_and_a_bad_value_raises():
    report = _run("""
        import numbagrad
        report["same"] = counts() == start
    """, NUMBAGRAD_BLAS_THREADS="0")
    assert report["same"]
    with pytest.raises(AssertionError, match="NUMBAGRAD_BLAS_THREADS must be a whole number"):
        _run("import numbagrad", NUMBAGRAD_BLAS_THREADS="many")


def test_set_blas_threads_returns_the_previous_counts_and_none_restores():
    report = _run("""
        import numbagrad
        first = numbagrad.set_blas_threads(1)
        report["first"] = first == start
        report["one"] = set(counts().values()) == {1}
        second = numbagrad.set_blas_threads(2)
        report["second"] = set(second.values()) == {1}
        report["two"] = set(counts().values()) == {2}
        numbagrad.set_blas_threads(None)  # the counts before numbagrad first changed them
        report["restored"] = counts() == start
        with numbagrad.set_blas_threads(1) as before:
            report["inside"] = set(counts().values()) == {1}
        report["after_with"] = counts() == start and before == start
        numbagrad.set_blas_threads(2)
        numbagrad.set_blas_threads(dict(start))  # a returned dict sets those counts
        report["dict"] = counts() == start
    """)
    assert [check for check, ok in report.items() if not ok] == []


@pytest.mark.parametrize("bad,error", [(0, ValueError), (-2, ValueError), (1.5, TypeError),
                                       (True, TypeError), ("2", TypeError)])
def test_set_blas_threads_rejects_bad_counts(bad, error):
    import numbagrad

    with pytest.raises(error, match="set_blas_threads"):
        numbagrad.set_blas_threads(bad)


@pytest.mark.parametrize("products", ["own", "numpy"])
def test_calls_hold_one_thread_and_put_the_counts_back(products):
    """During a split product and a convolution the BLAS they call runs on one thread:
    numbagrad's own copy always, NumPy's (the products' fallback, without scipy-openblas64)
    and every other pool held; after eager forwards, backwards and compiled calls the
    counts are the user's again, also with several threads training at once, and a
    set_blas_threads made while a call holds the pools takes effect when it ends."""
    without = "        sys.modules['scipy_openblas64'] = None  # an ImportError\n"
    report = _run((without if products == "numpy" else "") + """
        import numbagrad as ng
        from numbagrad.engine import gemm
        from numbagrad.ops.nn import conv

        during = []
        # the library gemm calls: numbagrad's own (one thread always) or NumPy's, which an
        # eager product holds (a convolution holds all)
        report["own_blas"] = gemm.own_blas
        gemm_lib = sorted(ng._blas._private) if gemm.own_blas else \
            [c.filepath for c in gemm._ONE_THREAD._libraries()]

        def spy(fn, libs=None):
            def call(*args):
                now = all_counts()
                during.append({now[p] for p in (libs or now)})
                return fn(*args)
            return call

        gemm._product_parallel = spy(gemm._product_parallel, gemm_lib)
        conv._nfw_any = spy(conv._nfw_any)
        conv._wgrad_any = spy(conv._wgrad_any)
        ng.manual_seed(0)
        nn = ng.nn
        mlp = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
        x = ng.randn(64, 784)
        out = mlp(x)
        report["after_forward"] = counts() == start
        out.sum().backward()
        report["after_backward"] = counts() == start
        net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 30 * 30, 4))
        net(ng.randn(8, 3, 32, 32)).sum().backward()
        report["after_conv"] = counts() == start
        compiled = ng.compile(mlp)
        compiled(x).sum().backward()
        compiled(x).sum().backward()
        report["after_compiled"] = counts() == start
        grad = ng.compile(ng.func.grad(lambda w: (x @ w).tanh().sum()))
        grad(np.ones((784, 256), np.float32) / 784)
        report["after_compiled_grad"] = counts() == start
        report["held_at_one"] = bool(during) and all(d == {1} for d in during)
        report["gemm_lib_found"] = len(gemm_lib) == 1
        report["numba_threads"] = sys.modules["numba"].get_num_threads()

        def train():
            for _ in range(5):
                mlp(x).sum().backward()

        workers = [threading.Thread(target=train) for _ in range(3)]
        for w in workers:
            w.start()
        train()
        for w in workers:
            w.join()
        report["after_threads"] = counts() == start

        changed = []
        def change_inside(fn):
            def call(*args):
                if not changed:
                    changed.append(ng.set_blas_threads(2))
                    now = all_counts()
                    report["still_one_inside"] = {now[p] for p in gemm_lib} == {1}
                return fn(*args)
            return call
        gemm._product_parallel = change_inside(gemm._product_parallel)
        mlp(x).sum().backward()
        report["set_inside_applies_after"] = set(counts().values()) == {2}
        report["set_inside_returned_user_counts"] = changed[0] == start
        now = all_counts()
        report["gemm_lib_one_after"] = not gemm.own_blas or {now[p] for p in gemm_lib} == {1}
    """)
    assert report.pop("own_blas") == (products == "own")
    if report.pop("numba_threads") < 2:
        pytest.skip("one Numba thread: no split product runs on Numba's threads here")
    assert [check for check, ok in report.items() if not ok] == []
