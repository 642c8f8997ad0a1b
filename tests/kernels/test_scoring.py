"""csr_decisions (a grid's held rows scored on CSR rows, dsvm.kernels.scoring) against the
plain product, and grid_counts on CSR rows against the same rows dense."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.data.blocks import CSRBlock, DenseBlock
from dsvm.kernels.scoring import csr_decisions
from dsvm.solvers.evaluation import grid_counts, grid_decisions


def csr_rows(n: int, d: int, seed: int) -> sp.csr_matrix:
    """Rows of 0 to 6 entries (some empty), float32 values."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=3 / d, format="csr", dtype=np.float32, random_state=rng)
    for i in range(0, n, 7):  # empty rows
        X.data[X.indptr[i]:X.indptr[i + 1]] = 0.0
    X.eliminate_zeros()
    return X


def test_decisions_are_the_products_of_every_model():
    X = csr_rows(200, 5000, seed=0)
    coef = np.random.default_rng(1).normal(size=(5, 5000))
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(np.float64))
    for a in (*args, coef):
        a.flags.writeable = False  # (read-only inputs, as the grid hands them)
    out = np.full((200, 5), np.nan)
    csr_decisions(args, coef, out)
    np.testing.assert_allclose(out, X.astype(np.float64) @ coef.T, rtol=1e-12, atol=1e-12)
    assert np.all(out[::7] == 0.0)


def test_grid_counts_on_csr_rows_are_those_of_the_dense_rows():
    X = csr_rows(300, 400, seed=2)
    rng = np.random.default_rng(3)
    y = np.where(rng.random(300) > 0.5, 1.0, -1.0)
    coef, intercept = rng.normal(size=(6, 400)), rng.normal(size=6)  # 3 candidates x 2
    classes = np.array([-1.0, 1.0])
    csr = CSRBlock(indptr=X.indptr.astype(np.int64), indices=X.indices, data=X.data, y=y,
                   n_features=400)
    dense = DenseBlock(X=X.toarray(), y=y)
    np.testing.assert_allclose(grid_decisions(coef, intercept, csr),
                               grid_decisions(coef, intercept, dense), rtol=1e-12, atol=1e-12)
    got = grid_counts(csr, coef[::2], intercept[::2], 3, classes, "hinge", "rows")
    expected = grid_counts(dense, coef[::2], intercept[::2], 3, classes, "hinge", "rows")
    assert len(got.candidates) == 3
    for a, b in zip(got.candidates, expected.candidates):
        assert (a.n_correct, a.n_rows, a.weight_sum) == (b.n_correct, b.n_rows, b.weight_sum)
        assert a.loss_sum == pytest.approx(b.loss_sum, rel=1e-12)
        assert 0 < a.n_correct < a.n_rows
    np.testing.assert_array_equal(got.class_rows, expected.class_rows)
