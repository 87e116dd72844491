"""Fresh processes, as a new user meets them: empty caches (a new machine) and warm ones.

Each row runs in a new Python process; numbagrad's cold rows point NUMBA_CACHE_DIR and
NUMBAGRAD_CACHE_DIR at a new empty directory. Rows:
- the seed example ``y = w * x + b; y.backward()``: import + first gradient (torch, JAX), on
  empty caches the median (and range) of 3 processes;
- ``python -m numbagrad``, the whole tour;
- the first call of ``numbagrad.compile(func.value_and_grad(rosenbrock))``, n = 1000
  (``jax.jit(jax.value_and_grad(...))``'s first call beside it): on empty caches the median
  (and range) of 3 processes, with the compile worker processes and without them;
- a user's ``@njit(cache=True)`` function calling ``as_numba()``'s function: its first call
  (compile) and, in a later process, again (Numba's cache);
- ``python -m numbagrad warmup train.py`` of a small MLP training script on empty caches,
  then the script itself (and torch's run of it).
Run: python bench/bench_coldstart.py [warmup]   (``warmup``: those rows only; JAX rows are
skipped when JAX is not installed)
"""

import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import time

SEED = {
    "numbagrad": """
        import numbagrad as torch
        x = torch.tensor(2.); w = torch.tensor(3., requires_grad=True)
        b = torch.tensor(1., requires_grad=True)
        y = w * x + b
        y.backward()
        assert float(w.grad) == 2.0
    """,
    "torch": """
        import torch
        x = torch.tensor(2.); w = torch.tensor(3., requires_grad=True)
        b = torch.tensor(1., requires_grad=True)
        y = w * x + b
        y.backward()
        assert float(w.grad) == 2.0
    """,
    "jax": """
        import jax
        g = jax.grad(lambda w, b: w * 2.0 + b, argnums=(0, 1))(3.0, 1.0)
        assert float(g[0]) == 2.0
    """,
}
ROSENBROCK = {
    "numbagrad": """
        import time
        import numpy as np, numbagrad as ng
        def f(x):
            return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        t0 = time.perf_counter()
        v, g = ng.compile(ng.func.value_and_grad(f))(np.zeros(1000))
        print(f"CALLER {time.perf_counter() - t0:.3f}")
        assert g[0] == -2.0
    """,
    "jax": """
        import jax, numpy as np
        jax.config.update("jax_enable_x64", True)
        def f(x):
            return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        v, g = jax.jit(jax.value_and_grad(f))(np.zeros(1000))
        assert float(g[0]) == -2.0
    """,
}
AS_NUMBA = """
    import numpy as np, numbagrad as ng
    from numba import njit
    def f(x):
        return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
    vg = ng.compile(ng.func.value_and_grad(f))
    x0 = np.zeros(1000)
    step = vg.as_numba(x0)

    @njit(cache=True)
    def descend(x, steps, lr):
        g = np.empty_like(x)
        for _ in range(steps):
            step(x, g)
            x -= lr * g
        return x

    import time
    t0 = time.perf_counter()
    descend(x0.copy(), 2, 1e-4)
    print(f"CALLER {time.perf_counter() - t0:.3f}")
"""


def run(script, env=None, where=None):
    """Wall time of a fresh process running ``script``, and what it printed; with ``where``
    (a directory), the script runs from a file there (Numba caches only functions that
    live in a file)."""
    args = ["-c", textwrap.dedent(script)]
    if where is not None:
        os.makedirs(where, exist_ok=True)
        path = os.path.join(where, f"script_{abs(hash(script))}.py")
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(textwrap.dedent(script))
        args = [path]
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                         env={**os.environ, **(env or {})})
    if out.returncode != 0:
        raise RuntimeError(f"the benchmark's script failed:\n{out.stderr}")
    return time.perf_counter() - t0, out.stdout


def cold_env(d):
    return {"NUMBA_CACHE_DIR": os.path.join(d, "numba"),
            "NUMBAGRAD_CACHE_DIR": os.path.join(d, "numbagrad"), "NUMBAGRAD_PROGRESS": "0"}


def cold_runs(script, extra=None, n=3):
    """``n`` fresh processes running ``script``, each on empty caches: their wall times and
    the times they printed for their first call, each sorted."""
    walls, calls = [], []
    for _ in range(n):
        with tempfile.TemporaryDirectory() as d:
            wall, out = run(script, {**cold_env(d), **(extra or {})})
            walls.append(wall)
            calls.append(caller_time(out))
    return sorted(walls), sorted(calls)


def caller_time(out):
    return float(next(line for line in out.splitlines() if line.startswith("CALLER")).split()[1])


TRAIN = """
    import numpy as np
    import numbagrad as torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(128, 64), torch.randint(0, 10, (128,))
    for step in range(20):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    print(float(loss))
"""


def warmup_rows():
    """``python -m numbagrad warmup train.py`` on empty caches, then ``train.py`` alone."""
    with tempfile.TemporaryDirectory() as d:
        env = {**os.environ, **cold_env(d)}
        path = os.path.join(d, "train.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(TRAIN))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "numbagrad", "warmup", path], check=True,
                       capture_output=True, env=env)
        warm_up = time.perf_counter() - t0
        after = min(run(TRAIN, cold_env(d))[0] for _ in range(3))
    torch_t = min(run(TRAIN.replace("import numbagrad as torch", "import torch"))[0]
                  for _ in range(3))
    return [("python -m numbagrad warmup train.py (an MLP's 20 Adam steps)", warm_up, None,
             None, None),
            ("train.py after that warm-up", None, after, torch_t, None)]


def main():
    if sys.argv[1:] == ["warmup"]:
        return report(warmup_rows())
    have_jax = importlib.util.find_spec("jax") is not None
    rows = []
    seed_cold = []  # three empty caches, as the Rosenbrock rows below
    for _ in range(3):
        with tempfile.TemporaryDirectory() as d:
            seed_cold.append(run(SEED["numbagrad"], cold_env(d))[0])
    seed_cold.sort()
    with tempfile.TemporaryDirectory() as d:
        env = cold_env(d)
        run(SEED["numbagrad"], env)
        seed_warm = min(run(SEED["numbagrad"], env)[0] for _ in range(3))
        torch_seed = min(run(SEED["torch"])[0] for _ in range(3))
        jax_seed = min(run(SEED["jax"])[0] for _ in range(3)) if have_jax else None
        rows.append(("import + seed example's first backward", seed_cold, seed_warm,
                     torch_seed, jax_seed))
    # a shared machine's cold compiles vary by a second or two: three empty caches each
    ros_one = cold_runs(ROSENBROCK["numbagrad"], {"NUMBAGRAD_COMPILE_WORKERS": "0"})
    ros_cold = cold_runs(ROSENBROCK["numbagrad"])
    with tempfile.TemporaryDirectory() as d:
        env = cold_env(d)
        run(ROSENBROCK["numbagrad"], env)
        ros_warm = min(run(ROSENBROCK["numbagrad"], env)[0] for _ in range(3))
        jax_ros = min(run(ROSENBROCK["jax"])[0] for _ in range(3)) if have_jax else None
        rows.append(("import + first compiled Rosenbrock value_and_grad (n = 1000)",
                     ros_cold[0], ros_warm, None, jax_ros))
        rows.append(("its first call alone", ros_cold[1], None, None, None))
        rows.append(("same, compiling in one process (NUMBAGRAD_COMPILE_WORKERS=0)",
                     ros_one[0], None, None, None))
        rows.append(("its first call alone, one process", ros_one[1], None, None, None))
        scripts = os.path.join(d, "scripts")  # not beside the cache dir named numbagrad
        caller_cold = caller_time(run(AS_NUMBA, env, scripts)[1])
        caller_warm = caller_time(run(AS_NUMBA, env, scripts)[1])
        rows.append(("user's @njit(cache=True) caller of as_numba(): its first call",
                     caller_cold, caller_warm, None, None))
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "numbagrad"], check=True, capture_output=True,
                       env={**os.environ, **cold_env(d)})
        tour_cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "numbagrad"], check=True, capture_output=True,
                       env={**os.environ, **cold_env(d)})
        tour_warm = time.perf_counter() - t0
        rows.append(("python -m numbagrad (the whole tour)", tour_cold, tour_warm, None, None))
    report(rows + warmup_rows())


def report(rows):
    def cell(t):
        if isinstance(t, list):  # several cold runs: their median and range
            return f"{t[len(t) // 2]:.2f} s ({t[0]:.2f}-{t[-1]:.2f})"
        return "—" if t is None else f"{t:.2f} s"

    print("| fresh process | numbagrad, empty caches | numbagrad, warm caches | torch 2.13 | "
          "JAX |")
    print("|---|---|---|---|---|")
    for name, cold, warm, torch_t, jax_t in rows:
        print(f"| {name} | {cell(cold)} | {cell(warm)} | {cell(torch_t)} | {cell(jax_t)} |")


if __name__ == "__main__":
    main()
