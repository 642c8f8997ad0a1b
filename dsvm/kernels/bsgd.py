"""Budgeted kernel SGD (papers/001): Pegasos steps on a Gaussian-kernel expansion, and merging.

Model of output k: support vectors ``SV[k, :nsv[k]]`` (rows, float64) with coefficients
``A[k, :nsv[k]]``; f_k(x) = sum_j A[k, j] exp(-gamma ||SV[k, j] - x||^2). There is no bias: the
paper's BSGD (and Wang et al.'s) trains f without one.

One SGD step on row x with target y (papers/001 §2, Pegasos with eta_t = 1/(lambda t)):
every coefficient is scaled by 1 - eta_t lambda = 1 - 1/t, and if y f(x) < 1 the point joins the
model with coefficient eta_t y. When a model then holds B + 1 vectors, its budget is restored by
one merge (Algorithm 1). The pass kernel stops and returns at that moment so that the caller can
run (and time) :func:`merge_once`, then resumes where it stopped: the merge time of the paper's
Tables 2-3 is measured outside the kernel, with no timer inside the jitted code.

Merging (Algorithm 1). i = argmin_j |A_j|; for every partner j of the same sign, with
m = A_i / (A_i + A_j) and kappa = k(x_i, x_j), the merged point is z = h x_i + (1 - h) x_j with h
maximising s(h) = m kappa^((1-h)^2) + (1-m) kappa^(h^2), its coefficient A_z = (A_i + A_j) s(h),
and the weight degradation WD = (A_i + A_j)^2 (m^2 + (1-m)^2 - s(h)^2 + 2 m (1-m) kappa).
(The printed line 6 of Algorithm 1 has m = A_j / (A_j + A_i), which pairs with z = h x_j + ...;
we use §3's definition, m being the weight of the point that h multiplies.) The partner with the
least WD wins. h comes from golden section search (``MERGE_GSS``: precision 0.01, the paper's
standard; ``MERGE_GSS_PRECISE``: 1e-10) or from a G x G table of h(m, kappa)
(``MERGE_LOOKUP_H``) or of WD(m, kappa)/(A_i + A_j)^2 (``MERGE_LOOKUP_WD``, h then looked up for
the winner only), read by bilinear interpolation. Partners of opposite sign are never merged;
when x_i has none, it is removed (the merge with h = 0 and A_i = 0).
"""

from __future__ import annotations

import math

import numpy as np

from dsvm.kernels._jit import njit_inline, njit_serial
from dsvm.kernels.rows import row_densify

MERGE_GSS = 0
MERGE_GSS_PRECISE = 1
MERGE_LOOKUP_H = 2
MERGE_LOOKUP_WD = 3
MERGE_CODES = {"gss": MERGE_GSS, "gss-precise": MERGE_GSS_PRECISE,
               "lookup-h": MERGE_LOOKUP_H, "lookup-wd": MERGE_LOOKUP_WD}
GSS_EPS = 0.01
GSS_PRECISE_EPS = 1e-10
_INV_PHI = 0.6180339887498949  # (sqrt(5) - 1) / 2
_LOG_KAPPA_MIN = -700.0  # log of the smallest kappa used: keeps 0 * log(0) out of s(h)

# merge statistics, one row per output: what the benchmark's Tables 2-3 columns need
STAT_MERGES = 0
STAT_COMPARED = 1
STAT_EQUAL = 2
N_STATS = 3


# -- the merge sub-problem -----------------------------------------------------------------------
@njit_inline
def merge_objective(h, m, log_kappa):
    """s(h) = m kappa^((1-h)^2) + (1-m) kappa^(h^2)."""
    return m * math.exp((1.0 - h) * (1.0 - h) * log_kappa) + (1.0 - m) * math.exp(h * h * log_kappa)


@njit_serial
def golden_section_h(m, log_kappa, lo, hi, eps):
    """argmax of s on [lo, hi] by golden section search, to an interval shorter than ``eps``."""
    a = hi - _INV_PHI * (hi - lo)
    b = lo + _INV_PHI * (hi - lo)
    fa = merge_objective(a, m, log_kappa)
    fb = merge_objective(b, m, log_kappa)
    while hi - lo > eps:
        if fa < fb:
            lo = a
            a = b
            fa = fb
            b = lo + _INV_PHI * (hi - lo)
            fb = merge_objective(b, m, log_kappa)
        else:
            hi = b
            b = a
            fb = fa
            a = hi - _INV_PHI * (hi - lo)
            fa = merge_objective(a, m, log_kappa)
    return 0.5 * (lo + hi)


@njit_inline
def unit_degradation(m, kappa, s):
    """WD / (A_i + A_j)^2 for the merge value s = s(h)."""
    return m * m + (1.0 - m) * (1.0 - m) - s * s + 2.0 * m * (1.0 - m) * kappa


@njit_serial
def build_merge_tables(n_grid, eps, H, WD):
    """h(m, kappa) and WD(m, kappa)/(A_i+A_j)^2 on the grid m, kappa = i/(n_grid-1).

    s has two modes for kappa < e^-2 (papers/001, Lemma 1), so each half [0, 1/2], [1/2, 1] is
    searched separately and the better maximum kept: the table holds the global optimum.
    """
    for a in range(n_grid):
        m = a / (n_grid - 1.0)
        for c in range(n_grid):
            kappa = c / (n_grid - 1.0)
            log_kappa = max(math.log(kappa), _LOG_KAPPA_MIN) if kappa > 0.0 else _LOG_KAPPA_MIN
            h1 = golden_section_h(m, log_kappa, 0.0, 0.5, eps)
            h2 = golden_section_h(m, log_kappa, 0.5, 1.0, eps)
            s1 = merge_objective(h1, m, log_kappa)
            s2 = merge_objective(h2, m, log_kappa)
            h, s = (h1, s1) if s1 >= s2 else (h2, s2)
            H[a, c] = h
            WD[a, c] = unit_degradation(m, kappa, s)


@njit_inline
def bilinear(T, m, kappa):
    """T read at (m, kappa) in [0, 1]^2 by bilinear interpolation between grid points."""
    g = T.shape[0] - 1
    u = min(max(m, 0.0), 1.0) * g
    v = min(max(kappa, 0.0), 1.0) * g
    i = min(int(u), g - 1)
    j = min(int(v), g - 1)
    fu = u - i
    fv = v - j
    return ((1.0 - fu) * ((1.0 - fv) * T[i, j] + fv * T[i, j + 1])
            + fu * ((1.0 - fv) * T[i + 1, j] + fv * T[i + 1, j + 1]))


@njit_inline
def sq_dist(SV, a, b):
    acc = 0.0
    for k in range(SV.shape[1]):
        diff = SV[a, k] - SV[b, k]
        acc += diff * diff
    return acc


@njit_serial
def _candidate(code, m, kappa, log_kappa, H, WD):
    """(unit weight degradation, h) of one partner under merge method ``code``.

    For lookup-WD, h is not needed to rank partners and is returned as NaN.
    """
    if code == MERGE_LOOKUP_WD:
        return bilinear(WD, m, kappa), np.nan
    if code == MERGE_LOOKUP_H:
        h = bilinear(H, m, kappa)
    elif code == MERGE_GSS_PRECISE:
        h = golden_section_h(m, log_kappa, 0.0, 1.0, GSS_PRECISE_EPS)
    else:
        h = golden_section_h(m, log_kappa, 0.0, 1.0, GSS_EPS)
    return unit_degradation(m, kappa, merge_objective(h, m, log_kappa)), h


@njit_serial
def merge_once(SV, A, n, gamma, code, compare, H, WD, stats):
    """Merge two of the ``n`` vectors of one model (SV (B+1, d), A (B+1,)); returns n - 1.

    ``compare``: also rank the partners by lookup-WD and count in ``stats`` whether it picks the
    same partner (the "equal merging decisions" of papers/001, Table 3).
    """
    i = 0
    for j in range(1, n):
        if abs(A[j]) < abs(A[i]):
            i = j
    best_j = -1
    best_wd = np.inf
    best_h = 0.0
    best_kappa = 0.0
    best_m = 0.0
    cmp_j = -1
    cmp_wd = np.inf
    for j in range(n):
        if j == i or A[j] * A[i] < 0.0:
            continue
        total = A[i] + A[j]
        m = A[i] / total if total != 0.0 else 0.5
        log_kappa = max(-gamma * sq_dist(SV, i, j), _LOG_KAPPA_MIN)
        kappa = math.exp(log_kappa)
        unit, h = _candidate(code, m, kappa, log_kappa, H, WD)
        wd = total * total * unit
        if wd < best_wd:
            best_wd, best_j, best_h, best_kappa, best_m = wd, j, h, kappa, m
        if compare:
            wd2 = total * total * bilinear(WD, m, kappa)
            if wd2 < cmp_wd:
                cmp_wd, cmp_j = wd2, j
    stats[STAT_MERGES] += 1.0
    if compare:
        stats[STAT_COMPARED] += 1.0
        if cmp_j == best_j:
            stats[STAT_EQUAL] += 1.0
    if best_j < 0:  # no partner of the same sign: remove x_i
        _move_last_into(SV, A, n, i)
        return n - 1
    h = best_h
    if code == MERGE_LOOKUP_WD:
        h = bilinear(H, best_m, best_kappa)
    log_kappa = math.log(max(best_kappa, 1e-300))
    # A_z = A_i k(x_i, z) + A_j k(x_j, z), with k(x_i, z) = kappa^((1-h)^2), k(x_j, z) = kappa^(h^2)
    a_z = (A[i] * math.exp((1.0 - h) * (1.0 - h) * log_kappa)
           + A[best_j] * math.exp(h * h * log_kappa))
    for k in range(SV.shape[1]):
        SV[i, k] = h * SV[i, k] + (1.0 - h) * SV[best_j, k]
    A[i] = a_z
    _move_last_into(SV, A, n, best_j)
    return n - 1


@njit_inline
def _move_last_into(SV, A, n, j):
    last = n - 1
    if j != last:
        for k in range(SV.shape[1]):
            SV[j, k] = SV[last, k]
        A[j] = A[last]
    A[last] = 0.0


# -- the SGD steps ---------------------------------------------------------------------------------
@njit_inline
def _target(code, n_out, k):
    if n_out == 1:
        return 1.0 if code == 1 else -1.0
    return 1.0 if code == k else -1.0


@njit_inline
def _step(x, x_sq, y, SV, A, nsv, k, t, lam, gamma):
    """One Pegasos step of output k on row x; returns the hinge loss at the model before it."""
    n = nsv[k]
    d = x.shape[0]
    f = 0.0
    for j in range(n):
        dot = 0.0
        sv_sq = 0.0
        for c in range(d):
            dot += SV[k, j, c] * x[c]
            sv_sq += SV[k, j, c] * SV[k, j, c]
        f += A[k, j] * math.exp(-gamma * max(x_sq + sv_sq - 2.0 * dot, 0.0))
    shrink = 1.0 - 1.0 / t  # 1 - eta_t lambda with eta_t = 1/(lambda t)
    for j in range(n):
        A[k, j] *= shrink
    if y * f < 1.0:
        for c in range(d):
            SV[k, n, c] = x[c]
        A[k, n] = y / (lam * t)
        nsv[k] = n + 1
    return max(0.0, 1.0 - y * f)


@njit_serial
def bsgd_pass(X, codes, order, SV, A, nsv, cursor, acc, hp):
    """SGD steps over rows ``order[cursor[0]:]`` of a block, resuming at output cursor[1].

    X : dense (n, d) rows or a CSR triple; each row is expanded into a dense float64 buffer
    (:func:`dsvm.kernels.rows.row_densify`). Returns the output k whose model exceeded its
    budget (cursor then points at the row and the next output to resume from), or -1 at the
    end of the block. acc = [t, loss_sum]; hp = [lambda, gamma].
    """
    budget = SV.shape[1] - 1
    n_out = SV.shape[0]
    x = np.zeros(SV.shape[2], dtype=np.float64)
    for pos in range(cursor[0], order.shape[0]):
        i = order[pos]
        x_sq = row_densify(X, i, x)
        if cursor[1] == 0:
            acc[0] += 1.0
        for k in range(cursor[1], n_out):
            acc[1] += _step(x, x_sq, _target(codes[i], n_out, k), SV, A, nsv, k, acc[0],
                            hp[0], hp[1])
            if nsv[k] > budget:
                cursor[0], cursor[1] = (pos, k + 1) if k + 1 < n_out else (pos + 1, 0)
                return k
        cursor[1] = 0
    cursor[0] = order.shape[0]
    return -1
