"""Conv2d(1, 16, 3, padding=1) on 32 float32 1x28x28 images: eager forward + backward,
numbagrad vs torch, 1 and 2 threads, then where numbagrad's time goes (im2col, GEMM, col2im).

Run: python bench/bench_conv.py
"""

import numpy as np
import torch
from common import median_time, row, set_threads
from numba import njit

import numbagrad
from numbagrad.nn.conv import Conv2d
from numbagrad.ops.nn import conv as conv_ops

N, C, H, W, CO, K = 32, 1, 28, 28, 16, 3
ROUNDS = 3


def build(lib, conv_cls, x, g, weight, bias):
    conv = conv_cls(C, CO, K, padding=1)
    with (torch.no_grad() if lib is torch else numbagrad.no_grad()):
        if lib is torch:
            conv.weight.copy_(torch.tensor(weight))
            conv.bias.copy_(torch.tensor(bias))
        else:
            conv.weight._array()[...] = weight
            conv.bias._array()[...] = bias
    return conv, lib.tensor(x), lib.tensor(g)


def measure(lib, conv, x, g, input_grad, repeat=31):
    """Median times of: forward; forward + backward from a scalar loss (``.sum()``, what a
    training step does: the conv's adjoint comes from the layer above); forward + backward
    from an explicit output gradient (``out.backward(g)``)."""
    x = x.detach().requires_grad_(input_grad)

    def clear():
        for p in conv.parameters():
            p.grad = None

    def step_loss(_):
        clear()
        conv(x).sum().backward()

    def step_grad(_):
        clear()
        conv(x).backward(g)

    for _ in range(3):  # warm-up (compiles on first use)
        step_loss(None)
        step_grad(None)
    t_fwd = median_time(lambda _: conv(x), repeat=repeat)
    t_loss = median_time(step_loss, repeat=repeat)
    t_grad = median_time(step_grad, repeat=repeat)
    return t_fwd, t_loss, t_grad


def check(conv_n, conv_t, x_n, x_t, g_n, g_t):
    x_n = x_n.detach().requires_grad_(True)
    x_t = x_t.detach().requires_grad_(True)
    for p in list(conv_n.parameters()) + list(conv_t.parameters()):
        p.grad = None
    conv_n(x_n).backward(g_n)
    conv_t(x_t).backward(g_t)
    tol = dict(rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(x_n.grad.numpy(), x_t.grad.numpy(), **tol)
    np.testing.assert_allclose(conv_n.weight.grad.numpy(), conv_t.weight.grad.numpy(), **tol)
    np.testing.assert_allclose(conv_n.bias.grad.numpy(), conv_t.bias.grad.numpy(), **tol)


# ---- the breakdown: numbagrad's kernels one at a time, serial, on the benchmark's shapes -------
@njit
def _im2col_all(x, geo, col):
    for n in range(geo[0]):
        conv_ops._im2col(x, n * geo[2] * geo[3], geo, col)


@njit
def _col2im_all(col, gx, geo):
    for n in range(geo[0]):
        conv_ops._col2im(col, gx, n * geo[2] * geo[3], geo)


@njit
def _gemm_fwd(w, col, res, n):
    for _ in range(n):
        np.dot(w, col, res)


@njit
def _gemm_wgrad(g, col, res, n):
    for _ in range(n):
        np.dot(g, col.T, res)


@njit
def _gemm_xgrad(w, g, col, n):
    for _ in range(n):
        np.dot(w.T, g, col)


def breakdown(x, weight, bias):
    """Serial (1 thread) times of numbagrad's pieces on the benchmark's shapes: the kernels
    whole, then their parts, then the engine's seeding of out.backward(g)."""
    x = x.reshape(-1)
    iat = np.array([0, 1, 1, 1, 1, 1, 1, 1], np.int64)
    sh_x, sh_y = np.array((N, C, H, W)), np.array((N, CO, H, W))
    sh_w, sh_b = np.array(weight.shape), np.array(bias.shape)
    geo = conv_ops._geo(sh_x, sh_y, sh_w, iat)
    kk, p = C * K * K, H * W
    w = weight.reshape(-1)
    g = np.ones(N * CO * p, np.float32)
    e = np.zeros(0, np.float32)
    gx, gw, gb = np.zeros(N * C * p, np.float32), np.zeros_like(w), np.zeros_like(bias)
    col = np.ones((kk + 1, p), np.float32)  # the cols with the row of ones (bias)
    wb = np.ones((CO, kk + 1), np.float32)  # [W | b]
    res = np.empty((CO, p), np.float32)
    rw = np.empty((CO, kk + 1), np.float32)
    gcol = np.empty((kk, p), np.float32)
    g2 = np.ones((CO, p), np.float32)
    w2 = weight.reshape(CO, kk)
    adj = np.zeros(N * CO * p, np.float32)

    def seed(_):  # what autograd/engine.py's _Run.seed does with out.backward(g)
        adj[:] += np.asarray(g, dtype=np.float64).reshape(-1)
    parts = [
        ("kernel: forward (conv_forward)",
         lambda _: conv_ops.conv_forward(x, w, bias, sh_x, sh_y, sh_w, iat)),
        ("kernel: backward, weight + bias (conv_nd_bw)",
         lambda _: conv_ops.conv_nd_bw(g, e, x, w, bias, gx, gw, gb, sh_y, sh_x, sh_w, sh_b,
                                       False, True, True, iat, e)),
        ("kernel: backward, input + weight + bias",
         lambda _: conv_ops.conv_nd_bw(g, e, x, w, bias, gx, gw, gb, sh_y, sh_x, sh_w, sh_b,
                                       True, True, True, iat, e)),
        ("  im2col (in the forward, and again in the backward)",
         lambda _: _im2col_all(x, geo, col[:kk])),
        ("  GEMM forward [W, b] @ [cols; 1]", lambda _: _gemm_fwd(wb, col, res, N)),
        ("  GEMM weight + bias gradient g @ [cols; 1]^T", lambda _: _gemm_wgrad(g2, col, rw, N)),
        ("  GEMM input gradient W^T @ g", lambda _: _gemm_xgrad(w2, g2, gcol, N)),
        ("  col2im (input gradient)", lambda _: _col2im_all(gcol, gx, geo)),
        ("engine: seeding out.backward(g) (float32 -> float64 -> float32)", seed),
    ]
    out = []
    for name, fn in parts:
        fn(None)
        out.append((name, min(median_time(fn, repeat=21) for _ in range(ROUNDS))))
    return out


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    g = rng.standard_normal((N, CO, H, W)).astype(np.float32)
    bound = 1 / 3
    weight = rng.uniform(-bound, bound, (CO, C, K, K)).astype(np.float32)
    bias = rng.uniform(-bound, bound, CO).astype(np.float32)
    conv_n, x_n, g_n = build(numbagrad, Conv2d, x, g, weight, bias)
    conv_t, x_t, g_t = build(torch, torch.nn.Conv2d, x, g, weight, bias)
    check(conv_n, conv_t, x_n, x_t, g_n, g_t)
    print(f"Conv2d({C}, {CO}, kernel_size={K}, padding=1), input {N}x{C}x{H}x{W} float32")
    for threads in (1, 2):
        set_threads(threads)
        print(f"\n{threads} thread(s)")
        print("| measure | numbagrad | torch 2.13 | ratio |")
        print("|---|---|---|---|")
        for input_grad in (False, True):
            # this 2-core VM shares its host: whole seconds run 2-20x slow at times, so the
            # libraries alternate, ROUNDS times, and each keeps its best median
            best_n = best_t = (float("inf"),) * 3
            for _ in range(ROUNDS):
                m_n = measure(numbagrad, conv_n, x_n, g_n, input_grad)
                m_t = measure(torch, conv_t, x_t, g_t, input_grad)
                best_n = tuple(map(min, best_n, m_n))
                best_t = tuple(map(min, best_t, m_t))
            (f_n, l_n, g_n_), (f_t, l_t, g_t_) = best_n, best_t
            tag = ", input requires grad" if input_grad else ""
            if not input_grad:
                print(row("forward", f_n, f_t))
            print(row(f"forward + backward, loss = out.sum(){tag}", l_n, l_t))
            print(row(f"forward + backward, out.backward(g){tag}", g_n_, g_t_))
    set_threads(1)
    print("\nWhere numbagrad's time goes (1 thread, these shapes; the rest of a step is the "
          "tape, the engine and the .grad buffers):")
    print("| part | time |")
    print("|---|---|")
    for name, t in breakdown(x, weight, bias):
        print(f"| {name} | {t * 1e3:.3f} ms |")


if __name__ == "__main__":
    main()
