"""A window of in-memory dense chunks is passed as one view of the input (no copy): the same
rows in the same order as the concatenated window, so the same state bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm.data.blocks import CSRBlock, DenseBlock
from dsvm.solvers.passes import pass_over_window, span_of_views
from dsvm.solvers.pegasos import PegasosSolver
from dsvm.solvers.sgd import SGDSolver


def _window(X, y, sw, chunks, rows, copy):
    out = []
    for c in chunks:
        sl = slice(c * rows, (c + 1) * rows)
        Xc = X[sl].copy() if copy else X[sl]
        out.append((c, DenseBlock(Xc, y[sl], None if sw is None else sw[sl])))
    return out


@pytest.mark.parametrize("solver", [PegasosSolver(alpha=1e-3), SGDSolver(alpha=1e-3, eta0=0.1)])
@pytest.mark.parametrize("weighted", [False, True])
def test_views_of_one_array_train_like_the_concatenated_window(solver, weighted):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(700, 6)).astype(np.float32)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=700) > 0, 1.0, -1.0)
    sw = rng.uniform(0.5, 2.0, size=700) if weighted else None
    chunks = [5, 1, 3]  # not adjacent, not in order: the span covers rows of chunks 2 and 4
    views = _window(X, y, sw, chunks, 100, copy=False)
    assert span_of_views([b for _, b in views], [np.zeros(100, np.int32)] * 3) is not None
    assert span_of_views([b for _, b in _window(X, y, sw, chunks, 100, copy=True)],
                         [np.zeros(100, np.int32)] * 3) is None
    states = []
    for copy in (False, True):
        state = solver.init_state(6, 1, np.float32)
        stats = pass_over_window(solver, state, _window(X, y, sw, chunks, 100, copy),
                                 classes=np.array([-1.0, 1.0]), epoch=2, seed=7,
                                 where=lambda c: f"chunk {c}")
        states.append((state, stats))
    (a, sa), (b, sb) = states
    assert sa.n_rows == sb.n_rows == 300 and sa.loss_sum == sb.loss_sum
    assert sa.weight_sum == pytest.approx(sb.weight_sum, rel=1e-15)
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.intercept, b.intercept)
    np.testing.assert_array_equal(a.avg_coef, b.avg_coef)


def _csr_window(source, chunks, copy):
    """The window of ``source``'s 100-row chunks ``chunks``: its views (one span) or copies
    (no span)."""
    window = []
    for c in chunks:
        b = source.read_chunk(c)
        if copy:
            b = CSRBlock(b.indptr.copy(), b.indices.copy(), b.data.copy(), b.y,
                         b.n_features, b.sample_weight)
        window.append((c, b))
    codes = [np.zeros(100, np.int32)] * len(chunks)
    assert (span_of_views([b for _, b in window], codes) is None) == copy
    return window


@pytest.mark.parametrize("solver", [PegasosSolver(alpha=1e-3), SGDSolver(alpha=1e-3, eta0=0.1)])
@pytest.mark.parametrize("weighted", [False, True])
def test_csr_views_of_one_matrix_train_like_the_concatenated_window(solver, weighted):
    """In-memory CSR chunks (views of the caller's indices and data, from ArraySource) are
    passed as one span: same rows, same order, same state bit for bit as the copies."""
    import scipy.sparse as sp

    from dsvm.data.sources import ArraySource

    rng = np.random.default_rng(1)
    X = sp.random(700, 50, density=0.1, format="csr", dtype=np.float32, random_state=rng)
    keep = np.ones(700, np.float32)
    keep[100:200] = 0.0  # chunk 1 is all empty rows: no entries between chunks 2 and 0
    X = sp.csr_matrix(sp.diags(keep) @ X)
    X.eliminate_zeros()
    y = np.where(rng.normal(size=700) > 0, 1.0, -1.0)
    sw = rng.uniform(0.5, 2.0, size=700) if weighted else None
    source = ArraySource(X, y, sw, chunk_rows=100)
    chunks = [5, 1, 3, 2, 6]  # chunks 0 and 4 lie between them: rows the span never visits
    states = []
    for copy in (False, True):
        window = _csr_window(source, chunks, copy)
        state = solver.init_state(50, 1, np.float32)
        stats = pass_over_window(solver, state, window, classes=np.array([-1.0, 1.0]),
                                 epoch=2, seed=7, where=lambda c: f"chunk {c}")
        states.append((state, stats))
    (a, sa), (b, sb) = states
    assert sa.n_rows == sb.n_rows == 500 and sa.loss_sum == sb.loss_sum
    assert sa.weight_sum == pytest.approx(sb.weight_sum, rel=1e-15)
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.intercept, b.intercept)
    np.testing.assert_array_equal(a.avg_coef, b.avg_coef)


def test_csr_views_of_raveled_arrays_train_like_the_concatenated_window():
    """A CSR matrix whose indices and data are raveled views of (n_rows, nnz) arrays (how
    fixed-width rows are often built): the span's entries are taken from the flat view of
    those arrays, not from their rows (a typing error in the pass kernel before)."""
    import scipy.sparse as sp

    from dsvm.data.sources import ArraySource

    rng = np.random.default_rng(2)
    n, d, nnz = 500, 64, 5
    indices = np.sort(rng.choice(d, size=(n, nnz)), axis=1).astype(np.int32)
    for i in range(n):  # distinct columns in each row
        indices[i] = np.sort(rng.choice(d, size=nnz, replace=False))
    data = rng.random((n, nnz)).astype(np.float32)
    X = sp.csr_matrix((data.ravel(), indices.ravel(), np.arange(0, n * nnz + 1, nnz)),
                      shape=(n, d))
    assert X.indices.base is indices and X.data.base is data
    y = np.where(rng.normal(size=n) > 0, 1.0, -1.0)
    source = ArraySource(X, y, None, chunk_rows=100)
    solver = PegasosSolver(alpha=1e-3)
    states = []
    for copy in (False, True):
        window = _csr_window(source, [3, 0, 2], copy)
        state = solver.init_state(d, 1, np.float32)
        pass_over_window(solver, state, window, classes=np.array([-1.0, 1.0]), epoch=1,
                         seed=3, where=lambda c: f"chunk {c}")
        states.append(state)
    np.testing.assert_array_equal(states[0].coef, states[1].coef)
    np.testing.assert_array_equal(states[0].avg_coef, states[1].avg_coef)
