"""A grid's candidates run over several windows in a row (CandidateGrid.run_windows, W kept
paired between the passes: dsvm.solvers.objective.pairs_kept) against the grid's pass
window by window: the same states and statistics, bit for bit (the pairs are copies)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm import SVMClassifierCV
from dsvm.data.blocks import CSRBlock
from dsvm.solvers.base import PassStats
from dsvm.solvers.grid import ACTIVE, CandidateGrid, grid_solvers
from dsvm.solvers.objective import pairs_kept, run_pass_kernel
from dsvm.solvers.passes import WindowRows
from dsvm.solvers.pegasos import PegasosSolver
from dsvm.solvers.sgd import SGDSolver

D, ROWS, NNZ = 3000, 120, 6  # many features, small windows: several fit one's budget


def csr_windows(n_windows: int, n_classes: int, seed: int = 0) -> list[WindowRows]:
    """Windows of CSR rows (float32, NNZ sorted columns out of D) with class codes from a
    random teacher, each with its own row order (a permutation, then a subset)."""
    rng = np.random.default_rng(seed)
    teacher = rng.normal(size=(D, n_classes))
    windows = []
    for w in range(n_windows):
        cols = np.sort(rng.choice(D, size=(ROWS, NNZ)), axis=1).astype(np.int32)
        X = sp.csr_matrix((rng.random(ROWS * NNZ, dtype=np.float32), cols.ravel(),
                           np.arange(0, ROWS * NNZ + 1, NNZ)), shape=(ROWS, D))
        X.sum_duplicates()
        scores = X @ teacher
        codes = (np.argmax(scores, axis=1) if n_classes > 2
                 else (scores[:, 0] > np.median(scores[:, 0])).astype(np.int64))
        block = CSRBlock(indptr=X.indptr.astype(np.int64), indices=X.indices, data=X.data,
                         y=codes.astype(np.float64), n_features=D)
        order = rng.permutation(ROWS) if w % 2 == 0 else rng.permutation(ROWS)[:ROWS // 2]
        folds = rng.integers(0, 2, size=order.size).astype(np.int8)
        windows.append(WindowRows(block, codes, order.astype(np.int64), folds, PassStats()))
    return windows


def started_grid(solver: str, n_classes: int, n_stacks: int, windows: list[WindowRows]
                 ) -> tuple[CandidateGrid, object]:
    """A calibrated grid of 4 alphas (averaged), candidate 1 frozen."""
    def make(alpha: float) -> object:
        return SGDSolver(alpha=alpha) if solver == "sgd" else PegasosSolver(alpha=alpha)

    grid = grid_solvers(make, [1e-4, 1e-3, 1e-2, 1e-1], n_stacks)
    first = windows[0]
    state = grid.init_state(D, n_classes if n_classes > 2 else 1, np.dtype(np.float32))
    state = grid.calibrate(state, first.rows, first.codes)
    state.extra[ACTIVE][1::4] = 0.0  # frozen in every stack: costs nothing, changes nothing
    return grid, state


@pytest.mark.parametrize("solver", ["sgd", "pegasos"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("n_stacks", [1, 2])
def test_windows_in_a_row_are_the_window_by_window_pass(solver, n_classes, n_stacks):
    windows = csr_windows(5, n_classes)
    grid, state = started_grid(solver, n_classes, n_stacks, windows)
    assert grid.window_budget(state, windows[0].rows) > 3 * windows[0].nbytes
    one_by_one, in_a_row = state.copy(), state.copy()
    expected = PassStats()
    for w in windows:
        expected = expected + (grid.run_folds(one_by_one, w.rows, w.codes, w.order,
                                              w.folds if n_stacks > 1 else None) + w.probe)
    got = grid.run_windows(in_a_row, windows)

    for name in ("coef", "intercept", "avg_coef", "avg_intercept"):
        np.testing.assert_array_equal(getattr(in_a_row, name), getattr(one_by_one, name))
    for key, value in one_by_one.extra.items():
        np.testing.assert_array_equal(in_a_row.extra[key], value)
    assert (in_a_row.t, in_a_row.n_avg) == (one_by_one.t, one_by_one.n_avg)
    assert (got.loss_sum, got.n_rows, got.weight_sum) == \
        (expected.loss_sum, expected.n_rows, expected.weight_sum)
    assert got.n_rows > 0 and np.isfinite(got.loss_sum)
    # the frozen candidate's rows (in every stack) are what they were; the others trained
    m = state.coef.shape[0] // (4 * n_stacks)
    for s in range(n_stacks):
        frozen = slice((4 * s + 1) * m, (4 * s + 2) * m)
        trained = slice((4 * s + 2) * m, (4 * s + 3) * m)
        np.testing.assert_array_equal(in_a_row.coef[frozen], state.coef[frozen])
        np.testing.assert_array_equal(in_a_row.avg_coef[frozen], state.avg_coef[frozen])
        assert not np.array_equal(in_a_row.avg_coef[trained], state.avg_coef[trained])


def test_kept_pairs_are_copied_back_and_a_pass_over_another_state_releases_them():
    """Inside pairs_kept the arrays are stale; a pass over another state, and the block's
    end, copy the pairs back: the same as passes without it."""
    windows = csr_windows(3, 2, seed=1)
    solver = SGDSolver(alpha=1e-3)
    plain = [solver.init_state(D, 1, np.dtype(np.float32)) for _ in range(2)]
    plain = [solver.calibrate(s, windows[0].rows, windows[0].codes) for s in plain]
    kept = [s.copy() for s in plain]
    for w in windows:  # alternate the two states: every switch copies the pairs back
        for s in plain:
            solver.run_block(s, w.rows, w.codes, w.order)
    with pairs_kept():
        for w in windows:
            for s in kept:
                solver.run_block(s, w.rows, w.codes, w.order)
        for w in windows:
            solver.run_block(kept[0], w.rows, w.codes, w.order)
    for w in windows:
        solver.run_block(plain[0], w.rows, w.codes, w.order)
    for a, b in zip(plain, kept):
        np.testing.assert_array_equal(a.coef, b.coef)
        np.testing.assert_array_equal(a.avg_coef, b.avg_coef)
        assert (a.t, a.n_avg) == (b.t, b.n_avg)
    assert run_pass_kernel  # (the pass that consults the kept pairs)


def test_a_grid_on_sparse_rows_holds_windows_and_equals_one_window_at_a_time(monkeypatch):
    """Through the epoch loop: a grid on CSR rows with many features holds several windows
    per run_windows call, and gives the model it gives holding none (budget 0)."""
    rng = np.random.default_rng(2)
    n = 1200
    X = sp.random(n, D, density=NNZ / D, format="csr", dtype=np.float64, random_state=rng)
    y = np.where(X @ rng.normal(size=D) > 0, 1, -1)
    params = dict(alphas=[1e-4, 1e-2, 1.0], solver="sgd", max_epochs=3, chunk_rows=100,
                  shuffle_window=2, random_state=0, scale=False, n_iter_no_change=9)
    calls = []
    run_windows = CandidateGrid.run_windows

    def counted(self, state, windows):
        calls.append(len(windows))
        return run_windows(self, state, windows)

    monkeypatch.setattr(CandidateGrid, "run_windows", counted)
    held = SVMClassifierCV(**params).fit(X, y)
    assert calls and max(calls) > 1
    monkeypatch.setattr(CandidateGrid, "window_budget", lambda self, state, block: 0)
    calls.clear()
    alone = SVMClassifierCV(**params).fit(X, y)
    assert not calls
    np.testing.assert_array_equal(held.coef_, alone.coef_)
    np.testing.assert_array_equal(held.cv_results_["mean_test_score"],
                                  alone.cv_results_["mean_test_score"])
