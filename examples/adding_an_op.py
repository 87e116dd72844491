"""Tutorial: add two ops to numbagrad's op table, so they run inside the compiled sweep.

Run: python examples/adding_an_op.py  (the first run compiles the two ops' kernels: seconds)

1. ``softsign`` (x / (1 + |x|)), elementwise: give the NumPy forward, the derivative as a
   scalar formula over g (upstream gradient), a (input) and y (output), and the replay
   formula. numbagrad generates the sweep's serial and parallel kernels from the formula
   and derives the differentiable form used by create_graph=True from it as well.
2. ``cumsum`` along the last dim, structured: give an @njit derivative kernel with the
   sweep's fixed signature ``bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat)``; every array is
   a flat float64 view (g, y: the output's gradient and value; x0, gx0: the input's value
   and the gradient to ADD into; sh_*: shapes; iat/fat: the node's int/float attributes).
   Its differentiable form (for second derivatives) is attached with ``@vjp_rule``.
"""

import numpy as np
from numba import njit

import numbagrad as ng
from numbagrad import extend

SOFTSIGN = extend.defop(
    "softsign", "SoftsignBackward0", 1,
    forward=lambda a: a / (1 + np.abs(a)),
    grads=("g / ((1.0 + abs(a)) * (1.0 + abs(a)))",),
    fwd="a / (1.0 + abs(a))",
)


def softsign(x):
    return extend.unary("softsign", x)


@njit(cache=True, error_model="numpy")
def cumsum_last_bw(g, y, x0, gx0, sh_y, sh0, need0, iat, fat):
    # y[..., j] = sum_{k <= j} x[..., k]  =>  dx[..., k] = sum_{j >= k} g[..., j]
    n = sh_y[sh_y.shape[0] - 1] if sh_y.shape[0] else 1
    for start in range(0, g.shape[0], n):
        acc = 0.0
        for j in range(n - 1, -1, -1):
            acc += g[start + j]
            gx0[start + j] += acc


CUMSUM = extend.defop("cumsum_last", "CumsumBackward0", 1, kernel=cumsum_last_bw)


def cumsum_last(x):
    return extend.record(CUMSUM, np.cumsum(x.detach().numpy(), axis=-1), (x,))


@extend.vjp_rule(CUMSUM)
def _cumsum_vjp(ctx, g):
    # the adjoint of a cumsum is a reversed cumsum: flip, cumsum, flip (all recorded ops)
    flip = [slice(None)] * (len(ctx.shape) - 1)
    rev = np.arange(ctx.shape[-1])[::-1].copy()
    return [cumsum_last(g[(*flip, rev)])[(*flip, rev)]]


def main():
    x = ng.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], dtype=ng.float64, requires_grad=True)
    y = (cumsum_last(softsign(x)) ** 2).sum()
    (g,) = ng.autograd.grad(y, x, create_graph=True)
    (h,) = ng.autograd.grad((g * g).sum(), x)
    y2 = (cumsum_last(softsign(x)) ** 2).sum()
    y2.backward()
    print("value =", y.item())
    print("grad =", x.grad.numpy().tolist())
    print("grad with create_graph =", g.detach().numpy().tolist())
    print("second derivative =", h.numpy().tolist())


if __name__ == "__main__":
    main()
