"""Where the big-node path starts to pay: serial sweep kernel vs its parallel twin, by size.

The sweep differentiates small nodes serially; a node at or above BIG elements goes to its
op's prange kernel. This measures tanh's and mul's backward both ways, 2 threads.
Run: python bench/threshold.py
"""

import numba
import numpy as np
from common import median_time

from numbagrad.engine import kernel_tables, registry

SIZES = [1_000, 4_000, 16_000, 32_000, 64_000, 256_000, 1_000_000]


def main():
    numba.set_num_threads(2)
    print("| elements | tanh serial | tanh parallel | mul serial | mul parallel |")
    print("|---|---|---|---|---|")
    for n in SIZES:
        g, y, gx = np.random.rand(n), np.random.rand(n), np.zeros(n)
        b, gb = np.random.rand(n), np.zeros(n)
        sh = np.array([n], np.int64)
        e0, ef = np.empty(0, np.int64), np.empty(0)
        cells = []
        for name in ("tanh", "mul"):
            for par in ("", "p"):
                fn = kernel_tables.njit_kernel(registry.BY_NAME[name], f"_ew{par}_{name}")
                if name == "tanh":
                    def call(_, fn=fn):
                        fn(g, y, y, gx, sh, sh, True, e0, ef)
                else:
                    def call(_, fn=fn):
                        fn(g, y, y, b, gx, gb, sh, sh, sh, 1, 1, e0, ef)
                call(None)
                cells.append(median_time(call, repeat=21) * 1e6)
        print(f"| {n:,} | " + " | ".join(f"{c:.1f} us" for c in cells) + " |")


if __name__ == "__main__":
    main()
