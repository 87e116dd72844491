"""What a compiled function's guards cost: value and gradient of a piecewise function of
x (n = 1,000, float64, 1 thread), written with a mask from the input (a guard checked on the
input before the replay), with a mask from a computed value (a guard on the replay's values:
no fused regions, no scalar stream), and without a mask (clamp: no guard), against jax.jit
of the same where() (which traces the comparison) and torch eager, interleaved.

Run: taskset -c 1 python bench/bench_guards.py
"""

import numpy as np
from common import interleaved_medians, set_threads

import numbagrad as ng

N = 1000


def _numbagrad():
    fns = {
        "where(x > 0, x*x, -2x): guard on the input": lambda v: ng.where(
            v > 0, v * v, -2.0 * v).sum(),
        "where(sin(x) > 0, ...): guard on a computed value": lambda v: ng.where(
            v.sin() > 0, v * v, -2.0 * v).sum(),
        "clamp form, no guard": lambda v: (v.clamp(min=0) ** 2 - 2.0 * v.clamp(max=0)).sum(),
    }
    return {k: ng.compile(ng.func.value_and_grad(f)) for k, f in fns.items()}


def main():
    set_threads(1)
    import jax
    import jax.numpy as jnp
    import torch
    jax.config.update("jax_enable_x64", True)
    x = np.random.default_rng(0).standard_normal(N)
    ours = _numbagrad()
    jx = jnp.asarray(x)
    jf = jax.jit(jax.value_and_grad(lambda v: jnp.where(v > 0, v * v, -2.0 * v).sum()))
    jf2 = jax.jit(jax.value_and_grad(lambda v: jnp.where(jnp.sin(v) > 0, v * v,
                                                         -2.0 * v).sum()))

    def torch_where():
        t = torch.tensor(x, requires_grad=True)
        torch.where(t > 0, t * t, -2.0 * t).sum().backward()
        return t.grad

    calls = [lambda c=c: c(x) for c in ours.values()]
    calls += [lambda: jax.block_until_ready(jf(jx)), lambda: jax.block_until_ready(jf2(jx)),
              torch_where]
    for c in calls:
        c()  # trace, compile
    times = interleaved_medians(calls)
    names = list(ours) + ["jax.jit where(x > 0)", "jax.jit where(sin(x) > 0)",
                          "torch eager where(x > 0)"]
    print("| function (n = 1,000) | value and gradient per call |")
    print("|---|---|")
    for name, t in zip(names, times):
        print(f"| {name} | {t * 1e6:.1f} µs |")


if __name__ == "__main__":
    main()
