"""CTC loss kernels: the alpha (forward) and beta (backward) recursions in log space over
the blank-extended target l' (blank, l1, blank, l2, ..., blank), as torch's
aten/src/ATen/native/LossCTC.cpp computes them on the CPU, in float64.

A skip over a blank (s - 2 to s) is allowed wherever l'_s differs from l'_{s-2}, as in
torch: a target label equal to the blank is not refused. Targets arrive flat (int64) with
each sample's offset and length, so padded (N, S) and concatenated 1-d targets share one
kernel."""

import math

import numpy as np
from numba import njit

NEG_INF = -np.inf


@njit(cache=True)
def _lse2(a, b):
    m = max(a, b)
    if m == NEG_INF:
        m = 0.0
    return math.log(math.exp(a - m) + math.exp(b - m)) + m


@njit(cache=True)
def _lse3(a, b, c):
    m = max(a, max(b, c))
    if m == NEG_INF:
        m = 0.0
    return math.log(math.exp(a - m) + math.exp(b - m) + math.exp(c - m)) + m


@njit(cache=True)
def _label(targets, offset, s, blank):
    """l'_s: blank at even positions, the target's (s // 2)-th label at odd ones."""
    if s % 2 == 0:
        return blank
    return targets[offset + s // 2]


@njit(cache=True)
def ctc_alpha(log_probs, targets, offsets, target_lengths, input_lengths, blank):
    """Per sample: the negative log likelihood, and log_alpha (N, T, 2 * max_L + 1)."""
    max_t, batch, _ = log_probs.shape
    width = 2 * (target_lengths.max() if batch else 0) + 1
    log_alpha = np.full((batch, max_t, width), NEG_INF)
    nll = np.empty(batch)
    for b in range(batch):
        n_in, n_tg, off = input_lengths[b], target_lengths[b], offsets[b]
        n_ext = 2 * n_tg + 1
        if n_in == 0:
            nll[b] = 0.0 if n_tg == 0 else np.inf
            continue
        log_alpha[b, 0, 0] = log_probs[0, b, blank]
        if n_tg > 0:
            log_alpha[b, 0, 1] = log_probs[0, b, targets[off]]
        for t in range(1, n_in):
            for s in range(n_ext):
                c = _label(targets, off, s, blank)
                la1 = log_alpha[b, t - 1, s]
                la2 = log_alpha[b, t - 1, s - 1] if s > 0 else NEG_INF
                la3 = NEG_INF
                if s > 1 and _label(targets, off, s - 2, blank) != c:
                    la3 = log_alpha[b, t - 1, s - 2]
                log_alpha[b, t, s] = _lse3(la1, la2, la3) + log_probs[t, b, c]
        last = log_alpha[b, n_in - 1, n_ext - 1]
        if n_tg > 0:
            last = _lse2(last, log_alpha[b, n_in - 1, n_ext - 2])
        nll[b] = -last
    return nll, log_alpha


@njit(cache=True)
def ctc_grad(log_probs, targets, offsets, target_lengths, input_lengths, blank, nll, log_alpha,
             grad_out, zero_infinity):
    """d loss_b / d log_probs[t, b, c] times grad_out[b], by torch's formula:
    exp(lp) - exp(log(sum over s with l'_s = c of alpha * beta) + nll - lp)."""
    max_t, batch, n_class = log_probs.shape
    grad = np.zeros(log_probs.shape)
    width = log_alpha.shape[2]
    log_beta = np.empty((max_t, width))
    lcab = np.empty(n_class)
    for b in range(batch):
        n_in, n_tg, off = input_lengths[b], target_lengths[b], offsets[b]
        n_ext = 2 * n_tg + 1
        if n_in == 0 or (zero_infinity and nll[b] == np.inf):
            continue
        log_beta[:, :] = NEG_INF
        log_beta[n_in - 1, n_ext - 1] = log_probs[n_in - 1, b, blank]
        if n_tg > 0:
            log_beta[n_in - 1, n_ext - 2] = log_probs[n_in - 1, b, targets[off + n_tg - 1]]
        for t in range(n_in - 2, -1, -1):
            for s in range(n_ext - 1, -1, -1):
                c = _label(targets, off, s, blank)
                lb1 = log_beta[t + 1, s]
                lb2 = log_beta[t + 1, s + 1] if s < n_ext - 1 else NEG_INF
                lb3 = NEG_INF
                if s < n_ext - 2 and _label(targets, off, s + 2, blank) != c:
                    lb3 = log_beta[t + 1, s + 2]
                log_beta[t, s] = _lse3(lb1, lb2, lb3) + log_probs[t, b, c]
        gr = grad_out[b]
        for t in range(n_in):
            lcab[:] = NEG_INF
            if t == n_in - 1:
                # torch assigns the last frame's two terms, the label's after the blank's:
                # a last label equal to the blank replaces the blank's term, as there
                last = n_ext - 1
                lcab[blank] = log_alpha[b, t, last] + log_beta[t, last]
                if n_tg > 0:
                    c = targets[off + n_tg - 1]
                    lcab[c] = log_alpha[b, t, last - 1] + log_beta[t, last - 1]
            else:
                for s in range(n_ext):
                    c = _label(targets, off, s, blank)
                    lcab[c] = _lse2(lcab[c], log_alpha[b, t, s] + log_beta[t, s])
            for c in range(n_class):
                lp = log_probs[t, b, c]
                grad[t, b, c] = (math.exp(lp) - math.exp(lcab[c] + nll[b] - lp)) * gr
    return grad
