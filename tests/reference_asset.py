"""Slow NumPy references for the ASSET and FOLOS kernels (dense float64, row by row, eager).

Written straight from Algorithm 1 of papers/000 and FOLOS as in papers/002 §4.3.4: no scaled
weights, no lazy sums, no lazy thresholds.
"""

from __future__ import annotations

import math

import numpy as np

from tests.reference import dloss_ref, loss_ref


def targets_any(codes: np.ndarray, n_outputs: int) -> np.ndarray:
    codes = np.asarray(codes)
    if codes.dtype.kind == "f":
        return codes.astype(np.float64)[:, None]
    if n_outputs == 1:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(n_outputs)[None, :], 1.0, -1.0)


def asset_pass_ref(X, codes, sw, order, W, b, A, ab, *, alpha, t, loss, a, fit_intercept,
                   radius, bias_bound, eta0, power, average, avg_start, n_avg):
    """Returns (W, b, A, ab, t, n_avg, loss_sum); the average as an explicit weighted sum."""
    X = np.asarray(X, dtype=np.float64)
    W = np.array(W, dtype=np.float64)
    b = np.array(b, dtype=np.float64)
    sw = np.ones(len(X)) if sw is None else np.asarray(sw, np.float64)
    Y = targets_any(codes, W.shape[0])
    num_w = n_avg * np.array(A, dtype=np.float64) if average else None
    num_b = n_avg * np.array(ab, dtype=np.float64) if average else None
    total = 0.0
    for i in order:
        t += 1.0
        eta = eta0 / t ** power
        p = X[i] @ W.T + b
        total += float(np.sum(sw[i] * loss_ref(loss, p, Y[i], a)))
        g = sw[i] * dloss_ref(loss, p, Y[i], a)  # (K,)
        # (w, b) - eta G with G = (lambda w + g x, g), then the projections
        W = max(0.0, 1.0 - eta * alpha) * W - eta * np.outer(g, X[i])
        if fit_intercept:
            b = np.clip(b - eta * g, -bias_bound, bias_bound)
        for k in range(W.shape[0]):
            nrm = np.linalg.norm(W[k])
            if nrm > radius:
                W[k] *= radius / nrm
        if average and t > avg_start:
            num_w = num_w + eta * W
            num_b = num_b + eta * b
            n_avg += eta
    if average and n_avg > 0:
        A, ab = num_w / n_avg, num_b / n_avg
    return W, b, A, ab, t, n_avg, total


def soft(u, a):
    return np.sign(u) * np.maximum(0.0, np.abs(u) - a)


def folos_pass_ref(X, codes, sw, order, W, b, *, alpha, l1, l2, t, batch_size, loss, a,
                   fit_intercept, eta0, power):
    """FOLOS with eager prox on every coordinate at every step; returns (W, b, t, loss_sum)."""
    X = np.asarray(X, dtype=np.float64)
    W = np.array(W, dtype=np.float64)
    b = np.array(b, dtype=np.float64)
    sw = np.ones(len(X)) if sw is None else np.asarray(sw, np.float64)
    Y = targets_any(codes, W.shape[0])
    total = 0.0
    for s in range(0, len(order), batch_size):
        rows = order[s : s + batch_size]
        m = len(rows)
        eta = eta0 / (1.0 + alpha * eta0 * t) ** power
        t += 1.0
        P = X[rows] @ W.T + b
        total += float(np.sum(sw[rows, None] * loss_ref(loss, P, Y[rows], a)))
        G = sw[rows, None] * dloss_ref(loss, P, Y[rows], a)
        W = max(0.0, 1.0 - eta * l2) * W - (eta / m) * (G.T @ X[rows])
        W = soft(W, eta * l1)
        if fit_intercept:
            b = b - eta * G.sum(axis=0) / m
    return W, b, t, total


__all__ = ["asset_pass_ref", "folos_pass_ref", "math"]
