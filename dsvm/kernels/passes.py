"""One pass of Pegasos or averaged SGD over one row block: the unit of work of every solver.

Both kernels take the same leading arguments:

X : (n_rows, n_features) C-contiguous float32/float64 array, or a CSR triple
    ``(indptr int64 (n_rows + 1,), indices int32 (nnz,), data float32/float64 (nnz,))``.
    Compiled once per layout and dtype (see :mod:`dsvm.kernels.rows`); may be read-only.
codes : (n_rows,) int32 class indices (one output: 1 -> +1, 0 -> -1; K outputs: one-vs-rest).
sample_weight : (n_rows,) float64, or an empty array for unit weights.
order : (n_steps_rows,) int64 row indices into X, visited in this order (a permutation, a
    subset or with repeats: the kernel does not care). Consecutive runs of ``hp[BATCH]``
    entries form the mini-batches; the last one may be shorter.
W : (K, n_features) float array of X's dtype, the current weights w_t, updated in place.
b : (K,) float array of X's dtype, the current intercepts, updated in place.
hp : float64 (hparams.SIZE,) packed hyper-parameters (see :mod:`dsvm.kernels.hparams`);
    ``hp[T]`` (and ``hp[N_AVG]``) are written back at the end.

Each returns the progressive training loss: the sum over visited rows and outputs of
``sample_weight * loss(p)`` where p is computed at the iterate *before* the step that uses the
row. Neither kernel checks finiteness: the solver does that once per pass.

A step over the mini-batch M (|M| = m rows), for each output k, with g_i = sw_i * dloss(p_i, y_i)
computed for all rows of M at w_t first:

    w_k <- (1 - eta_t lambda) w_k - (eta_t / m) sum_{i in M} g_i x_i
    b_k <- b_k - eta_b,t / m * sum_{i in M} g_i                        (when FIT_INTERCEPT)

with eta_b,t = INTERCEPT_RATE * eta_t for SGD and 1 / (lambda t + 1 / INTERCEPT_ETA_MAX) for
Pegasos (see the kernels).

The shrink and projections multiply a per-output scale (see :mod:`dsvm.kernels.weights`), so a
sparse step costs O(nnz of the batch); rows with g_i == 0 (hinge rows outside the margin) skip
their axpy entirely.
"""

from __future__ import annotations

import math

import numpy as np

from dsvm.kernels import hparams as H
from dsvm.kernels._jit import njit_serial
from dsvm.kernels.losses import loss_deriv, loss_value
from dsvm.kernels.prefetch import PREFETCH_DISTANCE
from dsvm.kernels.rows import (
    prefetch_item,
    prefetch_row,
    row_axpy,
    row_axpy_comp,
    row_axpy_sq,
    row_dot,
)
from dsvm.kernels.weights import (
    ovr_target,
    shrink_scale,
    vec_combine,
    vec_scale,
    vec_sqnorm,
    vec_zero,
)


@njit_serial
def pegasos_pass(X, codes, sample_weight, order, W, b, hp):
    """One Pegasos pass (Shalev-Shwartz et al. 2007; survey Alg. 2) over ``order``.

    Step t (1-based, continuing from ``hp[T]``) uses eta_t = 1 / (lambda t), then projects each
    w_k onto the ball of radius ``hp[RADIUS]``; ||u_k||^2 is tracked incrementally so that the
    projection is O(1). The intercept steps with 1 / (lambda t + 1 / hp[INTERCEPT_ETA_MAX]) and
    is clipped to [-hp[BIAS_BOUND], hp[BIAS_BOUND]]. Returns the summed progressive loss.
    """
    n = order.shape[0]
    K = W.shape[0]
    lam = hp[H.ALPHA]
    t = hp[H.T]
    k_batch = max(1, int(hp[H.BATCH]))
    code = int(hp[H.LOSS])
    fit_b = hp[H.FIT_INTERCEPT] != 0.0
    radius = hp[H.RADIUS]
    bias_bound = hp[H.BIAS_BOUND]
    inv_eta_b_max = 1.0 / hp[H.INTERCEPT_ETA_MAX]
    scale_min = hp[H.SCALE_MIN]
    has_sw = sample_weight.shape[0] > 0

    scale = np.ones(K)
    sq = np.empty(K)  # ||u_k||^2, kept current through every update
    for k in range(K):
        sq[k] = vec_sqnorm(W, k)
    G = np.zeros((min(k_batch, n), K))
    loss_sum = 0.0
    start = 0
    while start < n:
        m = min(k_batch, n - start)
        t += 1.0
        eta = 1.0 / (lam * t)
        # The intercept's step: 1 / (lambda t + 1 / eta_b_max), i.e. eta_t capped near
        # INTERCEPT_ETA_MAX while 1/(lambda t) is larger (eta_t itself when the cap is inf).
        eta_b = 1.0 / (lam * t + inv_eta_b_max)
        # Margins of all rows of the batch at the current iterate first, then the update.
        # (Written out in each kernel: numba's IR inlining of a helper holding this loop made
        # the whole pass twice as slow.)
        for r in range(m):
            ahead = start + r + PREFETCH_DISTANCE
            if ahead < n:
                i_ahead = order[ahead]
                prefetch_row(X, i_ahead)
                prefetch_item(codes, i_ahead)
                if has_sw:
                    prefetch_item(sample_weight, i_ahead)
            i = order[start + r]
            sw = sample_weight[i] if has_sw else 1.0
            c = codes[i]
            for k in range(K):
                y = ovr_target(c, k, K)
                p = scale[k] * row_dot(X, i, W, k) + b[k]
                loss_sum += sw * loss_value(code, p, y)
                G[r, k] = sw * loss_deriv(code, p, y)
        # (1 - eta lambda) = 1 - 1/t: exactly 0 at t = 1 (handled by shrink_scale); the clip
        # only guards against a negative counter handed in by a caller.
        factor = max(0.0, 1.0 - eta * lam)
        for k in range(K):
            s, q = shrink_scale(W, k, scale[k], sq[k], factor, scale_min)
            # w = s u, so adding a x to w adds (a / s) x to u.
            c = -eta / (m * s)
            g_sum = 0.0
            for r in range(m):
                g = G[r, k]
                if g != 0.0:
                    q += row_axpy_sq(X, order[start + r], W, k, c * g)
                    g_sum += g
            # Projection onto {||w|| <= radius}: ||w||^2 = s^2 ||u||^2, one multiply of s.
            norm2 = s * s * q
            if norm2 > radius * radius:
                s *= radius / math.sqrt(norm2)
                if s < scale_min:
                    vec_scale(W, k, s)
                    s = 1.0
                    q = vec_sqnorm(W, k)
            scale[k] = s
            sq[k] = q
            if fit_b and g_sum != 0.0:
                bk = b[k] - eta_b * g_sum / m
                b[k] = min(bias_bound, max(-bias_bound, bk))
        start += m
    for k in range(K):
        vec_scale(W, k, scale[k])
    hp[H.T] = t
    return loss_sum


@njit_serial
def sgd_pass(X, codes, sample_weight, order, W, b, A, ab, hp):
    """One pass of (averaged) SGD (Bottou's svmsgd / svmasgd) over ``order``.

    Step t (0-based count of earlier steps, from ``hp[T]``) uses
    eta_t = eta0 / (1 + lambda eta0 t) ** power. With ``hp[AVERAGE]`` the Polyak-Ruppert
    average abar of the iterates of the steps s > ``hp[AVG_START]`` is kept in ``A`` (K, d)
    float64 and ``ab`` (K,) float64: abar <- abar + mu (w - abar) with mu = 1 / n_avg.

    The average is represented lazily as abar_k = beta_k v_k + gamma_k u_k (v_k = A[k]) so that
    a sparse step stays O(nnz): when u changes by d, v absorbs -(gamma/beta) d (measured on
    the stored values, exact for float32 u), and the averaging step itself only updates the
    scalars beta <- (1 - mu) beta, gamma <- (1 - mu) gamma + mu scale. This is Bottou's
    svmasgd bookkeeping written for an arbitrary start and mini-batches.
    """
    n = order.shape[0]
    K = W.shape[0]
    lam = hp[H.ALPHA]
    t = hp[H.T]
    k_batch = max(1, int(hp[H.BATCH]))
    code = int(hp[H.LOSS])
    fit_b = hp[H.FIT_INTERCEPT] != 0.0
    b_rate = hp[H.INTERCEPT_RATE]
    scale_min = hp[H.SCALE_MIN]
    eta0 = hp[H.ETA0]
    power = hp[H.POWER]
    average = hp[H.AVERAGE] != 0.0
    avg_start = hp[H.AVG_START]
    n_avg = hp[H.N_AVG]
    has_sw = sample_weight.shape[0] > 0

    scale = np.ones(K)
    beta = np.ones(K)
    gamma = np.zeros(K)
    G = np.zeros((min(k_batch, n), K))
    loss_sum = 0.0
    start = 0
    while start < n:
        m = min(k_batch, n - start)
        eta = eta0 / math.pow(1.0 + lam * eta0 * t, power)
        t += 1.0
        # Margins of all rows of the batch at the current iterate first, then the update.
        # (Written out in each kernel: numba's IR inlining of a helper holding this loop made
        # the whole pass twice as slow.)
        for r in range(m):
            ahead = start + r + PREFETCH_DISTANCE
            if ahead < n:
                i_ahead = order[ahead]
                prefetch_row(X, i_ahead)
                prefetch_item(codes, i_ahead)
                if has_sw:
                    prefetch_item(sample_weight, i_ahead)
            i = order[start + r]
            sw = sample_weight[i] if has_sw else 1.0
            c = codes[i]
            for k in range(K):
                y = ovr_target(c, k, K)
                p = scale[k] * row_dot(X, i, W, k) + b[k]
                loss_sum += sw * loss_value(code, p, y)
                G[r, k] = sw * loss_deriv(code, p, y)
        factor = max(0.0, 1.0 - eta * lam)
        do_avg = average and t > avg_start
        mu = 0.0
        if do_avg:
            n_avg += 1.0
            mu = 1.0 / n_avg
        for k in range(K):
            s = scale[k] * factor
            if average and gamma[k] != 0.0 and (s < scale_min or factor <= 0.0):
                # Folding the scale into u (or zeroing u) would change beta v + gamma u:
                # materialise the average in v first, then the fold is free to touch u.
                vec_combine(A, k, beta[k], W, gamma[k])
                beta[k] = 1.0
                gamma[k] = 0.0
            s, _ = shrink_scale(W, k, scale[k], 0.0, factor, scale_min)
            c = -eta / (m * s)
            comp = average and gamma[k] != 0.0
            cv = -gamma[k] / beta[k]
            g_sum = 0.0
            for r in range(m):
                g = G[r, k]
                if g != 0.0:
                    if comp:
                        row_axpy_comp(X, order[start + r], W, k, c * g, A, cv)
                    else:
                        row_axpy(X, order[start + r], W, k, c * g)
                    g_sum += g
            scale[k] = s
            if fit_b and g_sum != 0.0:
                b[k] = b[k] - b_rate * eta * g_sum / m
            if do_avg:
                if mu >= 1.0:
                    # First averaged iterate: abar = w exactly (v is zeroed once, O(d)).
                    vec_zero(A, k)
                    beta[k] = 1.0
                    gamma[k] = s
                    ab[k] = b[k]
                else:
                    beta[k] *= 1.0 - mu
                    gamma[k] = (1.0 - mu) * gamma[k] + mu * s
                    ab[k] += mu * (b[k] - ab[k])
                    if beta[k] < scale_min:
                        vec_scale(A, k, beta[k])
                        beta[k] = 1.0
        start += m
    for k in range(K):
        if average:
            vec_combine(A, k, beta[k], W, gamma[k])
        vec_scale(W, k, scale[k])
    hp[H.T] = t
    hp[H.N_AVG] = n_avg
    return loss_sum
