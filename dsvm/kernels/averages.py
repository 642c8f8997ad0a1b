"""The weighted running average of the iterates, in O(1) per step (both pass kernels).

The average of the iterates w_t (after step t) with weights a_t >= 0,

    abar = (n_0 abar_0 + sum_t a_t w_t) / n,    n = n_0 + sum_t a_t,

is what a pass leaves in ``A`` (K, d) float64 and ``hp[N_AVG]`` = n; n_0 and abar_0 are the
values it started from, so chained passes, and passes of parallel streams started from the same
state, continue one average (see :mod:`dsvm.solvers.pegasos`, "Averaging").

During a pass the kernel keeps the weighted *sum* S_k = n abar_k lazily, with w_k = s_k u_k
(s_k the weight scale, u_k = W[k] the stored row):

    S_k = A[k] + c_k u_k

* an averaging step S <- S + a_t w_t is c_k <- c_k + a_t s_k: O(1), whatever the shrink and
  projection did to s_k;
* a change d of u (a row's axpy) is absorbed by A[k] -= c_k d, in the row primitives'
  ``*_comp`` variants: O(nnz), measured on the stored values of u, so exact for float32 u;
* before u itself is rescaled or zeroed (a fold of the scale), :func:`avg_flush` materialises
  A[k] <- A[k] + c_k u_k and sets c_k = 0: O(d), rare.

It is Bottou's svmasgd bookkeeping with sums instead of means: no division and no decaying
factor per step. The sums stay far from float64's range (n ~ T^(p+1) for weights t^p).
The ratio |c_k u_k| / |S_k| ~ (c_k / n) / s_k is kept below ``AVG_SPREAD_MAX`` by flushing,
so that S is never the small difference of two large terms.

The per-step helpers take and return scalars: an inlined helper that takes arrays makes numba
count references on every call (measured: +25 ns per step). The O(d) array work sits in
separate functions that the kernels call once per pass or in the rare branches.
"""

from __future__ import annotations

import math

from dsvm.kernels._jit import njit_inline, njit_serial
from dsvm.kernels.weights import vec_combine, vec_scale, vec_zero

# Largest (c_k / n) / s_k kept in the lazy sum. |c_k u_k| = (c_k / s_k) |w_k| and
# |S_k| ~ n |w_k|, so beyond that ratio S = A + c u would be the small difference of two large
# terms, and rounding (about 1e-16 * ratio, relative) would show. Pegasos' scale falls like 1/t
# (much faster while the projection is active) and its polynomially weighted averages keep the
# ratio near (p + 1) / p, so this only flushes (O(d)) in projection-bound stretches at the
# start; SGD's scale decays too slowly to get near.
AVG_SPREAD_MAX = 1e3


@njit_inline
def avg_weight(t, avg_start, power):
    """Averaging weight a_t of the iterate after step t: (t - avg_start) ** power, 0 if
    t <= avg_start.

    Power 0 is the uniform (Polyak-Ruppert) average of the steps after ``avg_start``; power 1
    from 0 the t-weighted average of Lacoste-Julien, Schmidt & Bach (2012); larger powers
    approach the polynomial-decay averages of Shamir & Zhang (2013).
    """
    if t <= avg_start:
        return 0.0
    x = t - avg_start
    if power == 0.0:
        return 1.0
    if power == 1.0:
        return x
    ip = int(power)
    if ip == power and 0 < ip <= 64:
        # Integer powers by repeated squaring (3 multiplies for t^8): math.pow cost ~10 ns a
        # step, 15% of a 100-feature dense step.
        acc = 1.0
        while ip > 0:
            if ip & 1:
                acc *= x
            x *= x
            ip >>= 1
        return acc
    return math.pow(x, power)


@njit_serial
def avg_begin(A, ab, k, n_avg):
    """Turn output k's average into its sum: A[k] *= n, ab[k] *= n (zeros when n == 0)."""
    if n_avg > 0.0:
        vec_scale(A, k, n_avg)
        ab[k] *= n_avg
    else:
        vec_zero(A, k)
        ab[k] = 0.0


@njit_serial
def avg_end(A, ab, k, c, W, n_avg):
    """Materialise the lazy sum and turn it back into the average: A[k] = (A[k] + c_k W[k]) / n.

    With n == 0 (nothing averaged yet) A[k] and ab[k] stay zero.
    """
    if n_avg > 0.0:
        inv = 1.0 / n_avg
        vec_combine(A, k, inv, W, c[k] * inv)
        ab[k] *= inv
    c[k] = 0.0


@njit_serial
def avg_flush(A, k, c, W):
    """A[k] <- A[k] + c_k W[k], c_k <- 0: before u = W[k] is rescaled or zeroed. O(d)."""
    if c[k] != 0.0:
        vec_combine(A, k, 1.0, W, c[k])
        c[k] = 0.0


@njit_inline
def avg_flush_needed(c, scale, factor, scale_min, n_avg):
    """Whether :func:`avg_flush` must run before w's scale is multiplied by ``factor``.

    It must when the shrink is about to fold the scale into u or zero u (see
    :func:`dsvm.kernels.weights.shrink_scale`), and when c / n would outgrow the new scale
    (``AVG_SPREAD_MAX``). Scalars only.
    """
    if c == 0.0:
        return False
    new_scale = scale * factor
    return factor <= 0.0 or new_scale < scale_min or c > AVG_SPREAD_MAX * n_avg * new_scale


@njit_inline
def avg_add(c, sb, a_t, s, b, n_avg):
    """One averaging step for output k: S += a_t w (c += a_t s) and the intercept's sum
    sb += a_t b. Returns (c, sb, whether to flush) (``AVG_SPREAD_MAX``). Scalars only."""
    c += a_t * s
    sb += a_t * b
    return c, sb, c > AVG_SPREAD_MAX * n_avg * s
