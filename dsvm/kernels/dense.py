"""Row primitives over a dense C-contiguous block X (n_rows, n_features), float32 or float64.

Each takes the row index i and the output index k of a 2-D weight array W (K, n_features),
and indexes both 2-D arrays directly: slicing ``X[i]`` or ``W[k]`` would build a view whose
reference count numba updates with atomic calls on every row.

Dots and axpys run in the data's own dtype (for float32: 8 lanes per AVX2 register instead of
4, and no conversions), with the ``reassoc`` fast-math flag from :mod:`dsvm._config` letting
LLVM vectorise the reductions. A float32 row dot therefore carries a relative rounding error of
about sqrt(n_features) * 6e-8, far below the noise of a stochastic step.
"""

from __future__ import annotations

import numpy as np

from dsvm.kernels._jit import njit_inline, njit_serial


@njit_inline
def dense_row_dot(X, i, W, k):
    """x_i . W[k]  ->  float64 (accumulated in X's dtype)."""
    acc = X.dtype.type(0)
    for j in range(X.shape[1]):
        acc += X[i, j] * W[k, j]
    return np.float64(acc)


@njit_inline
def dense_row_axpy(X, i, W, k, c):
    """W[k] += c * x_i, in W's dtype."""
    cf = W.dtype.type(c)
    for j in range(X.shape[1]):
        W[k, j] += cf * X[i, j]


@njit_inline
def dense_row_axpy_sq(X, i, W, k, c):
    """W[k] += c * x_i; returns the change of ||W[k]||^2 measured on the stored values.

    new^2 - old^2 is summed as (new - old) * (new + old), in W's dtype: the rounding error is
    then relative to the (small) change, not to ||W[k]||^2, and the loop vectorises without
    conversions.
    """
    cf = W.dtype.type(c)
    delta = W.dtype.type(0)
    for j in range(X.shape[1]):
        old = W[k, j]
        new = old + cf * X[i, j]
        W[k, j] = new
        delta += (new - old) * (new + old)
    return np.float64(delta)


@njit_inline
def dense_row_axpy_comp(X, i, W, k, c, A, cv):
    """W[k] += c * x_i, and A[k] += cv * (the change actually stored in W[k]) (averaged SGD).

    Measuring the change on the stored values keeps SGD's lazily represented average
    beta * A[k] + gamma * W[k] exact when W is float32 (see dsvm.kernels.weights).
    """
    cf = W.dtype.type(c)
    for j in range(X.shape[1]):
        old = W[k, j]
        new = old + cf * X[i, j]
        W[k, j] = new
        A[k, j] += cv * (np.float64(new) - np.float64(old))


@njit_inline
def dense_row_axpy_sq_comp(X, i, W, k, c, A, cv):
    """:func:`dense_row_axpy_sq` and :func:`dense_row_axpy_comp` in one sweep (averaged Pegasos):
    W[k] += c * x_i, A[k] += cv * (the stored change); returns the change of ||W[k]||^2."""
    cf = W.dtype.type(c)
    delta = W.dtype.type(0)
    for j in range(X.shape[1]):
        old = W[k, j]
        new = old + cf * X[i, j]
        W[k, j] = new
        delta += (new - old) * (new + old)
        A[k, j] += cv * (np.float64(new) - np.float64(old))
    return np.float64(delta)


@njit_serial
def dense_max_row_sqnorm(X):
    """max_i ||x_i||^2 over the rows of X, in float64 (0.0 for an empty block)."""
    best = 0.0
    for i in range(X.shape[0]):
        acc = 0.0
        for j in range(X.shape[1]):
            x = np.float64(X[i, j])
            acc += x * x
        if acc > best:
            best = acc
    return best
