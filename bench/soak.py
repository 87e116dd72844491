"""Soak: 100,000 training steps of a small MLP (16-32-32-4, batch 32, float32, Adam) on one
input tensor, the process's resident memory (RSS) every 10,000 steps, against torch doing the
same in its own process (1 thread each). The target: flat within 1 MiB after the first 10,000 steps.

Run: python bench/soak.py [steps]   (default 100000; torch's column is skipped without torch)
"""

import subprocess
import sys
import textwrap

STEP = """
import resource, sys, time
import numpy as np
import {lib} as lib
if "{lib}" == "torch":
    lib.set_num_threads(1)
else:
    import numba
    numba.set_num_threads(1)
lib.manual_seed(0)
nn = lib.nn
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                      nn.Linear(32, 4))
opt = lib.optim.Adam(model.parameters(), lr=1e-3)
rng = np.random.default_rng(0)
x = lib.tensor(rng.standard_normal((32, 16)).astype(np.float32))
y = lib.tensor(rng.integers(0, 4, 32))
steps = {steps}
t0 = time.perf_counter()
for k in range(1, steps + 1):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    if k % (steps // 10) == 0:
        with open("/proc/self/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
        print(k, rss, f"{{time.perf_counter() - t0:.1f}}", flush=True)
"""


def run(lib, steps):
    code = textwrap.dedent(STEP.format(lib=lib, steps=steps))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return [tuple(float(v) for v in line.split()) for line in out.splitlines()]


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    try:
        import torch  # noqa: F401
        libs = ["numbagrad", "torch"]
    except ImportError:
        libs = ["numbagrad"]
    rows = {lib: run(lib, steps) for lib in libs}
    print("| step | " + " | ".join(f"{lib} RSS (MiB)" for lib in libs) + " |")
    print("|---|" + "---|" * len(libs))
    for k in range(len(rows["numbagrad"])):
        cells = [f"{rows[lib][k][1] / 1024:.1f}" for lib in libs]
        print(f"| {int(rows['numbagrad'][k][0]):,} | " + " | ".join(cells) + " |")
    for lib in libs:
        rss = [r[1] for r in rows[lib][1:]]  # after the first tenth: caches warmed
        print(f"{lib}: RSS from step {int(rows[lib][1][0]):,} to the end grew "
              f"{(rss[-1] - rss[0]) / 1024:+.2f} MiB (max - min {(max(rss) - min(rss)) / 1024:.2f}"
              f" MiB); {rows[lib][-1][2]:.0f} s for {steps:,} steps")


if __name__ == "__main__":
    main()
