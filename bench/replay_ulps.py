"""Per op of the table, the largest difference in ulps (of the result's dtype) between
numbagrad.compile's replay and eager, over the value and every gradient of
``sum(op(x) * w)`` on the op tests' samples (issue 5's "replay equals eager bit for bit or
to 1 ulp per element"). Prints the op/dtype pairs over 1 ulp, twice: on the samples as
they are (small nodes), and with the tape's big-node threshold at 1 element, so that eager
takes every node down its big-node path (its kernels in float32 for float32 nodes). A
correctness diagnostic, not a timing: no torch needed.

Run: python bench/replay_ulps.py   (from the repository root; uses tests/test_ops.py)
"""
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
from test_compile import _weighted_sum, ulps  # noqa: E402
from test_ops import CASES, _inputs  # noqa: E402

import numbagrad as ng  # noqa: E402
import numbagrad.func  # noqa: E402,F401


def measure():
    worst = {}
    for dtype in (np.float64, np.float32):
        for i, (op, _, sample) in enumerate(CASES):
            if not op.replayable:
                continue
            arrays = _inputs(op, sample, np.random.default_rng(7), dtype)
            f = _weighted_sum(op, sample, len(arrays), seed=i)
            eager = ng.func.value_and_grad(f, argnums=tuple(range(len(arrays))))
            try:
                ev, eg = eager(*arrays)
            except Exception:  # a sample the eager op itself rejects for this dtype
                continue
            v, g = ng.compile(eager)(*arrays)
            m = max([ulps(v, ev, np.dtype(dtype))] + [ulps(a, b) for a, b in zip(g, eg)])
            key = (op.name, np.dtype(dtype).name)
            worst[key] = max(worst.get(key, 0), m)
    return worst


def main():
    from numbagrad.core import tape

    default = tape.BIG
    for label, big in (("small nodes", default), ("big-node path (BIG = 1)", 1)):
        tape.BIG = big
        worst = measure()
        bad = {k: v for k, v in worst.items() if v > 1}
        print(f"{label}: {len(worst)} op/dtype pairs; {len(bad)} over 1 ulp")
        for (name, dt), v in sorted(bad.items(), key=lambda kv: -kv[1]):
            print(f"  {name:24s} {dt:8s} {v:g} ulp")
    tape.BIG = default


if __name__ == "__main__":
    main()
