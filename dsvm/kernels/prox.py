"""FOLOS / FOBOS: SGD with the L1 (or elastic-net) proximal step applied lazily; the leaves
of the prox rule (:class:`dsvm.kernels.rules.ProxRule`, run by
:func:`dsvm.kernels.passes.sgd_prox_pass`).

Duchi & Singer's forward-backward splitting (Menon's survey, Section 4.3.4) for

    lambda_2/2 ||w||^2 + lambda_1 ||w||_1 + (1/n) sum_i s_i loss(w . x_i + b, y_i):

    w_{t+1/2} = (1 - eta_t lambda_2) w_t - (eta_t / m) sum_{i in M} g_i x_i   (forward: L2 + loss)
    w_{t+1}   = sign(w_{t+1/2}) max(0, |w_{t+1/2}| - eta_t lambda_1)          (backward: L1 prox)

with SGD's schedule eta_t = eta0 / (1 + alpha eta0 t) (``hp[ETA0]``, ``hp[ALPHA]``, power
``hp[POWER]``); lambda_2 = ``hp[L2]``, lambda_1 = ``hp[L1]``. The soft-threshold sets
coordinates to exactly 0.

**Lazy prox, O(nnz) per sparse row.** The threshold of step t applies to every coordinate, but
a coordinate that no row touches changes only by thresholds, and soft-thresholds compose by
adding: soft(soft(u, a), b) = soft(u, a + b). With w = s u (the scaled representation of
:mod:`dsvm.kernels.weights`, which makes the L2 shrink O(1)) a threshold eta lambda_1 on w is
eta lambda_1 / s on u. So each output keeps the running sum Q_k of the thresholds in u-units
and each coordinate the value of Q_k when it was last brought up to date (``last``); before a
row's dot product its non-zero coordinates are caught up (u_j <- soft(u_j, Q_k - last_kj)),
which is exact. Every coordinate is caught up before the scale is folded into u (when Q's unit
changes) and at the end of the pass, so between kernel calls ``W`` holds w itself.

No running average is kept: an average of sparse iterates is not sparse, and exact zeros are
what the L1 penalty is for (see :mod:`dsvm.solvers.sgd`).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from dsvm.kernels._jit import njit_inline, njit_serial, overload_options


@njit_inline
def soft_threshold(u, a):
    """sign(u) max(0, |u| - a) for a >= 0."""
    if u > a:
        return u - a
    if u < -a:
        return u + a
    return u * 0.0  # keeps u's type; a NaN stays NaN


@njit_inline
def catch_up_coord(W, k, j, q, last):
    pending = q - last[k, j]
    if pending != 0.0:
        W[k, j] = soft_threshold(np.float64(W[k, j]), pending)
        last[k, j] = q


@njit_serial
def catch_up_all(W, k, q, last):
    """Apply every pending threshold of output k (O(d)): before a fold and at a pass's end."""
    for j in range(W.shape[1]):
        catch_up_coord(W, k, j, q, last)
        last[k, j] = 0.0


def catch_up_row(X, i, W, k, q, last):
    """Apply the pending thresholds of output k to the coordinates of row i's non-zeros."""
    if isinstance(X, tuple):
        for jj in range(X[0][i], X[0][i + 1]):
            catch_up_coord(W, k, X[1][jj], q, last)
    else:
        for j in range(W.shape[1]):
            catch_up_coord(W, k, j, q, last)


@overload(catch_up_row, **overload_options())
def _ol_catch_up_row(X, i, W, k, q, last):
    if isinstance(X, types.BaseTuple):

        def impl_csr(X, i, W, k, q, last):
            indptr, indices = X[0], X[1]
            for jj in range(indptr[i], indptr[i + 1]):
                catch_up_coord(W, k, indices[jj], q, last)

        return impl_csr

    def impl_dense(X, i, W, k, q, last):
        # A dense row catches up every coordinate, so within a pass they all share one
        # ``last`` (and catch_up_all resets them together): one pending threshold for the
        # row, and a loop without a branch on each coordinate's, which vectorises (1M x 100
        # float32 rows: 1.03 s a pass with the per-coordinate test, see the commit).
        d = W.shape[1]
        if d == 0:
            return
        pending = q - last[k, 0]
        if pending == 0.0:
            return
        for j in range(d):
            W[k, j] = soft_threshold(np.float64(W[k, j]), pending)
            last[k, j] = q

    return impl_dense
