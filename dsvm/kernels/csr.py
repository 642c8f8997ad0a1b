"""Row primitives over a CSR block given as (indptr int64, indices int32, data float32/64).

Every primitive touches only the row's stored entries: O(nnz(x_i)) per call, whatever
n_features. Weights are addressed as ``W[k, j]`` of a 2-D (K, n_features) array (no row views,
see :mod:`dsvm.kernels.dense`). Indices inside a row must be unique (they are sorted and unique
in a :class:`CSRBlock`); a repeated index would make :func:`csr_row_axpy_sq` mis-measure the
norm change.
"""

from __future__ import annotations

import numpy as np

from dsvm.kernels._jit import njit_inline, njit_serial


@njit_inline
def csr_row_dot(indptr, indices, data, i, W, k):
    """x_i . W[k]  ->  float64."""
    acc = 0.0
    for jj in range(indptr[i], indptr[i + 1]):
        acc += np.float64(data[jj]) * np.float64(W[k, indices[jj]])
    return acc


@njit_inline
def csr_row_axpy(indptr, indices, data, i, W, k, c):
    """W[k] += c * x_i."""
    cf = W.dtype.type(c)
    for jj in range(indptr[i], indptr[i + 1]):
        W[k, indices[jj]] += cf * data[jj]


@njit_inline
def csr_row_axpy_sq(indptr, indices, data, i, W, k, c):
    """W[k] += c * x_i; returns the change of ||W[k]||^2 measured on the stored values."""
    cf = W.dtype.type(c)
    delta = 0.0
    for jj in range(indptr[i], indptr[i + 1]):
        j = indices[jj]
        old = W[k, j]
        new = old + cf * data[jj]
        W[k, j] = new
        # new^2 - old^2 as (new - old) (new + old): error relative to the change, not to ||u||^2
        delta += np.float64(new - old) * np.float64(new + old)
    return delta


@njit_inline
def csr_row_axpy_comp(indptr, indices, data, i, W, k, c, A, cv):
    """W[k] += c * x_i, and A[k] += cv * (the change actually stored in W[k]) (averages)."""
    cf = W.dtype.type(c)
    for jj in range(indptr[i], indptr[i + 1]):
        j = indices[jj]
        old = W[k, j]
        new = old + cf * data[jj]
        W[k, j] = new
        A[k, j] += cv * (np.float64(new) - np.float64(old))


@njit_inline
def csr_row_axpy_sq_comp(indptr, indices, data, i, W, k, c, A, cv):
    """W[k] += c * x_i, A[k] += cv * (the stored change); returns the change of ||W[k]||^2."""
    cf = W.dtype.type(c)
    delta = 0.0
    for jj in range(indptr[i], indptr[i + 1]):
        j = indices[jj]
        old = W[k, j]
        new = old + cf * data[jj]
        W[k, j] = new
        delta += np.float64(new - old) * np.float64(new + old)
        A[k, j] += cv * (np.float64(new) - np.float64(old))
    return delta


@njit_serial
def csr_max_row_sqnorm(indptr, indices, data):
    """max_i ||x_i||^2 over the rows (0.0 for an empty block or all-empty rows)."""
    best = 0.0
    for i in range(indptr.shape[0] - 1):
        acc = 0.0
        for jj in range(indptr[i], indptr[i + 1]):
            x = np.float64(data[jj])
            acc += x * x
        if acc > best:
            best = acc
    return best
