"""Per op of the table, the largest difference in ulps (of the result's dtype) between
numbagrad.compile's replay and eager, over the value and every gradient of
``sum(op(x) * w)`` on the op tests' samples (issue 5's "replay equals eager bit for bit or
to 1 ulp per element"). Prints the op/dtype pairs over 1 ulp. A correctness diagnostic, not
a timing: no torch needed.

Run: python bench/replay_ulps.py   (from the repository root; uses tests/test_ops.py)
"""
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
from test_compile import _weighted_sum  # noqa: E402
from test_ops import CASES, _inputs  # noqa: E402

import numbagrad as ng  # noqa: E402
import numbagrad.func  # noqa: E402,F401


def ulps(a, b, dt=None):
    """Largest |a - b| in ulps of b's dtype (``dt`` for Python floats); inf where one is
    not finite and they differ."""
    b = np.asarray(b)
    dt = dt or b.dtype
    b = b.astype(dt) if b.dtype.kind == "f" else b
    a = np.asarray(a).astype(b.dtype)
    if a.size == 0:
        return 0
    fin = np.isfinite(a) & np.isfinite(b)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    sp = np.spacing(np.maximum(np.abs(a), np.abs(b)).astype(a.dtype))
    d = np.where(same, 0, np.where(fin, np.abs(a.astype(np.float64) - b) / sp, np.inf))
    return float(d.max())


def main():
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
    bad = {k: v for k, v in worst.items() if v > 1}
    print(f"{len(worst)} op/dtype pairs; {len(bad)} over 1 ulp")
    for (name, dt), v in sorted(bad.items(), key=lambda kv: -kv[1]):
        print(f"  {name:24s} {dt:8s} {v:g} ulp")


if __name__ == "__main__":
    main()
