"""One ASSET / ASSET* pass over one row block (Lee & Wright, papers/000, Algorithm 1).

Arguments as the other pass kernels (:mod:`dsvm.kernels.passes`): ``X`` dense or a CSR triple,
``codes`` int32 class codes or float64 regression targets, ``sample_weight`` (or empty),
``order``, ``W`` (K, d) and ``b`` (K,) updated in place, ``A``/``ab`` the running average
(float64; (K, 0) when not averaging), ``hp`` the packed hyper-parameters, of which it reads
ALPHA, T, BATCH, LOSS, LOSS_PARAM, FIT_INTERCEPT, RADIUS, BIAS_BOUND, SCALE_MIN, ETA0, POWER,
AVERAGE, AVG_START and N_AVG, and writes back T and N_AVG.

Step j (1-based, continuing from ``hp[T]``) over a mini-batch M of m rows (m = 1 in the paper):

    eta_j = ETA0 / j ** POWER        ASSET: ETA0 = D_X / D_G, POWER = 1/2
                                     ASSET*: ETA0 = 1 / lambda, POWER = 1 (eta_j = 1/(lambda j))
    G_w   = lambda w + (1/m) sum_i g_i x_i,   G_b = (1/m) sum_i g_i     (Table 1, with
            g_i = s_i dloss(p_i, y_i) = -d_i for the hinge and epsilon-insensitive losses)
    (w, b) <- Pi_X((w, b) - eta_j (G_w, G_b)),  X = {||w|| <= RADIUS} x {|b| <= BIAS_BOUND}

(the projection onto a product of a ball and an interval is the two projections). With
``hp[AVERAGE]`` the iterates of the steps j > ``hp[AVG_START]`` (= N-bar) are averaged with
weights eta_j (step 9 of Algorithm 1: x~ <- (eta~ x~ + eta_j x_j) / (eta~ + eta_j)), kept
lazily in O(nnz) per sparse row as in :mod:`dsvm.kernels.averages`; ``hp[N_AVG]`` is eta~.

One difference from the paper: the regulariser's part of the step multiplies w by
1 - eta_j lambda, which the paper lets go negative when eta_j > 1/lambda (a huge first
step with a tiny D_G); we clip the factor at 0, which is the minimiser of the quadratic along
that direction instead of overshooting it. On a9a (lambda = 3e-5, eta_1 ~ 50) it never binds.
"""

from __future__ import annotations

import math

import numpy as np

from dsvm.kernels import hparams as H
from dsvm.kernels._jit import njit_serial
from dsvm.kernels.averages import avg_add, avg_begin, avg_end, avg_flush, avg_flush_needed
from dsvm.kernels.losses import loss_deriv_p, loss_value_p
from dsvm.kernels.rows import row_axpy_sq, row_axpy_sq_comp, row_dot
from dsvm.kernels.weights import ovr_target, shrink_scale, vec_scale, vec_sqnorm


@njit_serial
def asset_pass(X, codes, sample_weight, order, W, b, A, ab, hp):
    """One ASSET (or ASSET*) pass over ``order``; returns the summed progressive loss."""
    n = order.shape[0]
    K = W.shape[0]
    lam = hp[H.ALPHA]
    t = hp[H.T]
    k_batch = max(1, int(hp[H.BATCH]))
    code = int(hp[H.LOSS])
    loss_a = hp[H.LOSS_PARAM]
    fit_b = hp[H.FIT_INTERCEPT] != 0.0
    radius = hp[H.RADIUS]
    bias_bound = hp[H.BIAS_BOUND]
    scale_min = hp[H.SCALE_MIN]
    eta0 = hp[H.ETA0]
    power = hp[H.POWER]
    average = hp[H.AVERAGE] != 0.0
    avg_start = hp[H.AVG_START]
    n_avg = hp[H.N_AVG]
    has_sw = sample_weight.shape[0] > 0

    scale = np.ones(K)
    sq = np.empty(K)  # ||u_k||^2, kept current through every update
    for k in range(K):
        sq[k] = vec_sqnorm(W, k)
    csum = np.zeros(K)  # the average's lazy sum is A[k] + csum_k W[k] (kernels.averages)
    if average:
        for k in range(K):
            avg_begin(A, ab, k, n_avg)
    G = np.zeros((min(k_batch, n), K))
    loss_sum = 0.0
    start = 0
    while start < n:
        m = min(k_batch, n - start)
        t += 1.0
        eta = eta0 / math.pow(t, power)
        for r in range(m):
            i = order[start + r]
            sw = sample_weight[i] if has_sw else 1.0
            c = codes[i]
            for k in range(K):
                y = ovr_target(c, k, K)
                p = scale[k] * row_dot(X, i, W, k) + b[k]
                loss_sum += sw * loss_value_p(code, p, y, loss_a)
                G[r, k] = sw * loss_deriv_p(code, p, y, loss_a)
        factor = max(0.0, 1.0 - eta * lam)
        a_t = eta if (average and t > avg_start) else 0.0
        n_avg += a_t
        for k in range(K):
            if avg_flush_needed(csum[k], scale[k], factor, scale_min, n_avg):
                avg_flush(A, k, csum, W)
            s, q = shrink_scale(W, k, scale[k], sq[k], factor, scale_min)
            cu = -eta / (m * s)  # w = s u: adding a x to w adds (a / s) x to u
            comp = csum[k] != 0.0
            cv = -csum[k]
            g_sum = 0.0
            for r in range(m):
                g = G[r, k]
                if g != 0.0:
                    if comp:
                        q += row_axpy_sq_comp(X, order[start + r], W, k, cu * g, A, cv)
                    else:
                        q += row_axpy_sq(X, order[start + r], W, k, cu * g)
                    g_sum += g
            norm2 = s * s * q
            if norm2 > radius * radius:
                s *= radius / math.sqrt(norm2)
                if s < scale_min:
                    avg_flush(A, k, csum, W)
                    vec_scale(W, k, s)
                    s = 1.0
                    q = vec_sqnorm(W, k)
            scale[k] = s
            sq[k] = q
            if fit_b and g_sum != 0.0:
                bk = b[k] - eta * g_sum / m
                b[k] = min(bias_bound, max(-bias_bound, bk))
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
