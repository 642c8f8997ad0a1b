"""Layout-generic row primitives: one pass kernel serves dense and CSR blocks.

``X`` is either a dense (n_rows, n_features) C-contiguous array or a CSR triple
``(indptr, indices, data)``. Weights are a 2-D (K, n_features) array addressed by output k.
The dispatch happens at compile time through numba ``overload``s (inlined), so each pass kernel
is compiled once per layout and dtype and the layout costs nothing at run time. The plain-Python
bodies below are what runs under ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from dsvm.kernels._jit import overload_options
from dsvm.kernels.csr import (
    csr_max_row_sqnorm,
    csr_row_axpy,
    csr_row_axpy_comp,
    csr_row_axpy_sq,
    csr_row_axpy_sq_comp,
    csr_row_dot,
)
from dsvm.kernels.dense import (
    dense_max_row_sqnorm,
    dense_row_axpy,
    dense_row_axpy_comp,
    dense_row_axpy_sq,
    dense_row_axpy_sq_comp,
    dense_row_dot,
)
from dsvm.kernels.prefetch import prefetch_at, prefetch_range


def row_dot(X, i, W, k):
    """x_i . W[k] as float64."""
    if isinstance(X, tuple):
        return csr_row_dot(X[0], X[1], X[2], i, W, k)
    return dense_row_dot(X, i, W, k)


def row_axpy(X, i, W, k, c):
    """W[k] += c * x_i."""
    if isinstance(X, tuple):
        csr_row_axpy(X[0], X[1], X[2], i, W, k, c)
    else:
        dense_row_axpy(X, i, W, k, c)


def row_axpy_sq(X, i, W, k, c):
    """W[k] += c * x_i; returns the change of ||W[k]||^2."""
    if isinstance(X, tuple):
        return csr_row_axpy_sq(X[0], X[1], X[2], i, W, k, c)
    return dense_row_axpy_sq(X, i, W, k, c)


def row_axpy_comp(X, i, W, k, c, A, cv):
    """W[k] += c * x_i and A[k] += cv * (the change stored in W[k])."""
    if isinstance(X, tuple):
        csr_row_axpy_comp(X[0], X[1], X[2], i, W, k, c, A, cv)
    else:
        dense_row_axpy_comp(X, i, W, k, c, A, cv)


def row_axpy_sq_comp(X, i, W, k, c, A, cv):
    """W[k] += c * x_i and A[k] += cv * (the change stored in W[k]); returns the change of
    ||W[k]||^2."""
    if isinstance(X, tuple):
        return csr_row_axpy_sq_comp(X[0], X[1], X[2], i, W, k, c, A, cv)
    return dense_row_axpy_sq_comp(X, i, W, k, c, A, cv)


def max_row_sqnorm(X):
    """max_i ||x_i||^2 (0.0 when there are no rows)."""
    if isinstance(X, tuple):
        return csr_max_row_sqnorm(X[0], X[1], X[2])
    return dense_max_row_sqnorm(X)


def prefetch_row(X, i):
    """Hint that row i will be read soon (a no-op without the JIT)."""


def prefetch_item(a, i):
    """Hint that ``a[i]`` of a 1-D array will be read soon (a no-op without the JIT)."""


def prefetch_weights(X, i, W, k):
    """Hint that the entries of ``W[k]`` that row i touches will be read soon (CSR rows only:
    a dense row reads all of ``W[k]``, which stays in cache; a no-op without the JIT)."""


def _is_csr(X):
    return isinstance(X, types.BaseTuple)


@overload(row_dot, **overload_options())
def _ol_row_dot(X, i, W, k):
    if _is_csr(X):
        return lambda X, i, W, k: csr_row_dot(X[0], X[1], X[2], i, W, k)
    return lambda X, i, W, k: dense_row_dot(X, i, W, k)


@overload(row_axpy, **overload_options())
def _ol_row_axpy(X, i, W, k, c):
    if _is_csr(X):
        return lambda X, i, W, k, c: csr_row_axpy(X[0], X[1], X[2], i, W, k, c)
    return lambda X, i, W, k, c: dense_row_axpy(X, i, W, k, c)


@overload(row_axpy_sq, **overload_options())
def _ol_row_axpy_sq(X, i, W, k, c):
    if _is_csr(X):
        return lambda X, i, W, k, c: csr_row_axpy_sq(X[0], X[1], X[2], i, W, k, c)
    return lambda X, i, W, k, c: dense_row_axpy_sq(X, i, W, k, c)


@overload(row_axpy_comp, **overload_options())
def _ol_row_axpy_comp(X, i, W, k, c, A, cv):
    if _is_csr(X):
        return lambda X, i, W, k, c, A, cv: csr_row_axpy_comp(
            X[0], X[1], X[2], i, W, k, c, A, cv
        )
    return lambda X, i, W, k, c, A, cv: dense_row_axpy_comp(X, i, W, k, c, A, cv)


@overload(row_axpy_sq_comp, **overload_options())
def _ol_row_axpy_sq_comp(X, i, W, k, c, A, cv):
    if _is_csr(X):
        return lambda X, i, W, k, c, A, cv: csr_row_axpy_sq_comp(
            X[0], X[1], X[2], i, W, k, c, A, cv
        )
    return lambda X, i, W, k, c, A, cv: dense_row_axpy_sq_comp(X, i, W, k, c, A, cv)


@overload(max_row_sqnorm, **overload_options())
def _ol_max_row_sqnorm(X):
    if _is_csr(X):
        return lambda X: csr_max_row_sqnorm(X[0], X[1], X[2])
    return lambda X: dense_max_row_sqnorm(X)


@overload(prefetch_row, **overload_options())
def _ol_prefetch_row(X, i):
    if _is_csr(X):

        def impl(X, i):
            lo = X[0][i]
            nnz = X[0][i + 1] - lo
            prefetch_range(X[1], lo, nnz)
            prefetch_range(X[2], lo, nnz)

        return impl
    return lambda X, i: prefetch_range(X, i * X.shape[1], X.shape[1])


@overload(prefetch_item, **overload_options())
def _ol_prefetch_item(a, i):
    return lambda a, i: prefetch_range(a, i, 1)


@overload(prefetch_weights, **overload_options())
def _ol_prefetch_weights(X, i, W, k):
    if _is_csr(X):

        def impl(X, i, W, k):
            # W[k, j] for the row's indices j: each a likely miss in a large model (2^22
            # features are 16-32 MB), gathered at random; issued a few rows ahead they overlap
            # with the current rows' arithmetic instead of stalling it.
            # (any layout: W may be the strided view of kernels.pairs)
            indices = X[1]
            for jj in range(X[0][i], X[0][i + 1]):
                prefetch_at(W, k, indices[jj])

        return impl
    return lambda X, i, W, k: None


# -- a row's stored entries, for kernels that walk them (NESVM, DCD, BSGD) ------------------------
def row_count(X):
    """The number of rows of a block."""
    if isinstance(X, tuple):
        return X[0].shape[0] - 1
    return X.shape[0]


def row_span(X, i):
    """(lo, hi): row i's stored entries are the positions jj in range(lo, hi) (dense: 0..d)."""
    if isinstance(X, tuple):
        return X[0][i], X[0][i + 1]
    return 0, X.shape[1]


def row_entry(X, i, jj):
    """(j, x_ij as float64) of the entry at position jj of row i (see :func:`row_span`)."""
    if isinstance(X, tuple):
        return X[1][jj], np.float64(X[2][jj])
    return jj, np.float64(X[i, jj])


def row_densify(X, i, x):
    """x[:] = row i as float64 (zeros where it stores none); returns ||x_i||^2."""
    x_sq = 0.0
    if isinstance(X, tuple):
        x[:] = 0.0
        for jj in range(X[0][i], X[0][i + 1]):
            v = np.float64(X[2][jj])
            x[X[1][jj]] = v
            x_sq += v * v
        return x_sq
    for c in range(X.shape[1]):
        x[c] = np.float64(X[i, c])
        x_sq += x[c] * x[c]
    return x_sq


@overload(row_count, **overload_options())
def _ol_row_count(X):
    if _is_csr(X):
        return lambda X: X[0].shape[0] - 1
    return lambda X: X.shape[0]


@overload(row_span, **overload_options())
def _ol_row_span(X, i):
    if _is_csr(X):
        return lambda X, i: (X[0][i], X[0][i + 1])
    return lambda X, i: (0, X.shape[1])


@overload(row_entry, **overload_options())
def _ol_row_entry(X, i, jj):
    if _is_csr(X):
        return lambda X, i, jj: (X[1][jj], np.float64(X[2][jj]))
    return lambda X, i, jj: (jj, np.float64(X[i, jj]))


@overload(row_densify, **overload_options())
def _ol_row_densify(X, i, x):
    if _is_csr(X):

        def impl_csr(X, i, x):
            indptr, indices, data = X
            x[:] = 0.0
            x_sq = 0.0
            for jj in range(indptr[i], indptr[i + 1]):
                v = np.float64(data[jj])
                x[indices[jj]] = v
                x_sq += v * v
            return x_sq

        return impl_csr

    def impl_dense(X, i, x):
        x_sq = 0.0
        for c in range(X.shape[1]):
            x[c] = np.float64(X[i, c])
            x_sq += x[c] * x[c]
        return x_sq

    return impl_dense
