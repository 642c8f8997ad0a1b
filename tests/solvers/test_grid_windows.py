"""A grid's candidates run over several windows in a row (CandidateGrid.run_windows, W kept
paired between the passes: dsvm.solvers.objective.pairs_kept) against the grid's pass
window by window: the same steps and statistics, and the same states, bit for bit for
Pegasos (the pairs are copies) and to rounding for SGD, whose kept passes carry the scale
and the average's sum instead of folding them at each window's end: they are one pass over
the windows' rows, bit for bit (checked here too)."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm import SVMClassifierCV
from dsvm.data.blocks import CSRBlock
from dsvm.solvers.base import PassStats
from dsvm.solvers.grid import ACTIVE, CandidateGrid, grid_solvers
from dsvm.solvers.objective import pairs_kept, pass_scratch_kept
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


def assert_same_model(got, expected, exact: bool) -> None:
    """Equal, or equal to float32 rounding (relative to the array's size: entries near 0
    are differences of larger terms)."""
    got, expected = np.asarray(got), np.asarray(expected)
    if exact:
        np.testing.assert_array_equal(got, expected)
        return
    size = float(np.abs(expected).max()) if expected.size else 0.0
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6 * size)


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

    exact = solver == "pegasos"
    for name in ("coef", "intercept", "avg_coef", "avg_intercept"):
        assert_same_model(getattr(in_a_row, name), getattr(one_by_one, name), exact)
    for key, value in one_by_one.extra.items():
        np.testing.assert_array_equal(in_a_row.extra[key], value)
    assert (in_a_row.t, in_a_row.n_avg) == (one_by_one.t, one_by_one.n_avg)
    assert (got.n_rows, got.weight_sum) == (expected.n_rows, expected.weight_sum)
    assert got.loss_sum == (expected.loss_sum if exact else pytest.approx(expected.loss_sum))
    assert got.n_rows > 0 and np.isfinite(got.loss_sum)
    # the frozen candidate's rows (in every stack) are what they were; the others trained
    m = state.coef.shape[0] // (4 * n_stacks)
    for s in range(n_stacks):
        frozen = slice((4 * s + 1) * m, (4 * s + 2) * m)
        trained = slice((4 * s + 2) * m, (4 * s + 3) * m)
        np.testing.assert_array_equal(in_a_row.coef[frozen], state.coef[frozen])
        np.testing.assert_array_equal(in_a_row.avg_coef[frozen], state.avg_coef[frozen])
        assert not np.array_equal(in_a_row.avg_coef[trained], state.avg_coef[trained])


def test_kept_pairs_are_copied_back_and_other_states_passes_leave_them_alone():
    """Inside pairs_kept(state) that state's arrays are stale; passes over another state in
    between run as usual (a scratch of their own), and the block's end copies the pairs back:
    the same as passes without it."""
    windows = csr_windows(3, 2, seed=1)
    solver = SGDSolver(alpha=1e-3)
    plain = [solver.init_state(D, 1, np.dtype(np.float32)) for _ in range(2)]
    plain = [solver.calibrate(s, windows[0].rows, windows[0].codes) for s in plain]
    kept = [s.copy() for s in plain]
    for w in windows:  # alternate the two states: every switch copies the pairs back
        for s in plain:
            solver.run_block(s, w.rows, w.codes, w.order)
    with pass_scratch_kept(), pairs_kept(kept[0]):
        for w in windows:  # (kept[1]'s passes take the thread's scratch; kept[0]'s waits)
            for s in kept:
                solver.run_block(s, w.rows, w.codes, w.order)
        for w in windows:
            solver.run_block(kept[0], w.rows, w.codes, w.order)
    for w in windows:
        solver.run_block(plain[0], w.rows, w.codes, w.order)
    for a, b in zip(plain, kept):
        for name in ("coef", "intercept", "avg_coef", "avg_intercept"):
            assert_same_model(getattr(b, name), getattr(a, name), exact=False)
        assert (a.t, a.n_avg) == (b.t, b.n_avg)


@pytest.mark.parametrize("solver", ["sgd", "pegasos"])
def test_kept_passes_are_one_pass_over_their_rows(solver):
    """SGD's passes of one state inside pairs_kept give, bit for bit, the one pass over all
    their rows (one block holding the windows' rows, the orders one after the other);
    Pegasos' give its passes window by window."""
    windows = csr_windows(4, 3, seed=3)
    one = SGDSolver(alpha=1e-3) if solver == "sgd" else PegasosSolver(alpha=1e-3)
    start = one.calibrate(one.init_state(D, 3, np.dtype(np.float32)), windows[0].rows,
                          windows[0].codes)
    kept, whole, apart = start.copy(), start.copy(), start.copy()
    with pairs_kept(kept):
        for w in windows:
            one.run_block(kept, w.rows, w.codes, w.order)
    for w in windows:
        one.run_block(apart, w.rows, w.codes, w.order)
    X = sp.vstack([w.rows.to_matrix() for w in windows], format="csr")
    block = CSRBlock(indptr=X.indptr.astype(np.int64), indices=X.indices.astype(np.int32),
                     data=X.data, y=np.concatenate([w.rows.y for w in windows]), n_features=D)
    offsets = np.cumsum([0] + [w.rows.n_samples for w in windows])
    order = np.concatenate([w.order + off for w, off in zip(windows, offsets)])
    one.run_block(whole, block, np.concatenate([w.codes for w in windows]), order)
    # Pegasos carries nothing (its young support lives within a pass): each window is its
    # own pass, kept or not
    same = whole if solver == "sgd" else apart
    for name in ("coef", "intercept", "avg_coef", "avg_intercept"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(same, name))
    assert (kept.t, kept.n_avg) == (same.t, same.n_avg) == (whole.t, whole.n_avg)


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
    assert_same_model(held.coef_, alone.coef_, exact=False)
    assert held.alpha_ == alone.alpha_
    np.testing.assert_allclose(held.cv_results_["mean_test_score"],
                               alone.cv_results_["mean_test_score"], atol=0.005)


def test_kept_passes_that_diverge_raise_as_passes_window_by_window():
    """A pass over kept pairs checks its loss (the weights are checked when copied back):
    a non-finite value raises FloatingPointError as it does window by window."""
    windows = csr_windows(3, 2, seed=4)
    windows[1].rows.data[5] = np.inf  # (a copy: csr_windows makes fresh arrays)
    solver = SGDSolver(alpha=1e-3)
    start = solver.calibrate(solver.init_state(D, 1, np.dtype(np.float32)), windows[0].rows,
                             windows[0].codes)
    for keep in (False, True):
        state = start.copy()
        with pytest.raises(FloatingPointError, match="non-finite"):
            with pairs_kept(state) if keep else contextlib.nullcontext():
                for w in windows:
                    solver.run_block(state, w.rows, w.codes, np.arange(w.rows.n_samples))


def test_a_window_of_in_memory_views_counts_its_chunks_bytes_not_its_span():
    """Two chunks far apart in one in-memory CSR array train as one span of views reaching
    over the rows between them (solvers.passes.span_of_views); holding the window costs its
    chunks, which is what a grid's held windows count against their budget."""
    from dsvm.solvers.passes import window_rows

    X = csr_windows(1, 2)[0].rows.to_matrix()
    X = sp.vstack([X] * 10, format="csr")  # 1,200 rows

    def chunk(start: int, stop: int) -> CSRBlock:
        lo, hi = X.indptr[start], X.indptr[stop]
        return CSRBlock(indptr=(X.indptr[start:stop + 1] - lo).astype(np.int64),
                        indices=X.indices[lo:hi], data=X.data[lo:hi],
                        y=np.where(np.arange(stop - start) % 2, 1.0, -1.0), n_features=D)

    window = [(0, chunk(0, 100)), (9, chunk(1100, 1200))]
    state = SGDSolver().init_state(D, 1, np.dtype(np.float32))
    ready = window_rows(SGDSolver(), state, window, classes=np.array([-1.0, 1.0]), epoch=0,
                        seed=0, where=str)
    assert isinstance(ready.rows, CSRBlock)  # the span: its entries reach over the gap
    assert ready.rows.indices.size == X.indptr[1200] - X.indptr[0]
    chunks = window[0][1].nbytes + window[1][1].nbytes
    assert ready.nbytes == chunks + ready.codes.nbytes + ready.order.nbytes
    assert ready.nbytes < ready.rows.nbytes
