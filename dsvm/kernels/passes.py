"""One pass of Pegasos or averaged SGD over one row block: the unit of work of every solver.

Both kernels take the same leading arguments:

X : (n_rows, n_features) C-contiguous float32/float64 array, or a CSR triple
    ``(indptr int64 (n_rows + 1,), indices int32 (nnz,), data float32/float64 (nnz,))``.
    Compiled once per layout and dtype (see :mod:`dsvm.kernels.rows`); may be read-only.
codes : (n_rows,) int32 class indices (one output: 1 -> +1, 0 -> -1; K outputs: one-vs-rest),
    or (n_rows,) float64 real targets for the regression losses (see ``ovr_target``).
sample_weight : (n_rows,) float64, or an empty array for unit weights.
order : (n_steps_rows,) int64 row indices into X, visited in this order (a permutation, a
    subset or with repeats: the kernel does not care). Consecutive runs of ``hp[BATCH]``
    entries form the mini-batches; the last one may be shorter.
W : (K, n_features) float array of X's dtype, the current weights w_t, updated in place.
b : (K,) float array of X's dtype, the current intercepts, updated in place.
A : (K, n_features) float64, the running average of the iterates, updated in place when
    ``hp[AVERAGE]`` is set (any (K, 0) array otherwise).
ab : (K,) float64, the running average of the intercepts (likewise).
hp : float64 (hparams.SIZE,) packed hyper-parameters (see :mod:`dsvm.kernels.hparams`);
    ``hp[T]`` (and ``hp[N_AVG]``) are written back at the end.
P : float64 scratch where a CSR pass with an average keeps each w_j beside its average's
    entry (:mod:`dsvm.kernels.pairs`): ``pairs.pair_scratch(X, W, A, average)``, (K,
    n_features, 2); contents ignored. Any other shape makes the kernel allocate its own.

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
their axpy entirely. With an average, a CSR pass works on w and the average's sum interleaved
in ``P`` (:mod:`dsvm.kernels.pairs`), so that a stored entry costs one cache line, not two:
400,000 x 2^22 x 40 nnz float32, averaged SGD 0.38-0.41 -> 0.26 s a pass, averaged Pegasos
0.35-0.49 -> 0.27-0.28 s (the plain passes: 0.13-0.17 s), bit for bit the same results.
"""

from __future__ import annotations

import math

import numpy as np

from dsvm.kernels import hparams as H
from dsvm.kernels._jit import njit_serial
from dsvm.kernels.averages import (
    avg_add,
    avg_begin,
    avg_end,
    avg_flush,
    avg_flush_needed,
    avg_weight,
)
from dsvm.kernels.losses import loss_deriv_p, loss_value_p
from dsvm.kernels.pairs import jumps_at, paired_runner, run_shape
from dsvm.kernels.prefetch import PREFETCH_DISTANCE, WEIGHTS_AHEAD
from dsvm.kernels.rows import (
    prefetch_item,
    prefetch_row,
    prefetch_weights,
    row_axpy,
    row_axpy_comp,
    row_axpy_sq,
    row_axpy_sq_comp,
    row_dot,
)
from dsvm.kernels.support import (
    SUPPORT_FRACTION,
    mark_row,
    sup_flush,
    sup_scale,
    sup_sqnorm,
    sup_zero,
    track_support,
)
from dsvm.kernels.weights import ovr_target, power_of, shrink_scale, vec_scale, vec_sqnorm


@njit_serial
def pegasos_pass(X, codes, sample_weight, order, W, b, A, ab, hp, P):
    """One Pegasos pass (Shalev-Shwartz et al. 2007; survey Alg. 2) over ``order``.

    Step t (1-based, continuing from ``hp[T]``) uses eta_t = 1 / (lambda t), then projects each
    w_k onto the ball of radius ``hp[RADIUS]``; ||u_k||^2 is tracked incrementally so that the
    projection is O(1). The intercept steps with 1 / (lambda t + 1 / hp[INTERCEPT_ETA_MAX]) and
    is clipped to [-hp[BIAS_BOUND], hp[BIAS_BOUND]]. Returns the summed progressive loss.

    With ``hp[AVERAGE]`` the weighted average of the iterates (w and b after step t,
    projection and clip included) is kept in ``A`` (K, d) float64 and ``ab`` (K,) float64:
    the iterate of step t weighs a_t = (t - hp[AVG_START]) ** hp[AVG_POWER] (0 for
    t <= AVG_START) and ``hp[N_AVG]`` accumulates the a_t. Power 1 from start 0 is the
    t-weighted average (abar_t = (1 - mu) abar_{t-1} + mu w_t with mu = 2 / (t + 1)).
    It is kept lazily (see :mod:`dsvm.kernels.averages`), so a sparse step stays O(nnz);
    without ``hp[AVERAGE]``, ``A`` may have 0 columns and is not touched.
    """
    return _pegasos_run(X, codes, sample_weight, order, W, b, A, ab, hp, P)


@njit_serial
def _pegasos_steps(X, codes, sample_weight, order, W, b, A, ab, hp, avg_lines, unit):
    """:func:`pegasos_pass` on W and A as given (``avg_lines``: A's entries have cache
    lines of their own, see :mod:`dsvm.kernels.pairs`; ``unit``: see :func:`run_shape`)."""
    n = order.shape[0]
    K, k_batch = run_shape(W, hp, unit)
    lam = hp[H.ALPHA]
    t = hp[H.T]
    code = int(hp[H.LOSS])
    loss_a = hp[H.LOSS_PARAM]
    fit_b = hp[H.FIT_INTERCEPT] != 0.0
    radius = hp[H.RADIUS]
    bias_bound = hp[H.BIAS_BOUND]
    inv_eta_b_max = 1.0 / hp[H.INTERCEPT_ETA_MAX]
    scale_min = hp[H.SCALE_MIN]
    average = hp[H.AVERAGE] != 0.0
    avg_start = hp[H.AVG_START]
    avg_power = hp[H.AVG_POWER]
    n_avg = hp[H.N_AVG]
    has_sw = sample_weight.shape[0] > 0
    sparse = track_support(X)

    scale = np.ones(K)
    sq = np.empty(K)  # ||u_k||^2, kept current through every update
    for k in range(K):
        sq[k] = vec_sqnorm(W, k)
    csum = np.zeros(K)  # the average's lazy sum is A[k] + csum_k W[k] (kernels.averages)
    # The support of W[k] while young (kernels.support): tracked over CSR rows from an all-zero
    # W[k] (a fit's first pass); -1 = not tracked
    sup_n = np.full(K, -1, np.int64)
    young = False
    if track_support(X) and n > 0:
        for k in range(K):
            young = young or sq[k] == 0.0
    n_mark = W.shape[1] if young else 0
    mark = np.zeros((K, n_mark), np.uint8)
    sup_idx = np.empty((K, n_mark // SUPPORT_FRACTION), np.int32)
    for k in range(K):
        if young and sq[k] == 0.0:
            sup_n[k] = 0
    if average:
        for k in range(K):
            avg_begin(A, ab, k, n_avg)
    G = np.zeros((min(k_batch, n), K))
    loss_sum = 0.0
    start = 0
    while start < n:
        m = min(k_batch, n - start)
        t += 1.0
        eta = 1.0 / (lam * t)
        # Margins of all rows of the batch at the current iterate first, then the update.
        # (Written out in each kernel: numba's IR inlining of a helper holding this loop made
        # the whole pass twice as slow.)
        for r in range(m):
            ahead = start + r + PREFETCH_DISTANCE
            if ahead < n and (sparse or jumps_at(order, ahead + WEIGHTS_AHEAD)):
                i_ahead = order[ahead]
                if ahead + WEIGHTS_AHEAD < n:
                    prefetch_row(X, order[ahead + WEIGHTS_AHEAD])
                for k in range(K):
                    prefetch_weights(X, i_ahead, W, k)
                    if average and avg_lines:
                        prefetch_weights(X, i_ahead, A, k)
                prefetch_item(codes, i_ahead)
                if has_sw:
                    prefetch_item(sample_weight, i_ahead)
            i = order[start + r]
            sw = sample_weight[i] if has_sw else 1.0
            c = codes[i]
            for k in range(K):
                y = ovr_target(c, k, K)
                p = scale[k] * row_dot(X, i, W, k) + b[k]
                loss_sum += sw * loss_value_p(code, p, y, loss_a)
                G[r, k] = sw * loss_deriv_p(code, p, y, loss_a)
        # (1 - eta lambda) = 1 - 1/t: exactly 0 at t = 1 (handled by shrink_scale); the clip
        # only guards against a negative counter handed in by a caller.
        factor = max(0.0, 1.0 - eta * lam)
        a_t = 0.0
        if average:
            a_t = avg_weight(t, avg_start, avg_power)
            n_avg += a_t
        for k in range(K):
            if avg_flush_needed(csum[k], scale[k], factor, scale_min, n_avg):
                sup_flush(A, k, csum, W, sup_idx, sup_n[k])  # before u is folded or dwarfed
            # shrink_scale (kernels.weights), with the sweeps over the support while tracked
            s, q = scale[k] * factor, sq[k]
            if factor <= 0.0:
                sup_zero(W, k, sup_idx, sup_n[k])
                s, q = 1.0, 0.0
            elif s < scale_min:
                sup_scale(W, k, s, sup_idx, sup_n[k])
                s, q = 1.0, sup_sqnorm(W, k, sup_idx, sup_n[k])
            # w = s u, so adding a x to w adds (a / s) x to u.
            cu = -eta / (m * s)
            comp = csum[k] != 0.0  # u is part of the average's sum: A absorbs its changes
            cv = -csum[k]
            g_sum = 0.0
            for r in range(m):
                g = G[r, k]
                if g != 0.0:
                    i = order[start + r]
                    if comp:
                        q += row_axpy_sq_comp(X, i, W, k, cu * g, A, cv)
                    else:
                        q += row_axpy_sq(X, i, W, k, cu * g)
                    if sup_n[k] >= 0:
                        sup_n[k] = mark_row(X, i, mark, sup_idx, k, sup_n[k])
                    g_sum += g
            # Projection onto {||w|| <= radius}: ||w||^2 = s^2 ||u||^2, one multiply of s.
            norm2 = s * s * q
            if norm2 > radius * radius:
                s *= radius / math.sqrt(norm2)
                if s < scale_min:
                    sup_flush(A, k, csum, W, sup_idx, sup_n[k])
                    sup_scale(W, k, s, sup_idx, sup_n[k])
                    s = 1.0
                    q = sup_sqnorm(W, k, sup_idx, sup_n[k])
            scale[k] = s
            sq[k] = q
            if fit_b and g_sum != 0.0:
                # The intercept's step: 1 / (lambda t + 1 / eta_b_max), i.e. eta_t capped near
                # INTERCEPT_ETA_MAX while 1/(lambda t) is larger (eta_t itself when the cap
                # is inf).
                eta_b = 1.0 / (lam * t + inv_eta_b_max)
                bk = b[k] - eta_b * g_sum / m
                b[k] = min(bias_bound, max(-bias_bound, bk))
            if a_t > 0.0:
                csum[k], ab[k], flush = avg_add(csum[k], ab[k], a_t, s, b[k], n_avg)
                if flush:
                    sup_flush(A, k, csum, W, sup_idx, sup_n[k])
        start += m
    for k in range(K):
        if average:
            avg_end(A, ab, k, csum, W, n_avg)
        if scale[k] != 1.0:
            sup_scale(W, k, scale[k], sup_idx, sup_n[k])
    hp[H.T] = t
    hp[H.N_AVG] = n_avg
    return loss_sum


@njit_serial
def sgd_pass(X, codes, sample_weight, order, W, b, A, ab, hp, P):
    """One pass of (averaged) SGD (Bottou's svmsgd / svmasgd) over ``order``.

    Step t (0-based count of earlier steps, from ``hp[T]``) uses
    eta_t = eta0 / (1 + lambda eta0 t) ** power. With ``hp[AVERAGE]`` the Polyak-Ruppert
    average abar of the iterates of the steps s > ``hp[AVG_START]`` is kept in ``A`` (K, d)
    float64 and ``ab`` (K,) float64, each iterate weighing a_s = (s - AVG_START) **
    hp[AVG_POWER] (power 0, the default: uniform, abar <- abar + (w - abar) / n_avg).

    The average is kept lazily so that a sparse step stays O(nnz): Bottou's svmasgd
    bookkeeping, written for an arbitrary start, weights and mini-batches, and shared with
    :func:`pegasos_pass` (see :mod:`dsvm.kernels.averages`).
    """
    return _sgd_run(X, codes, sample_weight, order, W, b, A, ab, hp, P)


@njit_serial
def _sgd_steps(X, codes, sample_weight, order, W, b, A, ab, hp, avg_lines, unit):
    """:func:`sgd_pass` on W and A as given (``avg_lines``: A's entries have cache
    lines of their own, see :mod:`dsvm.kernels.pairs`; ``unit``: see :func:`run_shape`)."""
    n = order.shape[0]
    K, k_batch = run_shape(W, hp, unit)
    lam = hp[H.ALPHA]
    t = hp[H.T]
    code = int(hp[H.LOSS])
    loss_a = hp[H.LOSS_PARAM]
    fit_b = hp[H.FIT_INTERCEPT] != 0.0
    b_rate = hp[H.INTERCEPT_RATE]
    scale_min = hp[H.SCALE_MIN]
    eta0 = hp[H.ETA0]
    power = hp[H.POWER]
    average = hp[H.AVERAGE] != 0.0
    avg_start = hp[H.AVG_START]
    avg_power = hp[H.AVG_POWER]
    n_avg = hp[H.N_AVG]
    has_sw = sample_weight.shape[0] > 0
    sparse = track_support(X)

    scale = np.ones(K)
    csum = np.zeros(K)  # the average's lazy sum is A[k] + csum_k W[k] (kernels.averages)
    if average:
        for k in range(K):
            avg_begin(A, ab, k, n_avg)
    G = np.zeros((min(k_batch, n), K))
    loss_sum = 0.0
    start = 0
    while start < n:
        m = min(k_batch, n - start)
        eta = eta0 / power_of(1.0 + lam * eta0 * t, power)
        t += 1.0
        # Margins of all rows of the batch at the current iterate first, then the update.
        # (Written out in each kernel: numba's IR inlining of a helper holding this loop made
        # the whole pass twice as slow.)
        for r in range(m):
            ahead = start + r + PREFETCH_DISTANCE
            if ahead < n and (sparse or jumps_at(order, ahead + WEIGHTS_AHEAD)):
                i_ahead = order[ahead]
                if ahead + WEIGHTS_AHEAD < n:
                    prefetch_row(X, order[ahead + WEIGHTS_AHEAD])
                for k in range(K):
                    prefetch_weights(X, i_ahead, W, k)
                    if average and avg_lines:
                        prefetch_weights(X, i_ahead, A, k)
                prefetch_item(codes, i_ahead)
                if has_sw:
                    prefetch_item(sample_weight, i_ahead)
            i = order[start + r]
            sw = sample_weight[i] if has_sw else 1.0
            c = codes[i]
            for k in range(K):
                y = ovr_target(c, k, K)
                p = scale[k] * row_dot(X, i, W, k) + b[k]
                loss_sum += sw * loss_value_p(code, p, y, loss_a)
                G[r, k] = sw * loss_deriv_p(code, p, y, loss_a)
        factor = max(0.0, 1.0 - eta * lam)
        a_t = 0.0
        if average:
            a_t = avg_weight(t, avg_start, avg_power)
            n_avg += a_t
        for k in range(K):
            if avg_flush_needed(csum[k], scale[k], factor, scale_min, n_avg):
                avg_flush(A, k, csum, W)  # before u is folded, zeroed or dwarfed
            s, _ = shrink_scale(W, k, scale[k], 0.0, factor, scale_min)
            cu = -eta / (m * s)
            comp = csum[k] != 0.0  # u is part of the average's sum: A absorbs its changes
            cv = -csum[k]
            g_sum = 0.0
            for r in range(m):
                g = G[r, k]
                if g != 0.0:
                    if comp:
                        row_axpy_comp(X, order[start + r], W, k, cu * g, A, cv)
                    else:
                        row_axpy(X, order[start + r], W, k, cu * g)
                    g_sum += g
            scale[k] = s
            if fit_b and g_sum != 0.0:
                b[k] = b[k] - b_rate * eta * g_sum / m
            if a_t > 0.0:
                csum[k], ab[k], flush = avg_add(csum[k], ab[k], a_t, s, b[k], n_avg)
                if flush:
                    avg_flush(A, k, csum, W)
        start += m
    for k in range(K):
        if average:
            avg_end(A, ab, k, csum, W, n_avg)
        vec_scale(W, k, scale[k])
    hp[H.T] = t
    hp[H.N_AVG] = n_avg
    return loss_sum


_pegasos_run = paired_runner(_pegasos_steps)
_sgd_run = paired_runner(_sgd_steps)
