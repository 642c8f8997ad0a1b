"""Decision values of K models on CSR rows, for scoring a grid's held-out rows (#27).

Each stored entry of a row reads one weight of each of the K models, from K rows of a
(K, n_features) float64 array: K cache misses per entry when the models are large (2^22
features), which scipy's product (after cutting the models to the touched columns,
:func:`dsvm.solvers.objective.touched_columns`) takes one after the other. Here the weights
a row will read are prefetched a few rows ahead, as the pass kernels do
(:mod:`dsvm.kernels.prefetch`), so that the misses overlap. Each model's products are
summed in the row's entry order, from 0.0, in float64: the sums scipy's product makes.
"""

from __future__ import annotations

from dsvm.kernels._jit import njit_serial
from dsvm.kernels.prefetch import PREFETCH_DISTANCE
from dsvm.kernels.rows import prefetch_weights


@njit_serial
def csr_decisions(X, coef, out):
    """out[i, k] = x_i . coef[k] for every row i of X.

    X : CSR triple (indptr int64 (n + 1,), indices int32 (nnz,), data float64 (nnz,)).
    coef : (K, n_features) float64. out : (n, K) float64, written.
    """
    indptr, indices, data = X
    n = indptr.shape[0] - 1
    K = coef.shape[0]
    for i in range(n):
        ahead = i + PREFETCH_DISTANCE
        if ahead < n:
            for k in range(K):
                prefetch_weights(X, ahead, coef, k)
        for k in range(K):
            out[i, k] = 0.0
        # (k innermost: each model's sum keeps the entries' order whatever the compiler
        # vectorises)
        for jj in range(indptr[i], indptr[i + 1]):
            x = data[jj]
            j = indices[jj]
            for k in range(K):
                out[i, k] += x * coef[k, j]
