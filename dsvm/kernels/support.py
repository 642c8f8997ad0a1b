"""The support of a sparse model while it is young: O(nnz) folds instead of O(n_features).

Pegasos with a small lambda projects (and so shrinks the weight scale by large factors) at
almost every one of its first few thousand steps: on 400,000 rows x 2^22 features it folded the
scale into u = W[k] and flushed the lazy average 200 times in its first pass, each an O(d)
sweep over 16 + 32 MB, 0.5 s in all (twice the rest of the pass). While those folds happen the
model has only seen a few thousand rows, so u is non-zero on a few percent of its coordinates.

When a pass over CSR rows starts from an all-zero u (||u||^2 == 0, which the pass measures anyway:
a fit's first pass), it records the coordinates its steps touch: ``mark[k, j]`` says whether j is
listed, ``idx[k, :n[k]]`` lists them. The folds, the flushes of the average into ``A`` (u is zero
elsewhere, so A + c u changes nowhere else) and ||u||^2 then sweep the list. When the list would
outgrow ``SUPPORT_FRACTION`` of the coordinates, tracking stops for good (``n[k] = -1``) and the
sweeps are dense again; the steps after that pay nothing for it. Dense rows touch every coordinate
at once, so their kernels never track (``track_support`` is False at compile time).

The results are those of the dense sweeps (the same products; only ||u||^2 is summed in another
order).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from dsvm.kernels._jit import njit_serial, overload_options
from dsvm.kernels.weights import vec_combine, vec_scale, vec_sqnorm, vec_zero

# Track the support while it holds at most d / SUPPORT_FRACTION coordinates: a listed sweep
# costs a random access per coordinate, a dense one streams, so beyond ~1/4 the dense sweep wins.
SUPPORT_FRACTION = 4


def track_support(X):
    """Whether a pass over X keeps the support of its weights (CSR rows: True)."""
    return isinstance(X, tuple)


@overload(track_support, **overload_options())
def _ol_track_support(X):
    if isinstance(X, types.BaseTuple):
        return lambda X: True
    return lambda X: False


def mark_row(X, i, mark, idx, k, n):
    """List the coordinates of row i not yet in output k's support; returns the new count, or
    -1 when the list is full (tracking stops)."""
    indptr, indices, _ = X
    for jj in range(indptr[i], indptr[i + 1]):
        j = indices[jj]
        if not mark[k, j]:
            if n >= idx.shape[1]:
                return -1
            mark[k, j] = 1
            idx[k, n] = j
            n += 1
    return n


@overload(mark_row, **overload_options())
def _ol_mark_row(X, i, mark, idx, k, n):
    if isinstance(X, types.BaseTuple):

        def impl(X, i, mark, idx, k, n):
            indptr = X[0]
            indices = X[1]
            for jj in range(indptr[i], indptr[i + 1]):
                j = indices[jj]
                if mark[k, j] == 0:
                    if n >= idx.shape[1]:
                        return -1
                    mark[k, j] = 1
                    idx[k, n] = j
                    n += 1
            return n

        return impl
    return lambda X, i, mark, idx, k, n: -1


@njit_serial
def sup_zero(W, k, idx, n):
    """W[k] = 0 (its listed coordinates only while tracked)."""
    if n < 0:
        vec_zero(W, k)
        return
    for q in range(n):
        W[k, idx[k, q]] = 0.0


@njit_serial
def sup_scale(W, k, s, idx, n):
    """W[k] *= s."""
    if n < 0:
        vec_scale(W, k, s)
        return
    for q in range(n):
        j = idx[k, q]
        W[k, j] = np.float64(W[k, j]) * s


@njit_serial
def sup_sqnorm(W, k, idx, n):
    """||W[k]||^2 in float64."""
    if n < 0:
        return vec_sqnorm(W, k)
    acc = 0.0
    for q in range(n):
        x = np.float64(W[k, idx[k, q]])
        acc += x * x
    return acc


@njit_serial
def sup_flush(A, k, c, W, idx, n):
    """The average's flush A[k] <- A[k] + c_k W[k], c_k <- 0 (kernels.averages.avg_flush)."""
    if c[k] == 0.0:
        return
    if n < 0:
        vec_combine(A, k, 1.0, W, c[k])
    else:
        ck = c[k]
        for q in range(n):
            j = idx[k, q]
            A[k, j] += ck * np.float64(W[k, j])
    c[k] = 0.0
