"""Kernel feature maps applied to one row block: random Fourier features and RBF kernel rows.

Both write a dense float block whose width is the number of components, for dense rows
``X (n, d)`` or CSR rows ``(indptr, indices, data)``. Sums are accumulated in a float64 row buffer
whatever the input and output dtypes, so a float32 block gives the same features up to the final
rounding.

* ``rff_*``: phi(x)_k = scale * cos(x . W[:, k] + offset[k])  (papers/000 Eq. 8, scale = sqrt(2/D)).
* ``rbf_*``: K[i, j] = exp(-gamma ||x_i - L_j||^2) against landmarks L (Nystroem's Psi_{.S},
  and the kernel expansion of budgeted SGD models), with ||x - l||^2 = ||x||^2 + ||l||^2 - 2 x.l
  clipped at 0 (rounding can make it slightly negative for x == l).
"""

from __future__ import annotations

import math

import numpy as np

from dsvm.kernels._jit import njit_serial


@njit_serial
def rff_dense(X, W, offset, scale, out):
    """out[i] = scale * cos(X[i] @ W + offset) for a dense block (W: (d, D) float64)."""
    n, d = X.shape
    D = W.shape[1]
    acc = np.empty(D, dtype=np.float64)
    for i in range(n):
        acc[:] = offset
        for j in range(d):
            xij = np.float64(X[i, j])
            if xij != 0.0:  # rows of sparse-ish dense data skip their zeros
                for k in range(D):
                    acc[k] += xij * W[j, k]
        for k in range(D):
            out[i, k] = scale * math.cos(acc[k])


@njit_serial
def rff_csr(indptr, indices, data, W, offset, scale, out):
    """The same as :func:`rff_dense` for CSR rows: O(nnz(x_i) * D) per row."""
    n = indptr.shape[0] - 1
    D = W.shape[1]
    acc = np.empty(D, dtype=np.float64)
    for i in range(n):
        acc[:] = offset
        for jj in range(indptr[i], indptr[i + 1]):
            xij = np.float64(data[jj])
            j = indices[jj]
            for k in range(D):
                acc[k] += xij * W[j, k]
        for k in range(D):
            out[i, k] = scale * math.cos(acc[k])


@njit_serial
def rbf_dense(X, L, L_sq, gamma, out):
    """out[i, j] = exp(-gamma ||X[i] - L[j]||^2); L (s, d) float64, L_sq its squared row norms."""
    n, d = X.shape
    s = L.shape[0]
    row = np.empty(d, dtype=np.float64)
    for i in range(n):
        x_sq = 0.0
        for k in range(d):
            row[k] = np.float64(X[i, k])
            x_sq += row[k] * row[k]
        for j in range(s):
            dot = 0.0
            for k in range(d):
                dot += row[k] * L[j, k]
            out[i, j] = math.exp(-gamma * max(x_sq + L_sq[j] - 2.0 * dot, 0.0))


@njit_serial
def rbf_csr(indptr, indices, data, L, L_sq, gamma, out):
    """The same as :func:`rbf_dense` for CSR rows: O(nnz(x_i) * s) per row."""
    n = indptr.shape[0] - 1
    s = L.shape[0]
    for i in range(n):
        x_sq = 0.0
        for jj in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[jj])
            x_sq += v * v
        for j in range(s):
            dot = 0.0
            for jj in range(indptr[i], indptr[i + 1]):
                dot += np.float64(data[jj]) * L[j, indices[jj]]
            out[i, j] = math.exp(-gamma * max(x_sq + L_sq[j] - 2.0 * dot, 0.0))
