"""The grid of alphas with k folds of rows (``cv=k``, #27): folds by the hash of (seed, chunk,
row), k + 1 stacks of the candidates in one pass per epoch, scores the mean over the folds,
the model published trained on every row."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm import SVMClassifier, SVMClassifierCV
from dsvm.data.fold import KFold, kfold_for
from dsvm.data.order import draw_seed
from dsvm.data.sources import ArraySource
from dsvm.solvers.grid import STACK_N_AVG, STACK_T, candidate_view
from dsvm.training.grid import fit_grid
from dsvm.training.spec import FitSpec
from tests.test_cv import CHUNK, ROWS, fit_and_resume, fit_leaving_out, problem


def folds_of(random_state: int, k: int, X: np.ndarray) -> KFold:
    return kfold_for(draw_seed(random_state), k,
                     ArraySource(X, np.zeros(len(X)), None, chunk_rows=CHUNK))


def all_folds(folds: KFold, n_rows: int, chunk_rows: int) -> np.ndarray:
    return np.concatenate([folds.fold_of(c, min(chunk_rows, n_rows - c * chunk_rows))
                           for c in range(-(-n_rows // chunk_rows))])


# -- the folds ---------------------------------------------------------------------------------
def test_the_folds_are_a_partition_of_about_n_over_k_rows_each():
    folds = KFold(seed=11, n_splits=5)
    labels = np.concatenate([folds.fold_of(c, 4096) for c in range(50)])
    n = labels.size
    assert labels.min() == 0 and labels.max() == 4 and labels.dtype == np.int8
    sizes = np.bincount(labels, minlength=5)
    assert sizes.sum() == n  # every row in exactly one fold
    assert np.all(np.abs(sizes - n / 5) < 5 * np.sqrt(n * 0.2 * 0.8))  # binomial, 5 sd
    # each fold's rows, as a set held out of training, are that fold's and no other's
    for f in range(5):
        np.testing.assert_array_equal(folds.only(f).held_mask(3, 4096),
                                      folds.fold_of(3, 4096) == f)


@pytest.mark.parametrize("n_rows", [5, 27, 1003])
def test_small_data_has_folds_of_exactly_n_over_k_rows(n_rows):
    X, y = np.zeros((n_rows, 2)), np.arange(n_rows) % 2
    for chunk_rows in (4, n_rows):
        folds = kfold_for(7, 5, ArraySource(X, y, None, chunk_rows=chunk_rows))
        sizes = np.bincount(all_folds(folds, n_rows, chunk_rows), minlength=5)
        expected = np.diff([round(f * n_rows / 5) for f in range(6)])
        np.testing.assert_array_equal(sizes, expected)
    with pytest.raises(ValueError, match="cv=5: 5 folds need at least 5 rows"):
        kfold_for(7, 5, ArraySource(X[:4], y[:4], None, chunk_rows=2))


def test_the_folds_depend_on_seed_chunk_and_row_only():
    folds = KFold(seed=7, n_splits=4)
    sizes = {0: 300, 1: 250, 2: 280}
    alone = {c: folds.fold_of(c, n) for c, n in sizes.items()}
    for chunks in ([0, 1, 2], [2, 0]):
        np.testing.assert_array_equal(folds.window_folds(chunks, [sizes[c] for c in chunks]),
                                      np.concatenate([alone[c] for c in chunks]))
    np.testing.assert_array_equal(KFold(seed=7, n_splits=4).fold_of(1, 500)[:250], alone[1])
    assert not np.array_equal(KFold(seed=8, n_splits=4).fold_of(0, 300), alone[0])
    for bad in (1, 0, True, 2.5):
        with pytest.raises(ValueError, match="cv must be an int >= 2"):
            KFold(seed=0, n_splits=bad)


# -- the published model and the fold models ---------------------------------------------------
@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_published_model_is_the_plain_fit_on_all_rows(n_classes):
    """Stack 0 trains on every row in a plain fit's row order and is combined as a plain
    fit: the chosen alpha's model is SVMClassifier's of that alpha (same seed and epochs),
    with 2 streams and windows of 2 chunks, binary and one-vs-rest. (SGD, what the grid
    runs by default: a plain averaged-Pegasos fit extrapolates its averages, which the grid
    does not, :mod:`dsvm.solvers.grid`; its stacks are checked against the epoch loop below.)"""
    X, y = problem(n_classes)
    kw = dict(solver="sgd", random_state=3, chunk_rows=CHUNK, max_epochs=4, tol=None,
              n_streams=2, shuffle_window=2)
    cv = SVMClassifierCV(alphas=[1e-4, 1e-2], cv=3, **kw).fit(X, y)
    plain = SVMClassifier(alpha=cv.alpha_, **kw).fit(X, y)
    assert cv.n_iter_ == plain.n_iter_ == 4
    assert [h["n_rows"] for h in cv.best_estimator_.history_] == [ROWS] * 4  # every row
    np.testing.assert_allclose(cv.coef_, plain.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cv.intercept_, plain.intercept_, rtol=1e-9, atol=1e-12)


def fit_without_fold(X, y, params, alpha, epochs, folds, f):
    """The fit of one alpha on the rows outside fold ``f`` (held out as a row fold is; None:
    on every row), in the grid's row orders, through the same epoch loop."""
    return fit_leaving_out(X, y, params, alpha, epochs,
                           lambda seed, source: None if f is None else folds.only(f))


@pytest.mark.parametrize("solver", ["sgd", "pegasos"])
def test_each_fold_model_is_the_fit_without_its_fold_and_scored_on_it(solver):
    """Stack f + 1 is the fit of each alpha on the rows outside fold f (its own counters and
    combine weights), and split f's score is that model's accuracy on fold f's rows (NumPy),
    their mean the candidate's score, their objectives' mean its held-out objective; stack 0
    is the fit on every row."""
    X, y = problem(2, seed=1)
    k, alphas = 3, [1e-4, 1e-2]
    params = SVMClassifier(solver=solver, random_state=4, chunk_rows=CHUNK, scale=False,
                           max_epochs=3, tol=None, n_streams=2).get_params()
    spec = FitSpec.from_params("SVMClassifierCV", "classification", params)
    _, report = fit_grid(spec, X, y, alphas=alphas, cv=k)
    folds = folds_of(4, k, X)
    labels = all_folds(folds, ROWS, CHUNK)
    splits = report.final_splits
    assert splits.shape == (k, 2)
    objectives = np.zeros(2)
    for f in range(k):
        rows = np.flatnonzero(labels == f)
        for j, alpha in enumerate(alphas):
            own = candidate_view(report.state, (f + 1) * 2 + j, (k + 1) * 2)
            coef, intercept = own.model()
            margin = X[rows] @ np.asarray(coef[0], np.float64) + float(intercept[0])
            assert splits[f, j] == np.mean(np.where(margin > 0, 1, -1) == y[rows])
            objectives[j] += (0.5 * alpha * float(coef[0] @ coef[0])
                              + np.mean(np.maximum(0.0, 1.0 - y[rows] * margin))) / k
            alone = fit_without_fold(X, y, params, alpha, 3, folds, f)
            np.testing.assert_allclose(coef, alone.state.model()[0], rtol=1e-9, atol=1e-12)
            counters = (report.state.extra[STACK_T][f + 1],
                        report.state.extra[STACK_N_AVG][f + 1])  # (the stack's own)
            assert counters == (alone.state.t, alone.state.n_avg)
            assert alone.history[-1]["n_rows"] == ROWS - rows.size
    for j, alpha in enumerate(alphas):
        published, alone = report.candidate_state(j), fit_without_fold(X, y, params, alpha, 3,
                                                                       folds, None).state
        np.testing.assert_allclose(published.coef, alone.coef, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(published.avg_coef, alone.avg_coef, rtol=1e-9, atol=1e-12)
        assert (published.t, published.n_avg) == (alone.t, alone.n_avg)
    np.testing.assert_allclose(report.scores[-1], splits.mean(axis=0), rtol=1e-15)
    np.testing.assert_allclose(report.objectives[-1], objectives, rtol=1e-9)


def test_fold_sums_do_not_depend_on_the_scoring_tasks():
    """The folds' sums over the chunks are the same however the chunks are grouped into tasks
    (a function of seed, chunk and row), and every row is scored once."""
    from dsvm.engine.local import LocalEngine, spread
    from dsvm.engine.tasks import ScoreHeldRows
    from dsvm.solvers.evaluation import add_grid_counts
    from dsvm.solvers.fold_scores import FoldScores
    from dsvm.training.epoch import Outcome

    X, y = problem(2)
    params = SVMClassifier(solver="sgd", random_state=6, chunk_rows=CHUNK, scale=False,
                           max_epochs=2, n_streams=3, shuffle_window=4).get_params()
    spec = FitSpec.from_params("SVMClassifierCV", "classification", params)
    record, report = fit_grid(spec, X, y, alphas=[1e-3, 1e-2], cv=4)
    assert [h["n_rows"] for h in record.history] == [ROWS] * 2
    source = ArraySource(X, np.asarray(y, np.float64), None, chunk_rows=CHUNK)
    solver = spec.make_solver(ROWS)
    task = ScoreHeldRows(FoldScores(folds_of(6, 4, X), (solver, solver),
                                    np.array([-1.0, 1.0]), "hinge"))
    engine = LocalEngine()
    sums = [engine.reduce(task, source, spread(source.n_chunks, groups), add_grid_counts,
                          name="score", inputs=[Outcome(report.state)]) for groups in (1, 3, 20)]
    assert sum(c.n_rows for c in sums[0].candidates[::2]) == ROWS  # each row in one fold
    for other in sums[1:]:
        assert [c.n_correct for c in other.candidates] == [c.n_correct for c in
                                                             sums[0].candidates]
    accuracy = np.array([c.accuracy for c in sums[0].candidates]).reshape(4, 2)
    np.testing.assert_array_equal(accuracy, report.final_splits)


# -- the estimator, checkpoints, memory, CLI ---------------------------------------------------
def test_cv_results_in_scikit_learns_layout_and_bad_values():
    X, y = problem(2)
    clf = SVMClassifierCV(alphas=[1e-4, 1e-2, 1.0], cv=4, random_state=0, chunk_rows=CHUNK,
                          max_epochs=3).fit(X, y)
    res = clf.cv_results_
    splits = np.array([res[f"split{f}_test_score"] for f in range(4)])
    assert "split4_test_score" not in res
    np.testing.assert_allclose(res["mean_test_score"], splits.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(res["std_test_score"], splits.std(axis=0), rtol=1e-12)
    assert clf.best_score_ == res["mean_test_score"].max()
    assert res["rank_test_score"][clf.best_index_] == 1
    assert res["test_score_by_epoch"][:, -1].tolist() == res["mean_test_score"].tolist()
    assert [row["folds"] for row in clf.grid_table_] == splits.T.tolist()
    for bad in (1, True, 2.5, "3"):
        with pytest.raises(ValueError, match="'cv' parameter"):
            SVMClassifierCV(alphas=[1e-3], cv=bad).fit(X, y)
    with pytest.raises(ValueError, match="cv=5: 5 folds need at least 5 rows"):
        SVMClassifierCV(alphas=[1e-3], cv=5).fit(X[:4], y[:4])


def test_a_kfold_grid_resumed_from_its_checkpoint_is_the_uninterrupted_grid(tmp_path):
    """As the held-out share's: the stacks, their counters and the fold scores replayed; a
    checkpoint of other folds is refused."""
    kw = dict(alphas=[1e-5, 1e-4, 1e-3, 1e-2], cv=3, solver="sgd", random_state=0,
              chunk_rows=CHUNK, tol=3e-2, n_iter_no_change=2)
    full, resumed, ckpt, (X, y) = fit_and_resume(tmp_path, kw)
    for key in ("n_epochs", "test_score_by_epoch", "mean_test_score", "split2_test_score"):
        np.testing.assert_array_equal(resumed.cv_results_[key], full.cv_results_[key])
    with pytest.raises(ValueError, match="cv=3 but this grid has cv=4"):
        SVMClassifierCV(max_epochs=8, checkpoint=ckpt, **{**kw, "cv": 4}).fit(X, y, resume=True)
    with pytest.raises(ValueError, match="cv=3 but this grid has cv=None"):
        SVMClassifierCV(max_epochs=8, checkpoint=ckpt, **{**kw, "cv": None}).fit(
            X, y, resume=True)


def test_the_memory_check_counts_k_plus_one_stacks(monkeypatch):
    from dsvm.engine.local import LocalEngine
    from dsvm.training import grid

    monkeypatch.setattr(grid, "worker_memory", lambda engine: 2 * 1000 * grid.STATE_COPIES)
    grid.check_memory(LocalEngine(), 1000, np.array([1e-3, 1e-2]))  # 2 states fit
    with pytest.raises(ValueError, match=r"x 4 stacks \(cv=3.*8 candidate states of 1,000 "
                                         r"bytes.*fewer alphas or folds"):
        grid.check_memory(LocalEngine(), 1000, np.array([1e-3, 1e-2]), n_stacks=4)


def test_cli_cv_flag_and_the_folds_in_info(tmp_path, capsys):
    import dsvm
    from dsvm.cli import main

    X, y = problem(2)
    data = tmp_path / "d.zarr"
    dsvm.write_arrays(data, X.astype(np.float32), y, chunk_rows=CHUNK)
    out = tmp_path / "m.dsvm"
    assert main(["train", str(data), "--alpha", "1e-4,1e-2", "--cv", "3", "--epochs", "2",
                 "--out", str(out), "--quiet"]) == 0
    log = capsys.readouterr().err
    assert "3 folds of rows" in log and "fold2" in log and "fold3" not in log
    assert main(["info", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "fold0" in shown and "fold2" in shown and shown.count("<- best") == 1
    for bad in ("1", "x", "2.5"):
        assert main(["train", str(data), "--alpha", "1e-4,1e-2", "--cv", bad, "--out",
                     str(tmp_path / "x.dsvm")]) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and "--cv" in lines[0] and repr(bad) in lines[0]
    assert main(["train", str(data), "--cv", "3", "--out", str(tmp_path / "y.dsvm")]) == 2
    assert "--cv 3" in capsys.readouterr().err
