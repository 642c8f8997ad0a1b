"""Dual coordinate descent (LIBLINEAR; papers/002 §4.4.2, Algorithm 3) as CoCoA+'s local solver.

The problem is LIBLINEAR's dual of ``min_w 1/2 ||w||^2 + sum_i C_i loss(y_i w.x_i)``:

    min_alpha  1/2 alpha^T (Q + D) alpha - e^T alpha,   0 <= alpha_i <= U_i,

with ``Q_ij = y_i y_j x_i.x_j``; hinge: ``D_ii = 0, U_i = C_i``; squared hinge:
``D_ii = 1/(2 C_i), U_i = inf``. One coordinate step (Algorithm 3) on row i:

    G = y_i w.x_i - 1 + D_ii alpha_i;   alpha_i <- min(max(alpha_i - G / Qbar_ii, 0), U_i);
    w <- w + (alpha_i' - alpha_i) y_i x_i.

CoCoA+ (Ma, Smith, Jaggi et al. 2015) runs these steps on one worker's rows against its local
subproblem ``G^sigma'_k``: the worker's model is ``v = w + sigma' dw`` (``dw``: the worker's own
change this round) and the curvature is ``Qbar_ii = sigma' ||x_i||^2 + D_ii``. ``sigma' = 1``
is LIBLINEAR itself; ``sigma' = K`` (K workers whose ``dw`` are added) is CoCoA+'s safe choice.

An intercept is LIBLINEAR's bias feature: every row gets one more feature of value ``bias``
(0: none), whose weight is regularised like the others.

Multiclass one-vs-rest: ``K`` weight rows, one dual per (row, output); output k reads label +1
where the row's class code is k and -1 elsewhere; binary (one output) reads code 1 as +1.
Rows with ``C_i = 0`` (zero sample weight) are skipped: their duals stay 0. An all-zero row
(hinge, no bias) goes to alpha_i = C_i in one step, as in LIBLINEAR (its -G/Q_ii is +inf).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dsvm.kernels._jit import njit_inline, njit_serial
from dsvm.kernels.rows import row_entry, row_span

HINGE = 0
SQUARED_HINGE = 1
DCD_LOSSES = {"hinge": HINGE, "squared_hinge": SQUARED_HINGE}


@njit_inline
def _label(codes, i, k, n_outputs):
    if n_outputs == 1:
        return 1.0 if codes[i] == 1 else -1.0
    return 1.0 if codes[i] == k else -1.0


@njit_inline
def _step(a, G, q, upper):
    """The new dual after the projected Newton step; ``a`` unchanged when the projected
    gradient is zero (Algorithm 3's test)."""
    if a == 0.0 and G >= 0.0:
        return a
    if a >= upper and G <= 0.0:
        return a
    new = a - G / q
    if new < 0.0:
        new = 0.0
    if new > upper:
        new = upper
    return new


@njit_inline
def _zero_row(duals, i, upper):
    """An all-zero row without bias (hinge): G = -1 whatever w, so LIBLINEAR's step with
    Qbar_ii = 0 takes alpha_i to C_i (w does not move). Skipping it would leave the dual
    short by C_i per such row (w8a: 4,203 empty rows, a relative gap of 0.64 at the optimum)."""
    changed = 0
    for k in range(duals.shape[1]):
        if duals[i, k] != upper:
            duals[i, k] = upper
            changed += 1
    return changed


class DcdModel(NamedTuple):
    """A stream's model, all float64 and updated in place: ``V`` (K, d) the local model
    w + sigma dw, ``dW`` (K, d) this worker's change, ``vb``, ``db`` (K,) the same for the bias
    feature."""

    V: np.ndarray
    dW: np.ndarray
    vb: np.ndarray
    db: np.ndarray


class DcdParams(NamedTuple):
    """``sigma`` (sigma' of CoCoA+), ``loss`` (a DCD_LOSSES code), ``bias`` (the value of the
    bias feature, 0: none)."""

    sigma: float
    loss: int
    bias: float


@njit_serial
def dcd_pass(X, codes, cost, duals, model, order, params, gain):
    """Coordinate steps on the rows of ``X`` in ``order`` (row indices, repeats allowed).

    X : dense (n, d) C-contiguous rows or a CSR triple (O(nnz) per step), walked through
    :mod:`dsvm.kernels.rows`; cost : (n,) float64 C_i; duals : (n, K) float64 in/out; model :
    :class:`DcdModel` (in/out); params : :class:`DcdParams`; gain : (1,) float64 out, what
    the steps took off the local subproblem's objective (each step's ``-(G d + q d^2 / 2)``
    for a change ``d``, exact on the quadratic). Returns the number of steps that changed a
    dual.
    """
    V, dW, vb, db = model
    sigma, loss, bias = params
    n_outputs = V.shape[0]
    changed = 0
    total = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        c = cost[i]
        if c <= 0.0:
            continue
        lo, hi = row_span(X, i)
        sq = bias * bias
        for jj in range(lo, hi):
            _, xj = row_entry(X, i, jj)
            sq += xj * xj
        dii = 0.0 if loss == HINGE else 0.5 / c
        upper = c if loss == HINGE else np.inf
        q = sigma * sq + dii
        if q <= 0.0:
            changed += _zero_row(duals, i, upper)
            continue
        for k in range(n_outputs):
            yk = _label(codes, i, k, n_outputs)
            dot = vb[k] * bias
            for jj in range(lo, hi):
                j, xj = row_entry(X, i, jj)
                dot += xj * V[k, j]
            a = duals[i, k]
            G = yk * dot - 1.0 + dii * a
            new = _step(a, G, q, upper)
            if new == a:
                continue
            total -= (G + 0.5 * q * (new - a)) * (new - a)
            duals[i, k] = new
            step = (new - a) * yk
            for jj in range(lo, hi):
                j, xj = row_entry(X, i, jj)
                dW[k, j] += step * xj
                V[k, j] += sigma * step * xj
            db[k] += step * bias
            vb[k] += sigma * step * bias
            changed += 1
    gain[0] = total
    return changed
