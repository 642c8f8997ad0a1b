"""The weights and their running average side by side: one cache line per sparse coordinate.

An averaged sparse step reads and writes, for each stored entry j of a row, both u_j = W[k, j]
and the average's sum A[k, j] (:mod:`dsvm.kernels.averages`). With W (K, d) and A (K, d) as two
arrays, a model of 2^22 features (16 MB of float32 u, 32 MB of float64 A) costs two cache
misses per entry, and the prefetches issued for A on every row (margin violators or not) evict
W's lines: on 400,000 x 2^22 x 40 nnz rows the averaged SGD pass took 2-2.5x the plain one.

A CSR pass with an average therefore runs on a working copy P (K, d, 2) float64 in which
coordinate j of output k is the 16-byte slot ``P[k, j] = (u_j, A[k, j])``: ``u_j`` in the low
bytes *in W's own dtype* (a float32 u is stored as float32, through a float32 view of P), so
the arithmetic, and the results, are exactly those of the two separate arrays. A 16-byte slot
never straddles a cache line. The copy in and out is O(d) once per pass, as the average's
begin / end already were, never per step.

The FOLOS pass (:func:`dsvm.kernels.passes.sgd_prox_pass`) keeps no average; its lazy prox's
per-coordinate record (``last``, float64, read before every entry's weight) takes A's place
in the pairing, for the same reason.

**Kept from pass to pass** (#27). On 4,096-row chunks in windows of 8 the O(d) work per pass
is as large as the steps: at 2^22 features pair_up + unpair cost 11 ms a model, the
average's begin / end and the final scale fold about 7 ms more, against 23 ms of steps over
32,768 rows of 40 nonzeros (and a grid of 8 alphas pays it 8 times). So consecutive passes
over one state may keep the pairs in P (``hp[PAIRED_IN]``, ``hp[KEEP_PAIRED]``, set by
:func:`dsvm.solvers.objective.pairs_kept`), and the non-projecting rules (SGD) carry their
scale and lazy average coefficient in P's last ``CARRY`` slots (:func:`carry_view`) instead
of folding them at each pass's end: kept passes are then one pass over their rows, bit for
bit, and :func:`settle` + :func:`unpair` end it. P is (K, d + CARRY, 2).

Dense blocks keep W and A as they are: a dense row touches every coordinate, W[k] and A[k] are
streamed (and for small d sit in L1), and contiguous rows vectorise.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from dsvm.kernels import hparams as H
from dsvm.kernels._jit import njit_inline, njit_serial, overload_options
from dsvm.kernels.weights import vec_combine, vec_scale


def pair_scratch(X, W, A, average, reuse=None):
    """The working array a pass kernel pairs W and A in: (K, d, 2) float64 for a CSR block
    with an average, else an empty (0, 0, 2) one; ``reuse`` (an earlier pass's scratch) when
    it has that shape.

    Allocated by NumPy, which asks for transparent huge pages on large arrays: the kernel's
    own allocation of 64 MB faulted in 4 KB pages, 50 ms a pass at 2^22 features, against
    7 ms here (at times far more: :func:`dsvm.solvers.objective.pass_scratch_kept` keeps it
    from pass to pass)."""
    shape = ((W.shape[0], W.shape[1] + CARRY, 2)
             if isinstance(X, tuple) and average and A.shape[1] > 0 else (0, 0, 2))
    if reuse is not None and reuse.shape == shape:
        return reuse
    return np.empty(shape, np.float64)


# Slots of P past W's d columns: a pass's carry (see carry_view).
CARRY = 2


@njit_serial
def pair_up(W, A, P):
    """Fill P (K, d + CARRY, 2) float64 with P[k, j] = (W[k, j] as stored in W's dtype,
    A[k, j]) for j < d.

    A P of another shape is replaced by a fresh one; returns the P used."""
    K, d = W.shape
    if P.shape[0] != K or P.shape[1] != d + CARRY:
        P = np.empty((K, d + CARRY, 2), np.float64)
    U, V = pair_views(P, W)
    for k in range(K):
        for j in range(d):
            U[k, j] = W[k, j]
            V[k, j] = A[k, j]
        for j in range(d, d + CARRY):  # (nothing carried yet)
            P[k, j, 0] = 0.0
            P[k, j, 1] = 0.0
    return P


def pair_views(P, W):
    """The (K, d) strided views of P's u (in W's dtype) and average columns."""
    d = W.shape[1]
    Pw = P.view(W.dtype)  # (K, d + CARRY, 2 * 8 // itemsize)
    return Pw[:, :d, 0], P[:, :d, 1]


@overload(pair_views, **overload_options())
def _ol_pair_views(P, W):
    def impl(P, W):
        d = W.shape[1]
        Pw = P.view(W.dtype)
        return Pw[:, :d, 0], P[:, :d, 1]

    return impl


def carry_view(P, W):
    """(K, CARRY, 2) float64: where a pass whose pairs are kept for the next one leaves each
    output's scale and lazy average coefficient ([k, 0, 0], [k, 0, 1]) and marks them to be
    folded ([k, 1, 1] = 1.0) (see :func:`dsvm.kernels.stochastic.stochastic_steps`)."""
    return P[:, W.shape[1]:, :]


@overload(carry_view, **overload_options())
def _ol_carry_view(P, W):
    return lambda P, W: P[:, W.shape[1]:, :]


def no_carry(P):
    """A (0, 0, 2) view of the carry's type: a pass that carries nothing."""
    return P[:0, :0, :]


@overload(no_carry, **overload_options())
def _ol_no_carry(P):
    return lambda P: P[:0, :0, :]


@njit_serial
def settle(P, W, ab, n_avg):
    """Fold what the last pass over the pairs in P carried (:func:`carry_view`) into them,
    as that pass's end would have: the average's sum back to the average (A = (A + c u) / n,
    ab / n), then the scale into u. Before :func:`unpair`; nothing when nothing is carried."""
    U, V = pair_views(P, W)
    C = carry_view(P, W)
    for k in range(U.shape[0]):
        if C[k, 1, 1] == 0.0:
            continue
        scale, c = C[k, 0, 0], C[k, 0, 1]
        if n_avg > 0.0:  # (kernels.averages.avg_end)
            inv = 1.0 / n_avg
            vec_combine(V, k, inv, U, c * inv)
            ab[k] *= inv
        if scale != 1.0:
            vec_scale(U, k, scale)
        C[k, 1, 1] = 0.0


@njit_serial
def unpair_finite(P, W, A):
    """:func:`unpair`, returning whether every value copied is finite (the check a pass
    makes, :func:`dsvm.solvers.objective.check_finite`, without reading W and A again)."""
    K, d = W.shape
    U, V = pair_views(P, W)
    total = 0.0
    for k in range(K):
        for j in range(d):
            W[k, j] = U[k, j]
            A[k, j] = V[k, j]
            total += V[k, j] + np.float64(U[k, j])
    return np.isfinite(total)


@njit_serial
def unpair(P, W, A):
    """Copy P's columns back into W and A."""
    K, d = W.shape
    U, V = pair_views(P, W)
    for k in range(K):
        for j in range(d):
            W[k, j] = U[k, j]
            A[k, j] = V[k, j]


# The ``unit`` argument of the pass bodies that marks a pass with one output and one-row steps.
# Its *type* (not its value) selects the variant at compile time, see run_shape.
UNIT = np.uint8(1)


def run_shape(W, hp, unit):
    """(outputs K, rows per step) of a pass: (1, 1) when ``unit`` is :data:`UNIT`.

    The unit variant is compiled with K and the batch size as constants: the per-output
    scalars (scale, squared norm, average coefficient) then live in registers instead of
    arrays that every store to W might alias, and the batch loops vanish. 2,000,000 x 100
    float32, one averaged Pegasos pass in stored order: 0.064-0.076 s general, 0.054 s unit
    (0.049 s without the average; the plain 25-line pass of bench_kernels 0.035 s). A type,
    not a literal: the same variant through ``numba.literally`` ran six times slower.
    """
    if isinstance(unit, np.uint8):
        return 1, 1
    return W.shape[0], max(1, int(hp[H.BATCH]))


@overload(run_shape, **overload_options())
def _ol_run_shape(W, hp, unit):
    if isinstance(unit, types.Integer) and unit.bitwidth == 8 and not unit.signed:
        return lambda W, hp, unit: (1, 1)
    return lambda W, hp, unit: (W.shape[0], max(1, int(hp[H.BATCH])))


@njit_inline
def jumps_at(order, j):
    """Whether ``order[j]`` (if any) does not follow ``order[j - 1]`` in storage: where a
    dense pass prefetches the row, since the hardware streams the rows of a run on its own
    and a prefetch per row only costs instructions."""
    return j < order.shape[0] and order[j] != order[j - 1] + 1
