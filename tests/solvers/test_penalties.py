"""FOLOS penalties through the SGD solver and the estimator: exact zeros, the L2 limit,
validation, and sparsity on a slice of real data."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm import SVMClassifier
from dsvm.data.blocks import block_from_arrays
from dsvm.solvers.sgd import SGDSolver
from tests.conftest import load_libsvm


def test_l1_ratio_zero_elasticnet_equals_plain_sgd_without_average(blobs):
    X, y = blobs
    codes = (y > 0).astype(np.int32)
    block = block_from_arrays(X, codes)
    out = []
    for penalty in ("l2", "elasticnet"):
        s = SGDSolver(alpha=1e-2, penalty=penalty, l1_ratio=0.0, average=False, eta0=0.1)
        st = s.init_state(X.shape[1], 1, np.float64)
        s.run_block(st, block, codes, np.arange(len(X)))
        out.append(st.coef)
    np.testing.assert_allclose(out[1], out[0], rtol=1e-10, atol=1e-12)


def test_penalty_validation():
    with pytest.raises(ValueError, match=r"The 'penalty' parameter of SGDSolver must be a str"):
        SGDSolver(penalty="l3")
    with pytest.raises(ValueError, match=r"The 'l1_ratio' parameter of SGDSolver must be a "
                                         r"float in the range \[0.0, 1.0\]. Got 2 instead."):
        SGDSolver(penalty="elasticnet", l1_ratio=2)
    with pytest.raises(ValueError, match=r"The 'l1_ratio' parameter of SVMClassifier"):
        SVMClassifier(l1_ratio=-0.5).fit(np.eye(4), [0, 1, 0, 1])


@pytest.mark.realdata
def test_l1_on_a9a_slice_gives_exact_zeros_at_l2_accuracy():
    """8,000 rows of a9a, 4,000 test rows: L1 (alpha = 64/n) zeroes >= 25% of the weights,
    accuracy within 1.5 points of L2 (alpha = 1/n); the estimator reports the L1 objective."""
    X, y = load_libsvm("a9a/a9a.xz", n_features=123)
    Xt, yt = load_libsvm("a9a/a9a.t.xz", n_features=123)
    X, y, Xt, yt = X[:8000], y[:8000], Xt[:4000], yt[:4000]
    n = X.shape[0]
    kw = dict(solver="sgd", max_epochs=15, tol=None, random_state=0)
    l2 = SVMClassifier(alpha=1.0 / n, **kw).fit(X, y)
    l1 = SVMClassifier(alpha=64.0 / n, penalty="l1", **kw).fit(X, y)
    zeros = np.mean(l1.coef_ == 0.0)
    assert zeros >= 0.25, zeros
    assert l1.score(Xt, yt) >= l2.score(Xt, yt) - 0.015, (l1.score(Xt, yt), l2.score(Xt, yt))
    ev = l1.evaluate(X, y)
    w = l1.coef_.ravel()
    hinge = np.maximum(0.0, 1.0 - y * (X @ w + l1.intercept_[0])).mean()
    assert ev["objective"] == pytest.approx(64.0 / n * np.abs(w).sum() + hinge, rel=1e-9)
