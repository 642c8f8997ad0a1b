"""SVMClassifierCV / SVMRegressorCV (#27): a grid of alphas trained in one read of the data per
epoch (stacked states, dsvm.solvers.grid), scored on rows held out of every chunk, the best
published."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from dsvm import SVMClassifier, SVMClassifierCV, SVMRegressorCV
from dsvm.combine import combiner_for
from dsvm.data.fold import fold_for
from dsvm.data.order import draw_seed
from dsvm.data.sources import ArraySource
from dsvm.solvers.held_out import HeldOutRows
from dsvm.training.engines import engine_for
from dsvm.training.grid import auto_alphas, fit_grid
from dsvm.training.loop import FitPlan, run_epochs
from dsvm.training.spec import FitSpec
from dsvm.training.stochastic import start
from dsvm.training.window import window_for
from tests.conftest import load_libsvm

ROWS, CHUNK = 3000, 150  # 20 chunks: in-memory arrays are not re-cut for the held-out fold


def problem(n_classes: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(ROWS, 10))
    W = rng.normal(size=(10, n_classes))
    if n_classes == 2:
        return X, np.where(X @ W[:, 0] + 0.3 * rng.normal(size=ROWS) > 0, 1, -1)
    return X, np.argmax(X @ W + 0.3 * rng.normal(size=(ROWS, n_classes)), axis=1)


def fold_of(random_state, X):
    """The grid's fold of ``X`` in chunks of CHUNK rows (``cv_fraction=0.1``)."""
    return fold_for(draw_seed(random_state), 0.1,
                    ArraySource(X, np.zeros(len(X)), None, chunk_rows=CHUNK))


def single_fit_on_training_rows(X, y, params, alpha, epochs):
    """The fit of one alpha on the grid's training rows (same seed: the same rows held out
    of every chunk, left out of the same row orders), through the same epoch loop, for
    ``epochs`` epochs: the held rows are left out by the same row filter."""
    return fit_leaving_out(X, y, params, alpha, epochs,
                           lambda seed, source: fold_for(seed, 0.1, source))


def fit_leaving_out(X, y, params, alpha, epochs, fold_of):
    """The fit of one alpha through the grid's epoch loop and row orders, leaving out the rows
    of ``fold_of(seed, source)`` (None: none) as the grid leaves out its held rows."""
    spec = FitSpec.from_params("SVMClassifier", "classification",
                               {**params, "alpha": alpha, "max_epochs": epochs, "tol": None})
    source = ArraySource(X, np.asarray(y, np.float64), None, chunk_rows=CHUNK)
    seed = draw_seed(params["random_state"])
    with engine_for(X) as engine:
        record = start(spec, engine, source, classes=None, text=None, seed=seed, fmap=None)
        solver = spec.make_solver(source.n_samples)
        fold = fold_of(seed, source)
        held = None if fold is None else HeldOutRows(fold, (solver,), record.class_values,
                                                     spec.loss)
        window = window_for(spec.shuffle_window, source, n_streams=record.n_streams)
        plan = FitPlan(seed=seed, n_streams=record.n_streams, shuffle_window=window.chunks,
                       held_out=held)
        return run_epochs(engine=engine, solver=solver, combiner=combiner_for(solver),
                          source=source, classes=record.class_values, state=record.state,
                          plan=plan, first_epoch=0, n_epochs=epochs)


@pytest.mark.parametrize("solver", ["sgd", "pegasos"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_each_candidate_is_the_single_fit_of_its_alpha(solver, n_classes):
    """Stacking is exact: candidate k's state after the grid is the state of a fit of alpha_k
    alone on the same training rows, run for the epochs candidate k trained (frozen ones
    fewer), for binary and one-vs-rest (K alphas x 3 classes in one pass)."""
    X, y = problem(n_classes)
    params = SVMClassifier(solver=solver, random_state=3, chunk_rows=CHUNK, scale=False,
                           max_epochs=6, n_iter_no_change=2).get_params()
    spec = FitSpec.from_params("SVMClassifierCV", "classification", params)
    alphas = [1e-4, 1e-3, 1e-2, 1e-1]
    record, report = fit_grid(spec, X, y, alphas=alphas)
    assert report.epochs_run.min() >= 1
    # the held rows are left out: every epoch trained on the rest only
    fold = fold_of(3, X)
    held = sum(int(fold.held_mask(c, CHUNK).sum()) for c in range(ROWS // CHUNK))
    assert 0.07 * ROWS < held < 0.13 * ROWS
    assert {h["n_rows"] for h in record.history} == {ROWS - held}
    for k, alpha in enumerate(alphas):
        alone = single_fit_on_training_rows(X, y, params, alpha, int(report.epochs_run[k]))
        grid = report.candidate_state(k)
        assert grid.coef.shape == alone.state.coef.shape == (1 if n_classes == 2 else 3, 10)
        np.testing.assert_allclose(grid.coef, alone.state.coef, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(grid.avg_coef, alone.state.avg_coef, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(grid.intercept, alone.state.intercept, rtol=1e-9,
                                   atol=1e-12)
        assert (grid.t, grid.n_avg) == (alone.state.t, alone.state.n_avg)


def held_scores(X, y, fold, coef, intercept, alpha):
    """(accuracy, hinge objective) of a binary model on the rows ``fold`` holds out of
    CHUNK-row chunks, in plain NumPy."""
    held = np.concatenate([c * CHUNK + fold.held_rows(c, CHUNK) for c in range(ROWS // CHUNK)])
    margin = X[held] @ np.asarray(coef[0], np.float64) + float(intercept[0])
    accuracy = float(np.mean(np.where(margin > 0, 1, -1) == y[held]))
    hinge = float(np.mean(np.maximum(0.0, 1.0 - y[held] * margin)))
    return accuracy, 0.5 * alpha * float(np.dot(coef[0], coef[0])) + hinge


def test_each_epochs_score_is_that_of_the_model_after_it():
    """The scores arrive one epoch late (each pass scores the models it started from, the
    last by one pass of its own): the score recorded for epoch e is the held-out accuracy of
    the model after epoch e, as the single fit of that alpha for e epochs has it (the
    accuracies barely move here: the objectives, which do, check the timing)."""
    X, y = problem(2)
    params = SVMClassifier(solver="sgd", random_state=4, chunk_rows=CHUNK, scale=False,
                           max_epochs=3, tol=None, n_iter_no_change=50).get_params()
    spec = FitSpec.from_params("SVMClassifierCV", "classification", params)
    alphas = [1e-4, 1e-1]
    _, report = fit_grid(spec, X, y, alphas=alphas)
    fold = fold_of(4, X)
    scores, objectives = np.array(report.scores), np.array(report.objectives)
    assert scores.shape == objectives.shape == (3, 2)
    assert np.all(np.diff(objectives, axis=0) != 0)
    for k, alpha in enumerate(alphas):
        for epochs in (1, 2, 3):
            coef, intercept = single_fit_on_training_rows(X, y, params, alpha,
                                                          epochs).state.model()
            accuracy, objective = held_scores(X, y, fold, coef, intercept, alpha)
            assert scores[epochs - 1, k] == accuracy
            np.testing.assert_allclose(objectives[epochs - 1, k], objective, rtol=1e-9)


def test_the_held_rows_are_the_same_whatever_the_streams_windows_and_tasks():
    """The fold is a function of (seed, chunk, row): the grid trains on the same number of
    rows per epoch with 1 or 3 streams and windows of 1 or 4 chunks, and the held rows'
    sums do not depend on how the chunks are grouped into scoring tasks."""
    from dsvm.engine.local import LocalEngine, spread
    from dsvm.engine.tasks import ScoreHeldRows
    from dsvm.solvers.evaluation import add_grid_counts
    from dsvm.training.epoch import Outcome

    X, y = problem(2)
    fold = fold_of(6, X)
    held = sum(int(fold.held_mask(c, CHUNK).sum()) for c in range(ROWS // CHUNK))
    for n_streams, window in ((1, 1), (3, 1), (3, 4)):
        params = SVMClassifier(solver="sgd", random_state=6, chunk_rows=CHUNK, scale=False,
                               max_epochs=2, n_streams=n_streams,
                               shuffle_window=window).get_params()
        spec = FitSpec.from_params("SVMClassifierCV", "classification", params)
        record, report = fit_grid(spec, X, y, alphas=[1e-3, 1e-2])
        assert [h["n_rows"] for h in record.history] == [ROWS - held] * 2
    source = ArraySource(X, np.asarray(y, np.float64), None, chunk_rows=CHUNK)
    solver = spec.make_solver(ROWS)
    task = ScoreHeldRows(HeldOutRows(fold, (solver, solver), np.array([-1.0, 1.0]), "hinge"))
    outcome = Outcome(report.state)
    engine = LocalEngine()
    sums = [engine.reduce(task, source, spread(source.n_chunks, groups), add_grid_counts,
                          name="score", inputs=[outcome]) for groups in (1, 3, 20)]
    assert sums[0].candidates[0].n_rows == held
    for other in sums[1:]:
        np.testing.assert_array_equal(other.class_rows, sums[0].class_rows)
        assert [c.n_correct for c in other.candidates] == [c.n_correct for c in
                                                             sums[0].candidates]
        np.testing.assert_allclose([c.loss_sum for c in other.candidates],
                                   [c.loss_sum for c in sums[0].candidates], rtol=1e-12)


def count_chunk_reads(monkeypatch) -> Counter[int]:
    """A Counter of the in-memory chunks read from now on, by chunk."""
    reads: Counter[int] = Counter()
    original = ArraySource.read_chunk

    def counted(self, i):
        reads[i] += 1
        return original(self, i)

    monkeypatch.setattr(ArraySource, "read_chunk", counted)
    return reads


def test_the_grid_reads_each_chunk_as_often_as_one_fit(monkeypatch):
    """One read per epoch: a grid of 4 alphas reads every chunk as often as one fit of one
    alpha, plus once for the pass that scores the final models on the held rows (every
    epoch's own pass scores the models it started from: no read of its own)."""
    reads = count_chunk_reads(monkeypatch)
    X, y = problem(2)
    common = dict(solver="sgd", random_state=5, chunk_rows=CHUNK, scale=False, max_epochs=4,
                  tol=None, n_iter_no_change=50)
    SVMClassifierCV(alphas=[1e-4, 1e-3, 1e-2, 1e-1], **common).fit(X, y)
    grid_reads = dict(reads)
    reads.clear()
    SVMClassifier(alpha=1e-3, **common).fit(X, y)
    assert len(grid_reads) == ROWS // CHUNK
    assert grid_reads == {c: n + 1 for c, n in reads.items()}
    assert max(grid_reads.values()) <= 4 + 3  # epochs, the calibration, the outcome, scoring


def test_fitted_attributes_in_scikit_learns_layout():
    X, y = problem(2)
    clf = SVMClassifierCV(alphas=[1e-4, 1e-2, 1.0], random_state=0, chunk_rows=CHUNK,
                          max_epochs=3).fit(X, y)
    res = clf.cv_results_
    assert list(res["param_alpha"]) == [1e-4, 1e-2, 1.0]
    assert res["test_score_by_epoch"].shape == (3, clf.n_iter_)
    assert sorted(res["rank_test_score"]) == [1, 2, 3]
    assert clf.best_index_ == int(np.argmin(res["rank_test_score"]))
    assert clf.alpha_ == res["param_alpha"][clf.best_index_]
    assert clf.best_score_ == res["mean_test_score"].max()
    # alpha = 1 is far too strong for these margins: it is not chosen
    assert clf.alpha_ < 1.0 and res["mean_test_score"][2] < clf.best_score_
    np.testing.assert_array_equal(clf.coef_, clf.best_estimator_.coef_)
    np.testing.assert_array_equal(clf.predict(X), clf.best_estimator_.predict(X))
    assert clf.score(X, y) > 0.9
    assert clf.best_estimator_.alpha == clf.alpha_


def test_equal_held_out_scores_choose_the_larger_alpha():
    """57 held-out rows of breast cancer scored 1.0 for every alpha from 1e-5 to 1e-2, and
    the first, the least regularised, was chosen; the rank follows the same order."""
    from dsvm.training.grid import GridReport

    report = GridReport(np.array([1e-5, 1e-4, 1e-3, 1e-5, 1e-4]), "accuracy", 0.1,
                        scores=[np.array([1.0, 1.0, 0.9, np.nan, 1.0])])
    assert report.best_index == 1  # the first of the two 1e-4 (another axis' candidates)
    np.testing.assert_array_equal(report.cv_results()["rank_test_score"], [3, 1, 4, 5, 2])
    X, y = problem(2)
    clf = SVMClassifierCV(alphas=[1e-5, 1e-4, 1e-3, 1e-2], max_epochs=3,
                          random_state=0).fit(X, y)
    best = clf.cv_results_["mean_test_score"].max()
    tied = clf.alphas_[clf.cv_results_["mean_test_score"] == best]
    assert clf.alpha_ == tied.max()


def test_alphas_as_a_numpy_array_are_the_alphas_as_a_list():
    """``np.logspace(...)``, as scikit-learn's ``RidgeCV`` examples pass it (the parameter
    check once compared the array with "auto" and failed on its truth value)."""
    X, y = problem(2)
    kwargs = dict(random_state=0, chunk_rows=CHUNK, max_epochs=2)
    as_array = SVMClassifierCV(alphas=np.logspace(-4, 0, 3), **kwargs).fit(X, y)
    as_list = SVMClassifierCV(alphas=[1e-4, 1e-2, 1.0], **kwargs).fit(X, y)
    np.testing.assert_array_equal(as_array.alphas_, as_list.alphas_)
    np.testing.assert_array_equal(as_array.coef_, as_list.coef_)


@pytest.mark.filterwarnings("ignore:SVMClassifierCV predicts no better")
def test_kernel_map_one_map_k_models_and_the_path_plot():
    """kernel="nystroem": one map fitted on the training chunks, K linear models on it; a
    circle the linear grid cannot separate is learned, and plot_path draws the scores."""
    import matplotlib

    matplotlib.use("Agg")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(ROWS, 2))
    y = np.where((X ** 2).sum(axis=1) > 1.4, 1, -1)
    kw = dict(alphas=[1e-5, 1e-3, 1e-1], random_state=0, chunk_rows=CHUNK, max_epochs=3)
    cv = SVMClassifierCV(kernel="nystroem", n_components=64, **kw).fit(X, y)
    assert type(cv.feature_map_).__name__ == "Nystroem"
    assert cv.score(X, y) > 0.95 > 0.7 > SVMClassifierCV(**kw).fit(X, y).score(X, y)
    ax = cv.plot_path()
    assert ax.get_xscale() == "log" and len(ax.lines) >= 2


def test_auto_alphas_span_six_decades_around_one_over_n():
    grid = auto_alphas(1000, 7)
    np.testing.assert_allclose(grid[[0, 3, 6]], [1e-6, 1e-3, 1.0])
    X, y = problem(2)
    clf = SVMClassifierCV(random_state=0, n_alphas=4, chunk_rows=CHUNK, max_epochs=2).fit(X, y)
    np.testing.assert_allclose(clf.alphas_, auto_alphas(ROWS, 4))


def test_solvers_that_cannot_stack_are_refused():
    X, y = problem(2)
    for solver in ("nesvm", "asset"):  # (cocoa trains K dual vectors: test_cv_cocoa.py)
        with pytest.raises(ValueError, match=f"solver='{solver}'"):
            SVMClassifierCV(solver=solver, alphas=[1e-3, 1e-2]).fit(X, y)
    with pytest.raises(ValueError, match="'alphas' parameter"):
        SVMClassifierCV(alphas=3).fit(X, y)
    with pytest.raises(ValueError, match="alphas must be positive"):
        SVMClassifierCV(alphas=[1e-3, -1.0]).fit(X, y)


@pytest.mark.filterwarnings("ignore:SVMClassifierCV predicts no better")
def test_a_class_missing_from_the_held_rows_warns():
    """A class too rare for the held-out share (here: 5 rows, none of them held out) cannot
    rank the candidates on it; the fit says so, once."""
    X, _ = problem(2)
    kept = np.flatnonzero(~fold_of(1, X).held_mask(0, CHUNK))[:5]
    y = np.full(ROWS, -1)
    y[kept] = 1  # the positives: 5 rows of chunk 0 the fold trains on
    with pytest.warns(UserWarning, match=r"no rows of class\(es\) \[1.0\].*cv_fraction") as seen:
        SVMClassifierCV(alphas=[1e-3, 1e-2], random_state=1, chunk_rows=CHUNK,
                        max_epochs=2).fit(X, y)
    assert sum("no rows of class" in str(w.message) for w in seen) == 1


def test_memory_refusal_names_the_alphas_and_the_bytes(monkeypatch):
    from dsvm.training import grid

    monkeypatch.setattr(grid, "worker_memory", lambda engine: 100)
    X, y = problem(2)
    with pytest.raises(ValueError, match=r"alphas=\[0.001, 0.01\].*bytes"):
        SVMClassifierCV(alphas=[1e-3, 1e-2]).fit(X, y)


def test_a9a_the_chosen_alpha_is_as_good_as_the_best_separate_fit():
    """The held-out choice on a9a: the chosen model's test accuracy within 0.3 points of the
    best of the same alphas trained separately (on all the training rows)."""
    X, y = load_libsvm("a9a/a9a.xz", 123)
    Xt, yt = load_libsvm("a9a/a9a.t.xz", 123)
    X, y, Xt, yt = X[:12000], y[:12000], Xt[:8000], yt[:8000]  # (a slice: seconds)
    alphas = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2]
    common = dict(solver="sgd", random_state=0, max_epochs=3, tol=None, chunk_rows=600)
    cv = SVMClassifierCV(alphas=alphas, **common).fit(X, y)
    separate = [SVMClassifier(alpha=a, **common).fit(X, y).score(Xt, yt) for a in alphas]
    assert cv.score(Xt, yt) >= max(separate) - 0.003, (cv.alpha_, separate)


def test_a_label_sorted_store_chooses_as_well_as_the_best_separate_fit(tmp_path):
    """A store sorted by label (as w8a is distributed): a fold of whole chunks would hold one
    class only and score every candidate alike; the row fold holds out rows of every chunk,
    so no class is missing (no warning) and the chosen alpha's test accuracy is within 0.3
    points of the best of the same alphas trained separately on the same store."""
    import warnings

    import dsvm

    X, y = load_libsvm("a9a/a9a.xz", 123)
    Xt, yt = load_libsvm("a9a/a9a.t.xz", 123)
    X, y, Xt, yt = X[:12000], y[:12000], Xt[:8000], yt[:8000]  # (a slice: seconds)
    by_label = np.argsort(y, kind="stable")
    store = dsvm.write_arrays(tmp_path / "sorted.zarr", X[by_label], y[by_label],
                              chunk_rows=2000)  # 6 chunks: the first three all negative
    alphas = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2]
    common = dict(solver="sgd", random_state=0, max_epochs=3, tol=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # (the fold warns when it misses a class)
        cv = SVMClassifierCV(alphas=alphas, **common).fit(store)
    separate = [SVMClassifier(alpha=a, **common).fit(store).score(Xt, yt) for a in alphas]
    assert cv.score(Xt, yt) >= max(separate) - 0.003, (cv.alpha_, separate)
    assert len(set(cv.cv_results_["mean_test_score"])) > 1  # the candidates are ranked


def test_regressor_picks_a_sensible_alpha_on_diabetes():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    reg = SVMRegressorCV(random_state=0).fit(X, y)
    scores = reg.cv_results_["mean_test_score"]
    assert reg.best_score_ == np.nanmax(scores) > 0.3
    assert scores[-1] < reg.best_score_ - 0.1  # the strongest alpha underfits: not chosen
    assert reg.score(X, y) > 0.4  # raw units: the scaled model folded back


def test_cli_trains_a_grid_saves_the_best_and_info_shows_the_table(tmp_path, capsys):
    import dsvm
    from dsvm.cli import main

    X, y = problem(2)
    data = tmp_path / "d.zarr"
    dsvm.write_arrays(data, X.astype(np.float32), y, chunk_rows=CHUNK)
    out = tmp_path / "m.dsvm"
    assert main(["train", str(data), "--alpha", "1e-4,1e-2,1", "--epochs", "3",
                 "--out", str(out), "--quiet"]) == 0
    assert "<- best" in capsys.readouterr().err
    model = dsvm.load(out)
    chosen = SVMClassifierCV(alphas=[1e-4, 1e-2, 1.0], max_epochs=3, random_state=0).fit(data)
    assert chosen.evaluate(data)["objective"] > 0 and chosen.score(data) > 0.9
    assert type(model) is SVMClassifier and model.alpha in (1e-4, 1e-2, 1.0)
    assert main(["info", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "alpha_grid" in shown and "held_out_accuracy" in shown
    assert shown.count("<- best") == 1
    assert main(["train", str(data), "--alpha", "1e-5,abc", "--out",
                 str(tmp_path / "x.dsvm")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--alpha" in lines[0] and "1e-5,abc" in lines[0]
    # --alpha auto (the grid's word): was "--alpha must be a float ... Got 'auto' instead."
    assert main(["train", str(data), "--alpha", "auto", "--out",
                 str(tmp_path / "x.dsvm")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--alphas auto chooses a grid" in lines[0]


def fit_and_resume(tmp_path, kw):
    """(the uninterrupted 8-epoch grid, the grid stopped at 3 epochs and resumed to 8, the
    checkpoint, (X, y)) of ``SVMClassifierCV(**kw)``, checked to end alike: a candidate froze
    on the way, and the same alpha and model."""
    X, y = problem(2)
    ckpt = tmp_path / "grid.ckpt"
    full = SVMClassifierCV(max_epochs=8, **kw).fit(X, y)
    assert 0 < full.cv_results_["n_epochs"].min() < 8  # a candidate froze on the way
    SVMClassifierCV(max_epochs=3, checkpoint=ckpt, **kw).fit(X, y)
    resumed = SVMClassifierCV(max_epochs=8, checkpoint=ckpt, **kw).fit(X, y, resume=True)
    assert resumed.alpha_ == full.alpha_
    np.testing.assert_array_equal(resumed.coef_, full.coef_)
    return full, resumed, ckpt, (X, y)


def test_a_grid_resumed_from_its_checkpoint_is_the_uninterrupted_grid(tmp_path, capsys):
    """checkpoint= writes the stacked state after every epoch; resume=True replays the
    grid's bookkeeping (scores one epoch late, stopping rules, freezes and their counters)
    from the history and ends where the uninterrupted grid ends: same alpha, model, scores
    and epochs per candidate. Another grid of alphas is refused; the CLI takes --resume."""
    kw = dict(alphas=[1e-5, 1e-4, 1e-3, 1e-2], solver="sgd", random_state=0, chunk_rows=CHUNK,
              tol=3e-3, n_iter_no_change=2)
    full, resumed, ckpt, (X, y) = fit_and_resume(tmp_path, kw)
    for key in ("n_epochs", "test_score_by_epoch", "mean_test_score"):
        np.testing.assert_array_equal(resumed.cv_results_[key], full.cv_results_[key])
    np.testing.assert_allclose(resumed.cv_results_["test_objective_by_epoch"],
                               full.cv_results_["test_objective_by_epoch"], rtol=1e-12)
    with pytest.raises(ValueError, match="grid_alphas"):
        SVMClassifierCV(max_epochs=8, checkpoint=ckpt, **{**kw, "alphas": [1e-5, 1e-4]}).fit(
            X, y, resume=True)
    # from the shell: --checkpoint and --resume with a grid (as any fit)
    import dsvm
    from dsvm.cli import main

    data = tmp_path / "d.zarr"
    dsvm.write_arrays(data, X.astype(np.float32), y, chunk_rows=CHUNK)
    args = ["train", str(data), "--alpha", "1e-4,1e-2", "--checkpoint", str(tmp_path / "c.ckpt"),
            "--quiet"]
    assert main([*args, "--epochs", "2", "--out", str(tmp_path / "a.dsvm")]) == 0
    assert main([*args, "--epochs", "3", "--resume", "--out", str(tmp_path / "b.dsvm")]) == 0
    assert dsvm.load_checkpoint(tmp_path / "c.ckpt").epoch == 3
    capsys.readouterr()


def test_a_cv_model_of_a_frame_with_a_text_column_saves_what_predicting_the_frame_needs(
        tmp_path):
    """``SVMClassifierCV().fit(frame)`` with a text column, saved and loaded: the model file had
    no hashing ("hashing: none"), and the loaded model refused the frame it was trained on
    ("X holds text ... this model was trained on numbers only"); ``best_estimator_`` too."""
    import warnings

    import pandas as pd

    import dsvm

    rng = np.random.default_rng(0)
    n = 1200
    frame = pd.DataFrame({"income": rng.integers(10_000, 200_000, n), "score": rng.normal(
        size=n), "city": rng.choice(["paris", "oslo", "lima"], n)})
    y = np.where((frame.income - 1e5) / 5e4 + frame.score + (frame.city == "oslo") > 0,
                 "good", "bad")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = SVMClassifierCV(random_state=0, n_alphas=3, max_epochs=3).fit(frame, y)
    expected = cv.predict(frame)
    assert (expected == y).mean() > 0.9
    np.testing.assert_array_equal(cv.best_estimator_.predict(frame), expected)
    cv.save(tmp_path / "cv.dsvm")
    loaded = dsvm.load(tmp_path / "cv.dsvm")
    assert loaded.hashing_["categorical"] == ["city"]
    np.testing.assert_array_equal(loaded.predict(frame), expected)
