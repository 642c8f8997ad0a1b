"""NESVM's data pass: dual variables, gradient share and objective shares of one row block.

NESVM (Zhou, Tao & Wu) needs, per iteration, two matrix-vector products with the data: the
margins ``(YX) w`` and the gradient ``(YX)^T u``. Both are sums over rows, so a block's share is
computed here and the shares are added (in a tree) by the caller. Everything is accumulated in
float64 whatever the data's dtype.

For row i with margin ``m = y_i (x_i . w + b)`` and ``a_i = ||x~_i||_inf`` (x~ = [x, 1] when the
model has a bias, the paper's Eq. 37):

* smoothed hinge (Eq. 5, 6, 10): ``u_i = median{(1 - m) / (mu a_i), 0, 1}``;
  ``h_mu = 0`` if m >= 1, ``(1 - m) - mu a_i / 2`` if u_i = 1, ``(1 - m)^2 / (2 mu a_i)`` else;
  the true hinge ``max(0, 1 - m)`` is summed too;
* squared loss (LS-SVM, Eq. 54, 55): ``u_i = 2 (1 - m)``, loss ``(1 - m)^2`` (smooth: both sums
  are the same).

The gradient share of output k is ``-sum_i s_i y_ik u_ik x~_i`` (Eq. 16 with sample weights s_i).
The pass also sums what the Lipschitz bound needs (Eq. 48 and 56, see
:mod:`dsvm.solvers.nesvm`): ``sum_i s_i ||x~_i||_2^2 / a_i`` and ``sum_i s_i ||x~_i||_2^2``,
and, when asked (``colstats`` with columns), the per-feature sums of the diagonal scaling:
``sum_i s_i |x~_ij| ||x~_i||_1 / a_i`` (row 0) and ``sum_i s_i |x~_ij| ||x~_i||_1`` (row 1),
the bias feature in the last column.

Layout: one kernel, :func:`nesvm_pass`, for dense rows and CSR triples (the row walk of
:mod:`dsvm.kernels.rows`, picked at compile time).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dsvm.kernels._jit import njit_inline, njit_serial
from dsvm.kernels.rows import row_count, row_entry, row_span
from dsvm.kernels.weights import ovr_target

# Loss codes of this module (its own table: the pass is not a per-row stochastic step).
NESVM_LOSS_CODES = {"hinge": 0, "squared": 1}

# Columns of ``stats``: weight sum, rows, sum s ||x~||^2 / ||x~||_inf, sum s ||x~||^2.
STAT_WEIGHT, STAT_ROWS, STAT_RATIO, STAT_SQNORM = 0, 1, 2, 3
N_STATS = 4


@njit_inline
def smoothed_hinge_dual(r, a, mu):
    """(u, h_mu) for residual r = 1 - margin and row scale a = ||x~||_inf (Eq. 6 and 10)."""
    if r <= 0.0:
        return 0.0, 0.0
    if a <= 0.0 or r >= mu * a:
        # an all-zero row (a = 0) has margin 0: u = 1, h_mu = r exactly
        return 1.0, r - 0.5 * mu * a
    return r / (mu * a), r * r / (2.0 * mu * a)


class NesvmLoss(NamedTuple):
    """The loss of a pass: ``code`` a NESVM_LOSS_CODES value, ``mu`` the smoothing parameter
    (> 0), ``bias`` 1.0 when the model has a bias (x~ = [x, 1]), else 0.0."""

    code: int
    mu: float
    bias: float


class NesvmShares(NamedTuple):
    """What a pass accumulates (+=), all float64: the gradient share ``G`` (K, n_features) and
    ``gb`` (K,); ``sums`` (n_points * K, 2) [smoothed, true] loss sums; ``stats`` (N_STATS,);
    ``colstats`` (2, n_features + 1), or (2, 0) to skip them."""

    G: np.ndarray
    gb: np.ndarray
    sums: np.ndarray
    stats: np.ndarray
    colstats: np.ndarray


@njit_inline
def _row_update(dots, K, code, sw, a, loss, B, gcoef, sums):
    """Dual variables and objective sums of one row; returns nothing, writes gcoef[k] (the
    row's coefficient in the gradient, -s y u) and adds to sums (n_points * K, 2)."""
    n_points = B.shape[0] // K
    for p in range(n_points):
        for k in range(K):
            y = ovr_target(code, k, K)
            m = y * (dots[p * K + k] + B[p * K + k])
            r = 1.0 - m
            if loss.code == 0:
                u, h = smoothed_hinge_dual(r, a, loss.mu)
                true = max(0.0, r)
            else:
                u = 2.0 * r
                h = r * r
                true = h
            sums[p * K + k, 0] += sw * h
            sums[p * K + k, 1] += sw * true
            if p == 0:
                gcoef[k] = -sw * y * u


@njit_serial
def nesvm_pass(X, codes, sample_weight, P, B, loss, shares):
    """One block's share of NESVM's gradient and objectives.

    X : (n_rows, n_features) float32/float64 C-contiguous, or a CSR triple (indptr int64,
        indices int32, data float32/64): the same code through :mod:`dsvm.kernels.rows`.
    codes : (n_rows,) int32 class codes (see dsvm.solvers.base.encode_labels).
    sample_weight : (n_rows,) float64, or (0,) for unit weights.
    P : (n_points * K, n_features) float64: the points; rows 0..K-1 (the first point) get the
        gradient, every point gets objective sums.
    B : (n_points * K,) float64 intercepts of the points (0 without a bias).
    loss : :class:`NesvmLoss`. shares : :class:`NesvmShares`, accumulated.
    """
    G, gb, sums, stats, colstats = shares
    bias = loss.bias
    n_features = P.shape[1]
    collect = colstats.shape[1] > 0
    PK = P.shape[0]
    K = G.shape[0]
    has_sw = sample_weight.shape[0] > 0
    dots = np.zeros(PK)
    gcoef = np.zeros(K)
    for i in range(row_count(X)):
        sw = sample_weight[i] if has_sw else 1.0
        for q in range(PK):
            dots[q] = 0.0
        a = bias
        sq = bias
        l1 = bias
        lo, hi = row_span(X, i)
        for jj in range(lo, hi):
            j, x = row_entry(X, i, jj)
            ax = abs(x)
            a = max(a, ax)
            sq += x * x
            l1 += ax
            for q in range(PK):
                dots[q] += x * P[q, j]
        _row_update(dots, K, codes[i], sw, a, loss, B, gcoef, sums)
        for k in range(K):
            c = gcoef[k]
            if c != 0.0:
                for jj in range(lo, hi):
                    j, x = row_entry(X, i, jj)
                    G[k, j] += c * x
                gb[k] += c * bias
        if collect and a > 0.0:
            for jj in range(lo, hi):
                j, x = row_entry(X, i, jj)
                ax = abs(x)
                colstats[0, j] += sw * ax * l1 / a
                colstats[1, j] += sw * ax * l1
            colstats[0, n_features] += sw * bias * l1 / a
            colstats[1, n_features] += sw * bias * l1
        stats[STAT_WEIGHT] += sw
        stats[STAT_ROWS] += 1.0
        if a > 0.0:
            stats[STAT_RATIO] += sw * sq / a
        stats[STAT_SQNORM] += sw * sq
