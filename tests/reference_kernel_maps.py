"""Slow, obviously correct NumPy references for the kernel-map and budgeted-SGD kernels."""

from __future__ import annotations

import math

import numpy as np


def rbf(A: np.ndarray, B: np.ndarray, gamma: float) -> np.ndarray:
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * d2)


def rff(X: np.ndarray, W: np.ndarray, offset: np.ndarray) -> np.ndarray:
    return np.sqrt(2.0 / W.shape[1]) * np.cos(X @ W + offset)


def merge_value(h: float, m: float, kappa: float) -> float:
    return m * kappa ** ((1 - h) ** 2) + (1 - m) * kappa ** (h ** 2)


def best_h(m: float, kappa: float, n: int = 20001) -> float:
    """argmax of the merge objective on a fine grid of [0, 1] (brute force)."""
    hs = np.linspace(0.0, 1.0, n)
    vals = m * kappa ** ((1 - hs) ** 2) + (1 - m) * kappa ** (hs ** 2)
    return float(hs[np.argmax(vals)])


def merge_once(SV: np.ndarray, A: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """papers/001 Algorithm 1 with h by brute force; returns the merged (SV, A) (order free)."""
    i = int(np.argmin(np.abs(A)))
    best = (math.inf, -1, 0.0, 0.0)
    for j in range(len(A)):
        if j == i or A[j] * A[i] < 0:
            continue
        m = A[i] / (A[i] + A[j])
        kappa = math.exp(-gamma * float(((SV[i] - SV[j]) ** 2).sum()))
        h = best_h(m, kappa)
        a_z = A[i] * kappa ** ((1 - h) ** 2) + A[j] * kappa ** (h ** 2)
        wd = A[i] ** 2 + A[j] ** 2 - a_z ** 2 + 2 * A[i] * A[j] * kappa
        if wd < best[0]:
            best = (wd, j, h, a_z)
    _, j, h, a_z = best
    # Same storage layout as the kernel (z takes x_i's slot, the last vector fills x_j's), so
    # that ties in argmin |A| (frequent: Pegasos gives every new SV the same |A| = 1/(lambda t))
    # break the same way.
    SV, A = SV.copy(), A.copy()
    SV[i], A[i] = h * SV[i] + (1 - h) * SV[j], a_z
    SV[j], A[j] = SV[-1], A[-1]
    return SV[:-1], A[:-1]


def bsgd(X: np.ndarray, y: np.ndarray, order: np.ndarray, lam: float, gamma: float,
         budget: int) -> tuple[np.ndarray, np.ndarray]:
    """Budgeted Pegasos (papers/001 §2) one row at a time, merging with :func:`merge_once`."""
    SV = np.zeros((0, X.shape[1]))
    A = np.zeros(0)
    for t, i in enumerate(order, start=1):
        f = float(A @ np.exp(-gamma * ((SV - X[i]) ** 2).sum(1))) if len(A) else 0.0
        A = A * (1 - 1 / t)
        if y[i] * f < 1:
            SV = np.vstack([SV, X[i]])
            A = np.append(A, y[i] / (lam * t))
            if len(A) > budget:
                SV, A = merge_once(SV, A, gamma)
    return SV, A
