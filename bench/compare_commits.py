"""Speed of this checkout against an earlier commit, in one run: each workload in fresh
processes that alternate between the two trees, so that a slow spell of a shared machine
falls on both alike.

The earlier commit is checked out in a git worktree (under the cache directory, kept for
later runs); each tree runs through PYTHONPATH with caches of its own, warmed by a first
untimed round (an old tree may compile for minutes there). 1 thread unless a workload says
otherwise. Prints a markdown table: per tree, the median of the rounds' figures and their
range, and this checkout's ratio to the earlier one.

The cold workloads (``cold_*``) run each process on new empty caches, as on a new machine;
``import_numbagrad`` times the import alone (warm caches);
``warm_compiled_logreg_first_call`` the first call of a compiled logistic regression's
value_and_grad in a fresh process, its kernels in the (warm) caches.

Run: python bench/compare_commits.py 0723ab6 [--rounds 3] [--only eager_scalar_backward,...]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "numbagrad-compare"

PRELUDE = """
import time, statistics, numpy as np, numba
import numbagrad as ng
import numbagrad.func
numba.set_num_threads(THREADS)
def best_of(fn, calls, repeat=5):
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best
"""

# name -> (unit, scale to that unit, threads, code printing one figure in seconds); the
# COLD ones run without the prelude, each process on new empty caches (a new machine)
COLD = {"cold_seed_backward", "cold_compiled_rosenbrock_first_call",
        "cold_compiled_fused_first_call"}
RAW = COLD | {"import_numbagrad", "warm_compiled_logreg_first_call"}
WORKLOADS = {
    "import_numbagrad": ("s", 1, 1, """
        import time
        t0 = time.perf_counter()
        import numbagrad
        print(time.perf_counter() - t0)
    """),
    "cold_seed_backward": ("s", 1, 1, """
        import time
        t0 = time.perf_counter()
        import numbagrad as ng
        w = ng.tensor(2.0, requires_grad=True)
        b = ng.tensor(0.5, requires_grad=True)
        y = w * ng.tensor(3.0) + b
        y.backward()
        print(time.perf_counter() - t0)
    """),
    "cold_compiled_rosenbrock_first_call": ("s", 1, 1, """
        import time
        import numpy as np
        import numbagrad as ng
        import numbagrad.func
        def f(x):
            return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        vg = ng.compile(ng.func.value_and_grad(f))
        x = np.random.default_rng(0).standard_normal(1000)
        t0 = time.perf_counter()
        vg(x)
        print(time.perf_counter() - t0)
    """),
    "cold_compiled_fused_first_call": ("s", 1, 1, """
        import time
        import numpy as np
        import numbagrad as ng
        import numbagrad.func
        def f(x, w, b):  # one fused region with its sum (fusion.py), 100,000 elements
            return (ng.tanh(x * w + b) * ng.exp(-x * x) + 0.5 * (w - b) ** 2).sum()
        vg = ng.compile(ng.func.value_and_grad(f, argnums=(0, 1, 2)))
        x, w, b = np.random.default_rng(0).standard_normal((3, 100_000))
        t0 = time.perf_counter()
        vg(x, w, b)
        print(time.perf_counter() - t0)
    """),
    "compiled_fused_elementwise": ("ms", 1e3, 1, """
        import numpy as np
        def f(x, w, b):
            return (ng.tanh(x * w + b) * ng.exp(-x * x) + 0.5 * (w - b) ** 2).sum()
        vg = ng.compile(ng.func.value_and_grad(f, argnums=(0, 1, 2)))
        x, w, b = np.random.default_rng(0).standard_normal((3, 1_000_000))
        print(best_of(lambda: vg(x, w, b), 1))
    """),
    "warm_compiled_logreg_first_call": ("s", 1, 1, """
        import time
        import numpy as np
        import numbagrad as ng
        import numbagrad.func
        rng = np.random.default_rng(0)
        X, y = rng.standard_normal((200, 5)), (rng.random(200) > 0.5).astype(np.float64)
        def nll(w, X, y):
            z = X @ w
            return (ng.nn.functional.softplus(z) - y * z).mean()
        vg = ng.compile(ng.func.value_and_grad(nll))
        t0 = time.perf_counter()
        vg(np.zeros(5), X, y)
        print(time.perf_counter() - t0)
    """),
    "eager_scalar_backward": ("ns/op", 1e9, 1, """
        from numbagrad.__main__ import scalar_graph
        init = np.random.default_rng(0).uniform(-1, 1, 100)
        def build():
            leaves = [ng.tensor(v, dtype=ng.float64, requires_grad=True) for v in init]
            return scalar_graph(ng, leaves, 10_000)
        build().backward()
        ts = []
        for _ in range(60):
            y = build()
            t0 = time.perf_counter(); y.backward(); ts.append(time.perf_counter() - t0)
        print(statistics.median(ts) / 10_099)
    """),
    "eager_scalar_forward": ("ns/op", 1e9, 1, """
        from numbagrad.__main__ import scalar_graph
        init = np.random.default_rng(0).uniform(-1, 1, 100)
        def build():
            leaves = [ng.tensor(v, dtype=ng.float64, requires_grad=True) for v in init]
            return scalar_graph(ng, leaves, 10_000)
        print(best_of(build, 1) / 10_099)
    """),
    "eager_rnn": ("ms", 1e3, 1, """
        rng = np.random.default_rng(0)
        xs = ng.tensor(rng.standard_normal((100, 1, 16)).astype(np.float32))
        params = [(rng.standard_normal(s) * 0.2).astype(np.float32)
                  for s in ((32, 16), (32, 32), (32,))]
        def step():
            w_ih, w_hh, b = [ng.tensor(a, requires_grad=True) for a in params]
            h = ng.zeros((1, 32), dtype=ng.float32)
            for t in range(100):
                h = ng.tanh(xs[t] @ w_ih.T + h @ w_hh.T + b)
            (h * h).sum().backward()
        print(best_of(step, 10))
    """),
    "eager_rosenbrock_1000": ("µs", 1e6, 1, """
        x0 = np.linspace(-1, 1, 1000)
        def step():
            x = ng.tensor(x0, requires_grad=True)
            (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum().backward()
        print(best_of(step, 100))
    """),
    "rosenbrock_1000": ("µs", 1e6, 1, """
        def f(x):
            return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        vg = ng.compile(ng.func.value_and_grad(f)); x = np.linspace(-1, 1, 1000)
        print(best_of(lambda: vg(x), 200))
    """),
    "rosenbrock_30000": ("µs", 1e6, 1, """
        def f(x):
            return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        vg = ng.compile(ng.func.value_and_grad(f)); x = np.linspace(-1, 1, 30_000)
        print(best_of(lambda: vg(x), 20))
    """),
    "compiled_scalar_graph": ("ns/op", 1e9, 1, """
        from numbagrad.__main__ import scalar_graph
        vg = ng.compile(ng.func.value_and_grad(
            lambda v: scalar_graph(ng, [v[i] for i in range(100)], 10_000)))
        x = np.random.default_rng(1).uniform(-1, 1, 100)
        print(best_of(lambda: vg(x), 50) / 10_000)
    """),
    "compiled_rnn": ("ms", 1e3, 1, """
        rng = np.random.default_rng(0)
        xs = rng.standard_normal((100, 1, 16)).astype(np.float32)
        params = tuple((rng.standard_normal(s) * 0.2).astype(np.float32)
                       for s in ((32, 16), (32, 32), (32,)))
        def loss(p, xs):
            w_ih, w_hh, b = p
            h = ng.zeros((1, 32), dtype=ng.float32)
            for t in range(xs.shape[0]):
                h = ng.tanh(xs[t] @ w_ih.T + h @ w_hh.T + b)
            return (h * h).sum()
        vg = ng.compile(ng.func.value_and_grad(loss))
        print(best_of(lambda: vg(params, xs), 20))
    """),
    "compiled_elementwise_3x4M": ("ms", 1e3, 2, """
        rng = np.random.default_rng(0)
        x, w, b = (rng.standard_normal(4_000_000) for _ in range(3))
        def f(x, w, b):
            return (ng.tanh(x * w + b) * ng.exp(-x * x) + 0.5 * (w - b) ** 2).sum()
        vg = ng.compile(ng.func.value_and_grad(f, argnums=(0, 1, 2)))
        print(best_of(lambda: vg(x, w, b), 3))
    """),
    "eager_elementwise_3x4M": ("ms", 1e3, 1, """
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal(4_000_000) for _ in range(3)]
        def step():
            x, w, b = (ng.tensor(a, requires_grad=True) for a in arrays)
            (ng.tanh(x * w + b) * ng.exp(-x * x) + 0.5 * (w - b) ** 2).sum().backward()
        print(best_of(step, 5))
    """),
    "eager_lstmcell_loop": ("ms", 1e3, 1, """
        rng = np.random.default_rng(0)
        xs = ng.tensor(rng.standard_normal((999, 97, 51)) * 0.1)
        cell = ng.nn.LSTMCell(51, 51).double()
        def step():
            cell.zero_grad()
            h = c = ng.zeros(97, 51, dtype=ng.float64)
            for t in range(999):
                h, c = cell(xs[t], (h, c))
            (h * h).sum().backward()
        print(best_of(step, 1, repeat=3))
    """),
    "eager_mlp_step": ("ms", 1e3, 1, """
        rng = np.random.default_rng(0)
        model = ng.nn.Sequential(ng.nn.Linear(784, 256), ng.nn.ReLU(), ng.nn.Linear(256, 256),
                                 ng.nn.ReLU(), ng.nn.Linear(256, 10))
        opt = ng.optim.SGD(model.parameters(), lr=0.01)
        x = ng.tensor(rng.standard_normal((64, 784)).astype(np.float32))
        y = ng.tensor(rng.integers(0, 10, 64))
        def step():
            opt.zero_grad()
            ng.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        print(best_of(step, 50))
    """),
}


def worktree(commit):
    """A checkout of ``commit`` (kept under CACHE for later runs)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", commit],
                         check=True, capture_output=True, text=True).stdout.strip()
    path = CACHE / sha
    if not (path / "numbagrad").is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), sha],
                       check=True, capture_output=True)
    engine = path / "numbagrad" / "engine"
    if (engine / "_fast_push.c").is_file() and not list(engine.glob("_fast_push*.so")):
        # its C recorder built in place, as `pip install -e .` builds this checkout's
        # (without it, that tree would record in Python)
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                       cwd=path, check=True, capture_output=True)
    return sha, path


def measure(tree, caches, name):
    """One fresh process running workload ``name`` against ``tree``: its figure in seconds.
    Python's bytecode is cached as after `pip install` (PYTHONDONTWRITEBYTECODE unset): a
    process that compiles every module's source first measures the source's length."""
    unit, scale, threads, code = WORKLOADS[name]
    with tempfile.TemporaryDirectory() as empty:
        if name in COLD:
            caches = Path(empty)
        env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=str(caches / "numba"),
                   NUMBAGRAD_CACHE_DIR=str(caches / "numbagrad"),
                   NUMBAGRAD_COMPILE_WORKERS="0")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        source = textwrap.dedent(code) if name in RAW else \
            PRELUDE.replace("THREADS", str(threads)) + textwrap.dedent(code)
        out = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True,
                             text=True, cwd=caches)
    if out.returncode != 0:
        raise RuntimeError(f"{name} failed on {tree}:\n{out.stderr[-2000:]}")
    return float(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", help="the earlier commit to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", help="comma-separated workloads (default: all)")
    opts = parser.parse_args()
    names = opts.only.split(",") if opts.only else list(WORKLOADS)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          check=True, capture_output=True, text=True).stdout.strip()
    if subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "numbagrad"],
                      capture_output=True, text=True).stdout.strip():
        head += "+changes"  # the working tree is measured, not the commit
    base, base_tree = worktree(opts.commit)
    trees = {head: ROOT, base: base_tree}
    caches = {sha: CACHE / f"caches-{sha.split('+')[0]}" for sha in trees}
    for path in caches.values():
        path.mkdir(parents=True, exist_ok=True)
    figures = {(sha, name): [] for sha in trees for name in names}
    for name in names:
        for sha, tree in trees.items():  # warm-up round: compiles, untimed
            measure(tree, caches[sha], name)
        for _ in range(opts.rounds):
            for sha, tree in trees.items():
                figures[sha, name].append(measure(tree, caches[sha], name))
    print(f"| workload | {head} (this checkout) | {base} | ratio |")
    print("|---|---|---|---|")
    for name in names:
        unit, scale = WORKLOADS[name][:2]
        cells = []
        for sha in trees:
            xs = [x * scale for x in figures[sha, name]]
            cells.append(f"{statistics.median(xs):.3g} {unit} ({min(xs):.3g}-{max(xs):.3g})")
        ratio = statistics.median(figures[head, name]) / statistics.median(figures[base, name])
        print(f"| {name} | {cells[0]} | {cells[1]} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
