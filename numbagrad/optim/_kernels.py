"""The optimizers' Numba kernels: one call updates every parameter of a group, in place.

The parameters, their gradients and their state tensors stay where they are (the user holds
the parameters, torch's state_dict shares the state tensors): a call receives their data
addresses as int64 arrays, and ``_ptr`` turns an address back into a typed pointer inside
the kernel. The Python side (``optimizer._Call``) only hands over C-contiguous arrays of the
kernel's dtype and keeps them alive during the call.

Arithmetic follows torch's CPU kernels operation by operation, in the parameters' dtype
(float32 parameters are updated in float32): ``a.add(b, alpha=s)`` is ``fma(s, b, a)``,
``addcmul(t1, t2, value=v)`` is ``fma(v * t1, t2, self)``, ``addcdiv`` is
``self + (v * t1) / t2``, ``lerp`` is torch's two-sided FMA formula. (torch's ``sqrt`` is
SLEEF's, within 1 ulp of the correctly rounded one used here.) Hyperparameters arrive in
``hp``, an array of the kernel's dtype, converted there from the Python doubles torch
computes them in; ``pp`` holds per-parameter values (bias corrections, first-step flags).
``error_model="numpy"``: a division by zero gives inf/nan as in torch (and lets LLVM
vectorize the loops).
"""

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic

SGD, ADAM, RMSPROP, ADAGRAD = 0, 1, 2, 3


@intrinsic
def _ptr(typingctx, addr, like):
    """The int64 ``addr`` as a pointer to elements of ``like``'s dtype."""
    ptr_t = types.CPointer(like.dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(ptr_t))

    return ptr_t(types.int64, like), codegen


@intrinsic
def _fma(typingctx, a, b, c):
    """a * b + c rounded once, as torch's vectorized CPU kernels compute it."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return a(a, b, c), codegen


@njit(cache=True, error_model="numpy")
def _view(addrs, i, n, like):
    return carray(_ptr(addrs[i], like), (n,))


@njit(cache=True, error_model="numpy")
def _maximum(a, b):
    """torch.maximum: NaN if either is NaN."""
    if a != a or a > b:
        return a
    return b


@njit(cache=True, error_model="numpy")
def _lerp(start, end, w, w_minus_one, small):
    diff = end - start
    if small:
        return _fma(w, diff, start)
    return _fma(w_minus_one, diff, end)


# The loops are specialised (inlined with constant flags) on the conditions that guard a
# load or a store, so that LLVM vectorizes each of them; the other flags are selects.
@njit(inline="always", error_model="numpy")
def _sgd_loop(p, g, buf, lo, hi, hp, use_momentum, init):
    neg_lr, momentum, one_minus_dampening, wd = hp[0], hp[1], hp[2], hp[3]
    use_wd, nesterov, maximize = hp[4] != 0, hp[6] != 0, hp[7] != 0
    for j in range(lo, hi):
        d = -g[j] if maximize else g[j]
        if use_wd:
            d = _fma(wd, p[j], d)                       # grad.add(param, alpha=wd)
        if use_momentum:
            if init:
                b = d                                   # buf = grad.clone()
            else:
                b = _fma(one_minus_dampening, d, buf[j] * momentum)
            buf[j] = b
            d = _fma(momentum, b, d) if nesterov else b
        p[j] = _fma(neg_lr, d, p[j])                    # param.add_(grad, alpha=-lr)


@njit(cache=True, error_model="numpy")
def _sgd(p, g, buf, lo, hi, hp, init):
    if hp[5] == 0:
        _sgd_loop(p, g, buf, lo, hi, hp, False, False)
    elif init:
        _sgd_loop(p, g, buf, lo, hi, hp, True, True)
    else:
        _sgd_loop(p, g, buf, lo, hi, hp, True, False)


@njit(inline="always", error_model="numpy")
def _adam_loop(p, g, m, v, vmax, lo, hi, hp, neg_step_size, bc2_sqrt, amsgrad):
    w1, beta2, one_minus_beta2, eps, wd, decay = hp[0], hp[1], hp[2], hp[3], hp[4], hp[5]
    coupled_wd, decoupled_wd, maximize = hp[6] != 0, hp[7] != 0, hp[9] != 0
    w1m1 = w1 - hp[10]  # hp[10] == 1
    small = abs(w1) < 0.5
    for j in range(lo, hi):
        pj = p[j]
        if decoupled_wd:
            pj = pj * decay                             # param.mul_(1 - lr * wd)
        gj = -g[j] if maximize else g[j]
        if coupled_wd:
            gj = _fma(wd, pj, gj)
        mj = _lerp(m[j], gj, w1, w1m1, small)           # exp_avg.lerp_(grad, 1 - beta1)
        m[j] = mj
        vj = _fma(one_minus_beta2 * gj, gj, v[j] * beta2)
        v[j] = vj
        if amsgrad:
            vj = _maximum(vmax[j], vj)
            vmax[j] = vj
        denom = np.sqrt(vj) / bc2_sqrt + eps
        p[j] = pj + (neg_step_size * mj) / denom        # addcdiv_(exp_avg, denom, -step_size)


@njit(cache=True, error_model="numpy")
def _adam(p, g, m, v, vmax, lo, hi, hp, neg_step_size, bc2_sqrt):
    if hp[8] != 0:
        _adam_loop(p, g, m, v, vmax, lo, hi, hp, neg_step_size, bc2_sqrt, True)
    else:
        _adam_loop(p, g, m, v, vmax, lo, hi, hp, neg_step_size, bc2_sqrt, False)


@njit(inline="always", error_model="numpy")
def _rmsprop_loop(p, g, sq, gavg, buf, lo, hi, hp, centered, use_momentum):
    alpha, w, eps, wd, momentum, neg_lr = hp[0], hp[1], hp[2], hp[3], hp[4], hp[5]
    use_wd, maximize = hp[6] != 0, hp[9] != 0
    one = hp[10]
    wm1 = w - one
    small = abs(w) < 0.5
    for j in range(lo, hi):
        gj = -g[j] if maximize else g[j]
        if use_wd:
            gj = _fma(wd, p[j], gj)
        s = _fma(w * gj, gj, sq[j] * alpha)             # square_avg.mul_(a).addcmul_(g, g, 1-a)
        sq[j] = s
        if centered:
            a = _lerp(gavg[j], gj, w, wm1, small)
            gavg[j] = a
            avg = np.sqrt(_fma(-one * a, a, s))
        else:
            avg = np.sqrt(s)
        avg = avg + eps
        if use_momentum:
            b = buf[j] * momentum + (one * gj) / avg    # buf.mul_(m).addcdiv_(grad, avg)
            buf[j] = b
            p[j] = _fma(neg_lr, b, p[j])
        else:
            p[j] = p[j] + (neg_lr * gj) / avg


@njit(cache=True, error_model="numpy")
def _rmsprop(p, g, sq, gavg, buf, lo, hi, hp):
    centered, use_momentum = hp[7] != 0, hp[8] != 0
    if centered and use_momentum:
        _rmsprop_loop(p, g, sq, gavg, buf, lo, hi, hp, True, True)
    elif centered:
        _rmsprop_loop(p, g, sq, gavg, buf, lo, hi, hp, True, False)
    elif use_momentum:
        _rmsprop_loop(p, g, sq, gavg, buf, lo, hi, hp, False, True)
    else:
        _rmsprop_loop(p, g, sq, gavg, buf, lo, hi, hp, False, False)


@njit(cache=True, error_model="numpy")
def _adagrad(p, g, s, lo, hi, hp, neg_clr):
    eps, wd, use_wd, maximize = hp[0], hp[1], hp[2] != 0, hp[3] != 0
    for j in range(lo, hi):
        gj = -g[j] if maximize else g[j]
        if use_wd:
            gj = _fma(wd, p[j], gj)
        sj = _fma(gj, gj, s[j])                         # state_sum.addcmul_(g, g, value=1)
        s[j] = sj
        p[j] = p[j] + (neg_clr * gj) / (np.sqrt(sj) + eps)


@njit(cache=True, error_model="numpy")
def _segment(code, p_at, g_at, s1_at, s2_at, s3_at, sizes, hp, pp, i, lo, hi):
    n = sizes[i]
    p = _view(p_at, i, n, hp)
    g = _view(g_at, i, n, hp)
    s1 = _view(s1_at, i, n, hp)
    if code == SGD:
        _sgd(p, g, s1, lo, hi, hp, pp[i, 0] != 0)
    elif code == ADAM:
        _adam(p, g, s1, _view(s2_at, i, n, hp), _view(s3_at, i, n, hp), lo, hi, hp, pp[i, 0],
              pp[i, 1])
    elif code == RMSPROP:
        _rmsprop(p, g, s1, _view(s2_at, i, n, hp), _view(s3_at, i, n, hp), lo, hi, hp)
    else:
        _adagrad(p, g, s1, lo, hi, hp, pp[i, 0])


@njit(cache=True, error_model="numpy", nogil=True)
def step(code, p_at, g_at, s1_at, s2_at, s3_at, sizes, hp, pp):
    """Update parameter i (data at address p_at[i], gradient at g_at[i], state at
    s1_at..s3_at[i], sizes[i] elements) for every i, by optimizer ``code``. A piece of a
    parameter is a parameter too (addresses offset, size shortened): that is how
    ``optimizer._run`` spreads a big group over threads (this releases the GIL; the loops of
    numba's prange are not vectorized, these are)."""
    for i in range(p_at.shape[0]):
        _segment(code, p_at, g_at, s1_at, s2_at, s3_at, sizes, hp, pp, i, 0, sizes[i])


# ---- L-BFGS: flat vectors over the parameters ------------------------------------------------
@njit(cache=True, error_model="numpy")
def gather(p_at, sizes, out):
    """Concatenate the arrays at p_at into ``out`` (address 0: zeros, a missing gradient)."""
    off = 0
    for i in range(p_at.shape[0]):
        n = sizes[i]
        if p_at[i] == 0:
            out[off:off + n] = 0
        else:
            src = _view(p_at, i, n, out)
            for j in range(n):
                out[off + j] = src[j]
        off += n


@njit(cache=True, error_model="numpy")
def scatter(p_at, sizes, src):
    """param.copy_(src[segment]) for every parameter."""
    off = 0
    for i in range(p_at.shape[0]):
        n = sizes[i]
        dst = _view(p_at, i, n, src)
        for j in range(n):
            dst[j] = src[off + j]
        off += n


@njit(cache=True, error_model="numpy")
def add_scaled(p_at, sizes, t, d):
    """param.add_(d[segment], alpha=t) for every parameter; ``t`` is a 1-element array."""
    a = t[0]
    off = 0
    for i in range(p_at.shape[0]):
        n = sizes[i]
        p = _view(p_at, i, n, d)
        for j in range(n):
            p[j] = _fma(a, d[off + j], p[j])
        off += n


@njit(cache=True, error_model="numpy")
def two_loop(flat_grad, y_at, s_at, ro, al, h_diag):
    """L-BFGS's two-loop recursion over the history (y_at[i], s_at[i]: addresses of y and s vectors,
    oldest first); returns the direction and fills al[:len(y_at)] as torch's state['al']."""
    n = flat_grad.shape[0]
    q = -flat_grad
    for i in range(y_at.shape[0] - 1, -1, -1):
        s = _view(s_at, i, n, q)
        y = _view(y_at, i, n, q)
        a = np.dot(s, q) * ro[i]
        al[i] = a
        na = -a
        for j in range(n):
            q[j] = _fma(na, y[j], q[j])                  # q.add_(old_dirs[i], alpha=-al[i])
    r = q * h_diag
    for i in range(y_at.shape[0]):
        s = _view(s_at, i, n, q)
        y = _view(y_at, i, n, q)
        be = np.dot(y, r) * ro[i]
        c = al[i] - be
        for j in range(n):
            r[j] = _fma(c, s[j], r[j])                   # r.add_(old_stps[i], alpha=al-be)
    return r


def warmup():
    """Compile (or load from Numba's cache) every kernel, for float32 and float64."""
    for dt in (np.float32, np.float64):
        a = np.zeros(4, dt)
        at = np.array([a.ctypes.data], np.int64)
        sizes = np.array([4], np.int64)
        step(SGD, at, at, at, at, at, sizes, np.zeros(11, dt), np.zeros((1, 2), dt))
        gather(at, sizes, a)
        scatter(at, sizes, a)
        add_scaled(at, sizes, np.zeros(1, dt), a)
        two_loop(a, at, at, np.zeros(1, dt), np.zeros(1, dt), dt(1))
