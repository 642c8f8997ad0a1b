"""Slow, obviously-correct NumPy references for the kernels (stumpy's ``naive.py`` idea).

Dense float64, row by row, no scaled weights, no lazy averages: each function spells out the
update rule that the corresponding kernel in :mod:`dsvm.kernels.passes` implements with tricks.
"""

from __future__ import annotations

import math

import numpy as np


def loss_ref(name: str, p: np.ndarray | float, y: np.ndarray | float, a: float = 0.0) -> np.ndarray:
    """loss(p, y) for y in {-1, +1} (real y for the regression losses), from the definitions.

    ``a``: mu of the smoothed hinge, epsilon of the epsilon-insensitive loss.
    """
    y = np.asarray(y, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    if name == "epsilon_insensitive":
        return np.maximum(0.0, np.abs(y - p) - a)
    if name == "squared":
        return (y - p) ** 2
    if name == "smoothed_hinge":
        # NESVM Eq. 5 with ||x||_inf = 1: u = median{(1 - y p) / mu, 0, 1}
        if a <= 0.0:
            return np.maximum(0.0, 1.0 - y * p)
        u = np.clip((1.0 - y * p) / a, 0.0, 1.0)
        return u * (1.0 - y * p) - 0.5 * a * u * u
    z = y * p
    if name == "hinge":
        return np.maximum(0.0, 1.0 - z)
    if name == "squared_hinge":
        return np.maximum(0.0, 1.0 - z) ** 2
    if name == "logistic":
        return np.logaddexp(0.0, -z)
    raise ValueError(name)


def dloss_ref(name: str, p: np.ndarray | float, y: np.ndarray | float,
              a: float = 0.0) -> np.ndarray:
    """d loss / d p (hinge: -y strictly inside the margin, 0 at and beyond the kink)."""
    y = np.asarray(y, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    if name == "epsilon_insensitive":
        return np.where(y - p > a, -1.0, np.where(y - p < -a, 1.0, 0.0))
    if name == "squared":
        return -2.0 * (y - p)
    if name == "smoothed_hinge":
        if a <= 0.0:
            return np.where(y * p < 1.0, -y, 0.0)
        return -y * np.clip((1.0 - y * p) / a, 0.0, 1.0)
    z = y * p
    if name == "hinge":
        return np.where(z < 1.0, -y, 0.0)
    if name == "squared_hinge":
        return np.where(z < 1.0, -2.0 * y * (1.0 - z), 0.0)
    if name == "logistic":
        return -y / (1.0 + np.exp(z))
    raise ValueError(name)


def targets_ref(codes: np.ndarray, n_outputs: int) -> np.ndarray:
    """(n, K) +-1 targets: binary code 1 -> +1; K > 1: one-vs-rest."""
    codes = np.asarray(codes)
    if n_outputs == 1:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(n_outputs)[None, :], 1.0, -1.0)


def _batches(order: np.ndarray, batch_size: int) -> list[np.ndarray]:
    return [order[s : s + batch_size] for s in range(0, len(order), batch_size)]


def pegasos_pass_ref(
    X: np.ndarray,
    codes: np.ndarray,
    sample_weight: np.ndarray | None,
    order: np.ndarray,
    W: np.ndarray,
    b: np.ndarray,
    *,
    alpha: float,
    t: float,
    batch_size: int,
    loss: str,
    fit_intercept: bool,
    radius: float,
    bias_bound: float = math.inf,
    intercept_eta_max: float = math.inf,
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Pegasos over ``order``; returns (W, b, t, progressive loss sum), all float64.

    The intercept steps with 1 / (alpha t + 1 / intercept_eta_max) and is clipped to
    [-bias_bound, bias_bound].
    """
    W, b, _, _, t, _, total = averaged_pegasos_pass_ref(
        X, codes, sample_weight, order, W, b, None, None, alpha=alpha, t=t,
        batch_size=batch_size, loss=loss, fit_intercept=fit_intercept, radius=radius,
        bias_bound=bias_bound, intercept_eta_max=intercept_eta_max,
    )
    return W, b, t, total


def averaged_pegasos_pass_ref(
    X: np.ndarray,
    codes: np.ndarray,
    sample_weight: np.ndarray | None,
    order: np.ndarray,
    W: np.ndarray,
    b: np.ndarray,
    A: np.ndarray | None,
    ab: np.ndarray | None,
    *,
    alpha: float,
    t: float,
    batch_size: int,
    loss: str,
    fit_intercept: bool,
    radius: float,
    bias_bound: float = math.inf,
    intercept_eta_max: float = math.inf,
    avg_start: float = 0.0,
    avg_power: float = 1.0,
    n_avg: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, float, float, float]:
    """Pegasos over ``order`` with a weighted average of its iterates when ``A`` is given.

    Returns (W, b, A, ab, t, n_avg, progressive loss sum). The iterate (W, b) after step t
    (after the projection and the intercept clip) weighs a_t = (t - avg_start) ** avg_power
    (0 for t <= avg_start), and the average is written as the explicit weighted sum

        A = (n_avg_0 A_0 + sum_t a_t W_t) / (n_avg_0 + sum_t a_t),   n_avg = n_avg_0 + sum_t a_t

    (not as a running mean), so it checks the kernel's lazy running mean independently.
    """
    X = np.asarray(X, dtype=np.float64)
    W = np.array(W, dtype=np.float64)
    b = np.array(b, dtype=np.float64)
    average = A is not None
    if average:
        num_w = n_avg * np.array(A, dtype=np.float64)
        num_b = n_avg * np.array(ab, dtype=np.float64)
    sw = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, np.float64)
    Y = targets_ref(codes, W.shape[0])
    total = 0.0
    for rows in _batches(order, batch_size):
        t += 1.0
        eta = 1.0 / (alpha * t)
        m = len(rows)
        # all margins of the batch at w_t first
        P = X[rows] @ W.T + b
        total += float(np.sum(sw[rows, None] * loss_ref(loss, P, Y[rows])))
        Gr = sw[rows, None] * dloss_ref(loss, P, Y[rows])  # (m, K)
        W = max(0.0, 1.0 - eta * alpha) * W - (eta / m) * (Gr.T @ X[rows])
        if fit_intercept:
            eta_b = 1.0 / (alpha * t + 1.0 / intercept_eta_max)
            b = np.clip(b - eta_b * Gr.sum(axis=0) / m, -bias_bound, bias_bound)
        for k in range(W.shape[0]):
            norm = np.linalg.norm(W[k])
            if norm > radius:
                W[k] *= radius / norm
        if average and t > avg_start:
            a_t = (t - avg_start) ** avg_power
            num_w = num_w + a_t * W
            num_b = num_b + a_t * b
            n_avg += a_t
    if average and n_avg > 0:
        A, ab = num_w / n_avg, num_b / n_avg
    elif average:
        A, ab = np.array(A, dtype=np.float64), np.array(ab, dtype=np.float64)
    return W, b, A, ab, t, n_avg, total


def sgd_pass_ref(
    X: np.ndarray,
    codes: np.ndarray,
    sample_weight: np.ndarray | None,
    order: np.ndarray,
    W: np.ndarray,
    b: np.ndarray,
    A: np.ndarray | None,
    ab: np.ndarray | None,
    *,
    alpha: float,
    t: float,
    batch_size: int,
    loss: str,
    fit_intercept: bool,
    eta0: float,
    power: float,
    average: bool,
    avg_start: float = 0.0,
    n_avg: float = 0.0,
    intercept_rate: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, float, float, float]:
    """(Averaged) SGD over ``order``; returns (W, b, A, ab, t, n_avg, progressive loss sum)."""
    X = np.asarray(X, dtype=np.float64)
    W = np.array(W, dtype=np.float64)
    b = np.array(b, dtype=np.float64)
    if average:
        A = np.array(A, dtype=np.float64)
        ab = np.array(ab, dtype=np.float64)
    sw = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, np.float64)
    Y = targets_ref(codes, W.shape[0])
    total = 0.0
    for rows in _batches(order, batch_size):
        eta = eta0 / (1.0 + alpha * eta0 * t) ** power
        t += 1.0
        m = len(rows)
        P = X[rows] @ W.T + b
        total += float(np.sum(sw[rows, None] * loss_ref(loss, P, Y[rows])))
        Gr = sw[rows, None] * dloss_ref(loss, P, Y[rows])
        W = max(0.0, 1.0 - eta * alpha) * W - (eta / m) * (Gr.T @ X[rows])
        if fit_intercept:
            b = b - intercept_rate * eta * Gr.sum(axis=0) / m
        if average and t > avg_start:
            n_avg += 1.0
            mu = 1.0 / n_avg
            A = A + mu * (W - A)  # running mean of the iterates since the start
            ab = ab + mu * (b - ab)
    return W, b, A, ab, t, n_avg, total


def primal_objective_ref(
    W: np.ndarray, b: np.ndarray, X: np.ndarray, codes: np.ndarray, loss: str, alpha: float
) -> float:
    """alpha/2 ||W||_F^2 + mean over rows of the loss summed over outputs."""
    X = np.asarray(X, dtype=np.float64)
    P = X @ np.asarray(W, np.float64).T + np.asarray(b, np.float64)
    L = loss_ref(loss, P, targets_ref(codes, W.shape[0]))
    return float(0.5 * alpha * np.sum(np.asarray(W, np.float64) ** 2) + L.sum(axis=1).mean())
