"""Per-node cost of the generic compiled replay (numbagrad.compile), by op, on the small
tensors of an Elman RNN (hidden 32, input 16, float32): each case traces a chain of N nodes
of one kind, and the cost per node is (time(2N) - time(N)) / N with each time the fastest
of 301 replays, so the per-call fixed costs (arena copies, the Python call) cancel out.
Cases that need a second op to chain (a select feeds an add) subtract that op's own
figure. Forward only, and forward + reverse.

Run: python bench/bench_replay_ops.py
"""

import numpy as np
from common import median_time, set_threads

import numbagrad as ng
import numbagrad.func  # noqa: F401

H, I = 32, 16
RNG = np.random.default_rng(0)
W = np.linalg.qr(RNG.standard_normal((H, H)))[0].astype(np.float32)  # keeps |h| bounded
B = (RNG.standard_normal(H) * 0.01).astype(np.float32)
H0 = RNG.standard_normal((1, H)).astype(np.float32)


def chains(n):
    """name -> (function of the inputs, inputs, op it chains through (subtracted), or None)."""
    xs = RNG.standard_normal((n, 1, H)).astype(np.float32)
    return {
        "mm (1,32)@(32,32)": (lambda h, w: _loop(n, h, lambda h: h @ w), (H0, W), None),
        "add, same shape": (lambda h, g: _loop(n, h, lambda h: h + g), (H0, H0), None),
        "add, (1,32)+(32,) broadcast": (lambda h, b: _loop(n, h, lambda h: h + b), (H0, B),
                                        None),
        "tanh (1,32)": (lambda h: _loop(n, h, ng.tanh), (H0,), None),
        "select x[t] (1,32) (+ add)": (lambda h, x: _loop_i(n, h, lambda h, i: h + x[i]),
                                       (H0, xs), "add, same shape"),
        "permute w.T (32,32) (+ mm)": (lambda h, w: _loop(n, h, lambda h: h @ w.T), (H0, W),
                                       "mm (1,32)@(32,32)"),
        # h + 0 * sum(h): a bounded chain; the scalar multiply and the add of a one-element
        # tensor to a row are counted in with the sum
        "sum (1,32) (+ mul, add of a scalar)": (
            lambda h: _loop(n, h, lambda h: h + h.sum() * 0.0), (H0,), None),
    }


def _loop(n, h, step):
    for _ in range(n):
        h = step(h)
    return (h * h).sum()


def _loop_i(n, h, step):
    for i in range(n):
        h = step(h, i)
    return (h * h).sum()


def replay_time(fn, args, with_grad):
    c = ng.compile(ng.func.value_and_grad(fn, argnums=tuple(range(len(args)))))
    c(*args)
    p = next(iter(c.traces.values()))
    x = [np.asarray(a, np.float64).reshape(-1) for a in args]  # the inputs, flat (as run())
    # the fastest of many runs: the machine's 2 cores are shared, and a median still moves
    # by tens of percent with the other load; the minimum is the replay's own cost
    return min(median_time(lambda _: p._replay(x, with_grad), repeat=1) for _ in range(301))


def main(n=500):
    set_threads(1)
    small, large = chains(n), chains(2 * n)
    per = {}
    print(f"| op (float32, chains of {n} and {2 * n} nodes) | forward per node | "
          "forward + reverse per node |")
    print("|---|---|---|")
    for name in small:
        fn1, a1, sub = small[name]
        fn2, a2, _ = large[name]
        cost = [(replay_time(fn2, a2, g) - replay_time(fn1, a1, g)) / n for g in (False, True)]
        if sub is not None:
            cost = [c - s for c, s in zip(cost, per[sub])]
        per[name] = cost
        print(f"| {name} | {cost[0] * 1e9:.0f} ns | {cost[1] * 1e9:.0f} ns |")


if __name__ == "__main__":
    main()
