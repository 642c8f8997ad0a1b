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

Dense blocks keep W and A as they are: a dense row touches every coordinate, W[k] and A[k] are
streamed (and for small d sit in L1), and contiguous rows vectorise.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from dsvm.kernels import hparams as H
from dsvm.kernels._jit import njit_inline, njit_serial, overload_options


def pair_scratch(X, W, A, average, reuse=None):
    """The working array a pass kernel pairs W and A in: (K, d, 2) float64 for a CSR block
    with an average, else an empty (0, 0, 2) one; ``reuse`` (an earlier pass's scratch) when
    it has that shape.

    Allocated by NumPy, which asks for transparent huge pages on large arrays: the kernel's
    own allocation of 64 MB faulted in 4 KB pages, 50 ms a pass at 2^22 features, against
    7 ms here (at times far more: :func:`dsvm.solvers.objective.pass_scratch_kept` keeps it
    from pass to pass)."""
    shape = ((W.shape[0], W.shape[1], 2) if isinstance(X, tuple) and average and A.shape[1] > 0
             else (0, 0, 2))
    if reuse is not None and reuse.shape == shape:
        return reuse
    return np.empty(shape, np.float64)


@njit_serial
def pair_up(W, A, P):
    """Fill P (K, d, 2) float64 with P[k, j] = (W[k, j] as stored in W's dtype, A[k, j]).

    A P of another shape is replaced by a fresh one; returns the P used."""
    K, d = W.shape
    if P.shape[0] != K or P.shape[1] != d:
        P = np.empty((K, d, 2), np.float64)
    U, V = pair_views(P, W)
    for k in range(K):
        for j in range(d):
            U[k, j] = W[k, j]
            V[k, j] = A[k, j]
    return P


def pair_views(P, W):
    """The (K, d) strided views of P's u (in W's dtype) and average columns."""
    Pw = P.view(W.dtype)  # (K, d, 2 * 8 // itemsize)
    return Pw[:, :, 0], P[:, :, 1]


@overload(pair_views, **overload_options())
def _ol_pair_views(P, W):
    def impl(P, W):
        Pw = P.view(W.dtype)
        return Pw[:, :, 0], P[:, :, 1]

    return impl


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
