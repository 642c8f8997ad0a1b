"""SVMClassifierCV(solver="cocoa") (#27): K alphas of CoCoA+ in one read per epoch, with K dual
vectors per row (dsvm.solvers.cocoa_grid), scored on the rows held out of every chunk."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm import SVMClassifier, SVMClassifierCV
from dsvm.data.duals import MemoryDualStore
from dsvm.data.fold import fold_for
from dsvm.data.order import draw_seed
from dsvm.data.sources import ArraySource
from dsvm.engine.cocoa_tasks import CocoaRound
from dsvm.solvers.cocoa import CocoaSolver
from dsvm.solvers.cocoa_grid import CocoaCandidates
from dsvm.solvers.held_out import HeldOutRows
from dsvm.training.cocoa_grid import fit_cocoa_grid
from dsvm.training.spec import FitSpec
from tests.conftest import load_libsvm
from tests.distributed.test_cocoa import numpy_cocoa

ROWS, CHUNK, ALPHAS = 600, 100, [1e-3, 1e-2, 1e-1]


def problem(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(ROWS, 5))
    return X, np.where(X @ rng.normal(size=5) + 0.3 * rng.normal(size=ROWS) > 0, 1.0, -1.0)


def grid_spec(**kw):
    params = SVMClassifier(solver="cocoa", random_state=0, n_streams=2, chunk_rows=CHUNK,
                           local_iters=1.5, shuffle_window=2, scale=False, max_epochs=3,
                           tol=None, n_iter_no_change=50).get_params()
    params.update(kw)
    return FitSpec.from_params("SVMClassifierCV", "classification", {**params, "alpha": 1.0})


def grid_fit(X, y, **kw):
    return fit_cocoa_grid(grid_spec(**kw), X, y, alphas=ALPHAS)


def the_fold(X):
    return fold_for(draw_seed(0), 0.1, ArraySource(X, np.zeros(len(X)), None,
                                                     chunk_rows=CHUNK))


def test_each_candidate_is_the_cocoa_fit_of_its_alpha_on_the_training_rows():
    """Candidate k after the grid's epochs is CoCoA+ of alpha_k alone, written out in NumPy,
    on the rows the grid trains on (the held rows of every chunk left out, C = 1/(alpha n)
    of those rows), with the same chunk dealing, windows and coordinate orders."""
    X, y = problem()
    _, report = grid_fit(X, y)
    assert list(report.epochs_run) == [3, 3, 3]
    fold = the_fold(X)
    for k, alpha in enumerate(ALPHAS):
        w = numpy_cocoa(X, y, alpha, 3, 2, CHUNK, 2, 1.5, draw_seed(0), held=fold)
        own = report.candidate_state(k)
        np.testing.assert_allclose(own.coef.ravel(), w[:-1], rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(own.intercept, w[-1:], rtol=1e-9, atol=1e-10)


def test_scores_gaps_and_the_published_best():
    """Every epoch records each candidate's duality gap and held-out score; the best by the
    final held-out accuracy is published as coef_/intercept_ without a refit."""
    X, y = problem()
    clf = SVMClassifierCV(solver="cocoa", alphas=ALPHAS, random_state=0, n_streams=2,
                          chunk_rows=CHUNK, local_iters=1.5, scale=False, max_epochs=3,
                          tol=None, n_iter_no_change=50).fit(X, y)
    for h in clf.history_:
        assert len(h["grid_duality_gaps"]) == 3 and min(h["grid_duality_gaps"]) >= -1e-12
    gaps = np.array([h["grid_relative_gaps"] for h in clf.history_])
    assert np.all(gaps[-1] < gaps[0])  # each candidate's gap came down
    results = clf.cv_results_
    assert results["test_score_by_epoch"].shape == (3, 3)
    best = int(np.argmax(results["mean_test_score"]))
    assert clf.alpha_ == ALPHAS[best] and clf.best_score_ == results["mean_test_score"][best]
    # the published model is the candidate's, the intercept its bias feature's weight
    X_held = np.concatenate([c * CHUNK + the_fold(X).held_rows(c, CHUNK)
                             for c in range(ROWS // CHUNK)])
    accuracy = np.mean(clf.predict(X[X_held]) == y[X_held])
    assert accuracy == pytest.approx(clf.best_score_, abs=1e-12)


def test_a_candidate_frozen_on_its_gap_stops_changing():
    """tol on the relative duality gap freezes the strongly regularised candidate first: it
    stops after the epoch whose starting gap met tol, its model is then that of its own fit
    after those epochs (no more steps), while the others go on."""
    X, y = problem()
    record, report = grid_fit(X, y, tol=6e-3, max_epochs=6)
    epochs = report.epochs_run
    assert epochs[2] < 6 and epochs[0] == 6, epochs
    fold = the_fold(X)
    for k in (0, 2):
        w = numpy_cocoa(X, y, ALPHAS[k], int(epochs[k]), 2, CHUNK, 2, 1.5, draw_seed(0),
                        held=fold)
        np.testing.assert_allclose(report.candidate_state(k).coef.ravel(), w[:-1],
                                   rtol=1e-9, atol=1e-10)
    frozen_at = int(epochs[2])
    gaps = [h["grid_relative_gaps"][2] for h in record.history]
    assert gaps[frozen_at - 1] <= 6e-3 and len(set(gaps[frozen_at - 1:])) == 1
    assert record.history[frozen_at - 1]["grid_frozen"] == [2]
    assert record.history[frozen_at - 1]["grid_frozen_on_gap"] == [2]


def test_three_classes_each_candidate_is_the_grid_of_its_alpha_alone():
    """K alphas x 3 classes (one-vs-rest) in one pass: each candidate's rows of the stacked
    model are what a grid of its alpha alone trains (the same held rows, orders and C)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(ROWS, 5))
    y = np.argmax(X @ rng.normal(size=(5, 3)) + 0.3 * rng.normal(size=(ROWS, 3)), axis=1)
    _, report = grid_fit(X, y)
    for k, alpha in enumerate(ALPHAS):
        alone = fit_cocoa_grid(grid_spec(), X, y, alphas=[alpha])[1].candidate_state(0)
        own = report.candidate_state(k)
        assert own.coef.shape == (3, 5)
        np.testing.assert_allclose(own.coef, alone.coef, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(own.intercept, alone.intercept, rtol=1e-9, atol=1e-12)


def test_a_candidate_whose_held_out_objective_stalls_is_frozen():
    """The held-out rule of the stochastic grid (GridTracker), n_iter_no_change=1: the weakly
    regularised candidate's held-out objective rises after epoch 2 while its duality gap is
    still far above tol, and it is frozen after epoch 3 (the scores come one epoch late) with
    the model of its own fit after 3 epochs; the fit stops when no candidate trains."""
    X, y = problem()
    record, report = grid_fit(X, y, tol=0.01, max_epochs=8, n_iter_no_change=1)
    objectives = [h["grid_objectives"][0] for h in record.history]
    assert objectives[1] > objectives[0]  # (the model after epoch 2 scored worse)
    third = record.history[2]
    assert 0 in third["grid_frozen"] and 0 not in third["grid_frozen_on_gap"]
    assert third["grid_relative_gaps"][0] > 0.5
    assert report.epochs_run[0] == 3 and report.epochs_run.max() < 8, report.epochs_run
    w = numpy_cocoa(X, y, ALPHAS[0], 3, 2, CHUNK, 2, 1.5, draw_seed(0), held=the_fold(X))
    np.testing.assert_allclose(report.candidate_state(0).coef.ravel(), w[:-1], rtol=1e-9,
                               atol=1e-10)
    assert record.converged and "every candidate stopped" in record.stop_reason


def test_a_grid_resumed_from_its_checkpoint_is_the_uninterrupted_grid(tmp_path):
    """Interrupted after epoch 5 (one candidate frozen on its gap after epoch 4) and resumed
    to epoch 6: the same candidates, scores, gaps and freezes as the grid run at once; only
    the duals' version the checkpoint names is kept next to it."""
    from dsvm.data.duals import DualStore

    X, y = problem()
    whole_record, whole = grid_fit(X, y, tol=6e-3, max_epochs=6)
    ckpt = str(tmp_path / "grid.ckpt")
    first, _ = grid_fit(X, y, tol=6e-3, max_epochs=5, checkpoint=ckpt)
    assert [h.get("grid_frozen") for h in first.history][3] == [2]
    assert DualStore(f"{ckpt}.duals", 3).versions() == [5]
    record, report = fit_cocoa_grid(grid_spec(tol=6e-3, max_epochs=6, checkpoint=ckpt), X, y,
                                    alphas=ALPHAS, resume=True)
    assert list(report.epochs_run) == list(whole.epochs_run)
    for k in range(3):
        np.testing.assert_array_equal(report.candidate_state(k).coef,
                                      whole.candidate_state(k).coef)
    np.testing.assert_array_equal(report.cv_results()["test_score_by_epoch"],
                                  whole.cv_results()["test_score_by_epoch"])
    assert [h["grid_duality_gaps"] for h in record.history] == \
        [h["grid_duality_gaps"] for h in whole_record.history]
    with pytest.raises(ValueError, match=r"grid_alphas=\[0.001, 0.01, 0.1\] but this grid has"):
        fit_cocoa_grid(grid_spec(max_epochs=6, checkpoint=ckpt), X, y, alphas=[1e-3, 1e-2],
                       resume=True)


def test_a_rerun_round_writes_the_same_duals_and_returns_the_same_change():
    """A round task re-run (its worker lost) reads the same version of the duals and writes
    the same next version, for every candidate. (What a killed worker does to a fit is what
    its re-run task does: the single CoCoA+ fit is the grid of one, and
    tests/distributed/test_cocoa.py kills a worker of separate processes mid-epoch; a second
    such cluster for the grid cost 25 s of the suite's budget.)"""
    X, y = problem()
    source = ArraySource(X, y, None, chunk_rows=CHUNK)
    solvers = tuple(CocoaSolver(alpha=a, local_iters=1.5) for a in ALPHAS)
    held = HeldOutRows(the_fold(X), solvers, np.array([-1.0, 1.0]), "hinge")
    grid = CocoaCandidates(solvers, held=held, n_train=540)
    store = MemoryDualStore(3)
    rng = np.random.default_rng(1)
    coef, intercept = rng.normal(size=(3, 5)) * 0.1, np.zeros(3)
    task = CocoaRound(coef, intercept, solvers[0], np.array([-1.0, 1.0]), store, 0, 7, 2.0,
                      540, window=2, grid=grid)
    first = task(source, [0, 3, 4])
    duals = {c: store.read(c, 1, first_rows(source, held, c)) for c in (0, 3, 4)}
    again = task(source, [0, 3, 4])
    np.testing.assert_array_equal(again.dW, first.dW)
    np.testing.assert_array_equal(again.terms, first.terms)
    for c, d in duals.items():
        np.testing.assert_array_equal(store.read(c, 1, len(d)), d)
        assert d.shape[1] == 3 and np.all(d[:, 0] <= 1.0 / (ALPHAS[0] * 540) + 1e-12)
    assert np.count_nonzero(first.dW) > 0


def first_rows(source, held, chunk):
    n = source.chunk_n_rows(chunk)
    return n - int(held.fold.held_mask(chunk, n).sum())


def test_on_two_workers_from_zarr_the_grid_of_this_process(tmp_path, local_client):
    """From a zarr store on a 2-worker LocalCluster (the duals in a scratch store the workers
    share, the held rows scored by the round tasks): the models, gaps and held-out scores of
    the grid trained in this process."""
    import dsvm

    X, y = problem()
    store = dsvm.write_arrays(tmp_path / "p.zarr", X, y, chunk_rows=CHUNK, dtype=np.float64)
    common = dict(solver="cocoa", alphas=ALPHAS, random_state=0, n_streams=2,
                  local_iters=1.5, shuffle_window=2, scale=False, max_epochs=3, tol=None)
    here = SVMClassifierCV(chunk_rows=CHUNK, **common).fit(X, y)
    there = SVMClassifierCV(client=local_client, **common).fit(store.url)
    np.testing.assert_allclose(there.coef_, here.coef_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(there.intercept_, here.intercept_, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(there.cv_results_["test_score_by_epoch"],
                                  here.cv_results_["test_score_by_epoch"])
    np.testing.assert_allclose([h["grid_duality_gaps"] for h in there.history_],
                               [h["grid_duality_gaps"] for h in here.history_], atol=1e-9)


def test_a9a_the_chosen_alpha_is_as_good_as_the_best_separate_fit():
    """On a9a (a slice), the chosen alpha's test accuracy within 0.3 points of the best of the
    same alphas trained separately by CoCoA+ on all the training rows."""
    X, y = load_libsvm("a9a/a9a.xz", 123)
    Xt, yt = load_libsvm("a9a/a9a.t.xz", 123)
    X, y, Xt, yt = X[:12000], y[:12000], Xt[:8000], yt[:8000]
    n = X.shape[0]
    alphas = [0.01 / n, 0.1 / n, 1.0 / n, 10.0 / n, 100.0 / n]
    common = dict(solver="cocoa", random_state=0, max_epochs=3, tol=None, chunk_rows=1000,
                  local_iters=10.0)
    cv = SVMClassifierCV(alphas=alphas, **common).fit(X, y)
    separate = [SVMClassifier(alpha=a, **common).fit(X, y).score(Xt, yt) for a in alphas]
    assert cv.score(Xt, yt) >= max(separate) - 0.003, (cv.alpha_, separate)
    assert len(set(cv.cv_results_["mean_test_score"])) > 1


@pytest.mark.parametrize("kw, match", [
    (dict(cv=3), r"cv=3 with solver='cocoa'"),
    (dict(losses=["hinge", "squared_hinge"]), r"losses=\['hinge', 'squared_hinge'\] with "
                                              r"solver='cocoa'"),
    (dict(class_weights=[None, "balanced"]), r"class_weights=\[None, 'balanced'\] with"),
    (dict(rounds_per_epoch=2), r"rounds_per_epoch=2 with a grid"),
    (dict(kernel="rff"), r"kernel='rff'"),
    (dict(early_stopping=True), r"early_stopping=True"),
])
def test_what_the_cocoa_grid_does_not_do_is_refused(kw, match, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X, y = problem()
    with pytest.raises(ValueError, match=match) as caught:
        SVMClassifierCV(solver="cocoa", alphas=[1e-3, 1e-2], **kw).fit(X, y)
    assert "\n" not in str(caught.value)


def test_memory_refusal_counts_the_dual_vectors(monkeypatch):
    from dsvm.training import grid

    monkeypatch.setattr(grid, "worker_memory", lambda engine: 10_000)
    X, y = problem()
    # 2 states of 48 bytes x 4 copies fit; 2 alphas x 2 versions x 600 rows x 8 bytes do not
    with pytest.raises(ValueError, match=r"alphas=\[0.001, 0.01\].*19,200 bytes of dual"):
        SVMClassifierCV(solver="cocoa", alphas=[1e-3, 1e-2], chunk_rows=CHUNK).fit(X, y)
    monkeypatch.setattr(grid, "worker_memory", lambda engine: 100_000)
    SVMClassifierCV(solver="cocoa", alphas=[1e-3, 1e-2], chunk_rows=CHUNK,
                    max_epochs=1).fit(X, y)


@pytest.mark.distributed
@pytest.mark.timeout(240)
def test_the_window_on_a_memory_limited_cluster_counts_the_dual_vectors(tmp_path):
    """Workers with a memory limit: a stream's window holds every chunk of it when only the
    rows are counted, and fewer once the K dual vectors each row brings into the window are
    (8 alphas x 4 copies x 8 bytes a row, beside 8 float32 features)."""
    from distributed import Client, LocalCluster

    import dsvm
    from dsvm.distributed.engine import DaskEngine
    from dsvm.training.cocoa import cocoa_window
    from dsvm.training.cocoa_grid import DUAL_COPIES, dual_row_bytes
    from dsvm.training.inputs import source_of
    from dsvm.training.memory import budget_of

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=640 * 2**20) as cluster, Client(cluster) as client:
        engine = DaskEngine(client)
        budget = budget_of(engine.worker_memory(), n_streams=2)
        room = budget.usable - budget.process
        rows = int(room / 40) // 40  # chunks of about room / 40 bytes (8 float32 + y a row)
        data = dsvm.write_synthetic(tmp_path / "s.zarr", 16 * rows, 8, chunk_rows=rows)
        source, _ = source_of(data.url)
        duals = dual_row_bytes(8, 1, DUAL_COPIES)
        alone = cocoa_window(None, source, engine, state_bytes=0, n_streams=2)
        with_duals = cocoa_window(None, source, engine, state_bytes=0, n_streams=2,
                                  row_bytes=duals)
    assert alone.chunks >= 8  # a stream's 8 chunks in one window
    assert 1 <= with_duals.chunks < 8, (with_duals.describe(), duals)
