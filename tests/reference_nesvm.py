"""Slow, obviously-correct NumPy references for NESVM's pass (row by row, dense float64).

Each quantity is written straight from the paper's equations (Eq. 6, 10, 16, 54, 55) for the
augmented rows x~ = [x, 1] when there is a bias.
"""

from __future__ import annotations

import numpy as np


def smoothed_hinge_ref(r: float, a: float, mu: float) -> tuple[float, float]:
    """(u, h_mu) for residual r = 1 - margin, a = ||x~||_inf: u = median{r/(mu a), 0, 1}."""
    if a == 0.0:
        u = 1.0 if r > 0 else 0.0
    else:
        u = float(np.median([r / (mu * a), 0.0, 1.0]))
    # h_mu = max_u u r - mu/2 a u^2 evaluated at the maximiser (Eq. 5)
    return u, u * r - 0.5 * mu * a * u * u


def nesvm_pass_ref(X, codes, sample_weight, P, B, loss, mu, bias, n_outputs):
    """(G, gb, sums, stats, colstats) as the kernels compute them (see dsvm.kernels.nesvm)."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    K = n_outputs
    n_points = P.shape[0] // K
    G = np.zeros((K, d))
    gb = np.zeros(K)
    sums = np.zeros((P.shape[0], 2))
    stats = np.zeros(4)
    colstats = np.zeros((2, d + 1))
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    for i in range(n):
        xt = np.append(X[i], bias)
        a = np.abs(xt).max()
        for p in range(n_points):
            for k in range(K):
                y = (1.0 if codes[i] == 1 else -1.0) if K == 1 else (1.0 if codes[i] == k else -1.0)
                q = p * K + k
                m = y * (X[i] @ P[q] + B[q])
                r = 1.0 - m
                if loss == "hinge":
                    u, h = smoothed_hinge_ref(r, a, mu)
                    true = max(0.0, r)
                else:
                    u, h, true = 2.0 * r, r * r, r * r
                sums[q, 0] += sw[i] * h
                sums[q, 1] += sw[i] * true
                if p == 0:
                    G[k] -= sw[i] * y * u * X[i]
                    gb[k] -= sw[i] * y * u * bias
        stats += [sw[i], 1.0, sw[i] * (xt @ xt) / a if a > 0 else 0.0, sw[i] * (xt @ xt)]
        if a > 0:
            l1 = np.abs(xt).sum()
            colstats[0] += sw[i] * np.abs(xt) * l1 / a
            colstats[1] += sw[i] * np.abs(xt) * l1
    return G, gb, sums, stats, colstats
