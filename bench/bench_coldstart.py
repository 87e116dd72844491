"""Fresh process: import + first gradient, with a warm Numba cache and with an empty one.

Run: python bench/bench_coldstart.py
"""

import os
import subprocess
import sys
import tempfile
import time

SCRIPT = """
import {lib} as torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(x * x).sum().backward()
assert x.grad.tolist() == [2.0, 4.0, 6.0]
"""


def run(lib, env=None):
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", SCRIPT.format(lib=lib)], check=True,
                   env={**os.environ, **(env or {})})
    return time.perf_counter() - t0


def main():
    run("numbagrad")  # make sure the default cache is warm
    warm = min(run("numbagrad") for _ in range(3))
    torch_t = min(run("torch") for _ in range(3))
    with tempfile.TemporaryDirectory() as d:
        cold = run("numbagrad", {"NUMBAGRAD_CACHE_DIR": d, "NUMBA_CACHE_DIR": d})
    print("fresh process: import + first gradient")
    print("| measure | numbagrad | torch 2.13 | ratio |")
    print("|---|---|---|---|")
    print(f"| warm cache | {warm:.2f} s | {torch_t:.2f} s | {warm / torch_t:.2f}x |")
    print(f"| cold (empty cache: compiles the sweep) | {cold:.1f} s | {torch_t:.2f} s | "
          f"{cold / torch_t:.1f}x |")


if __name__ == "__main__":
    main()
