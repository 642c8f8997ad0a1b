"""Grids with other axes than alpha (#27): ``alphas`` x ``l1_ratios`` x ``losses`` x
``class_weights``, every candidate trained in the same pass (dsvm.solvers.grid,
dsvm.training.grid_axes), each the single fit of its parameters."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm import SVMClassifier, SVMClassifierCV, SVMRegressor, SVMRegressorCV
from dsvm.combine import combiner_for
from dsvm.data.fold import fold_for
from dsvm.data.order import draw_seed
from dsvm.data.sources import ArraySource
from dsvm.solvers.held_out import HeldOutRows
from dsvm.training.engines import engine_for
from dsvm.training.grid import fit_grid
from dsvm.training.loop import FitPlan, run_epochs
from dsvm.training.spec import FitSpec
from dsvm.training.stochastic import start
from dsvm.training.window import window_for
from tests.test_cv import CHUNK, ROWS, count_chunk_reads, problem


def imbalanced(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A binary problem with about 15% positives (class weights change the models)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(ROWS, 10))
    w = rng.normal(size=10)
    return X, np.where(X @ w + 0.5 * rng.normal(size=ROWS) > 1.5, 1, -1)


def regression(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Targets centred far from 0 with heavy-tailed noise: the squared and the
    epsilon-insensitive losses start their intercepts apart (mean against median)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(ROWS, 10))
    return X, 5.0 + X @ rng.normal(size=10) + rng.standard_t(2, size=ROWS)


def single_fit(X, y, estimator, params, epochs):
    """The fit of one candidate's parameters through the grid's epoch loop, row orders and
    held-out rows (the same seed: the same rows left out of every chunk), with its class
    weight (test_cv's helper, for a classifier or a regressor, weighted)."""
    task = "classification" if estimator is SVMClassifier else "regression"
    spec = FitSpec.from_params(estimator.__name__, task,
                               {**params, "max_epochs": epochs, "tol": None})
    source = ArraySource(X, np.asarray(y, np.float64), None, chunk_rows=CHUNK)
    seed = draw_seed(params["random_state"])
    with engine_for(X) as engine:
        record = start(spec, engine, source, classes=None, text=None, seed=seed, fmap=None)
        solver = spec.make_solver(source.n_samples)
        held = HeldOutRows(fold_for(seed, 0.1, source), (solver,), record.class_values,
                           spec.loss)
        window = window_for(spec.shuffle_window, source, n_streams=record.n_streams)
        plan = FitPlan(seed=seed, n_streams=record.n_streams, shuffle_window=window.chunks,
                       held_out=held)
        return run_epochs(engine=engine, solver=solver, combiner=combiner_for(solver),
                          source=source, classes=record.class_values,
                          class_weight=record.class_weight, state=record.state, plan=plan,
                          first_epoch=0, n_epochs=epochs)


def sparse_problem(seed: int = 0):
    """CSR rows of 4000 features, 8 of them set per row: a feature that no row of one stream
    has is exactly 0 there, so the combine of an L1 candidate (supports intersected) and of
    an L2 one (plain average) differ on it."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    cols = rng.integers(0, 4000, size=(ROWS, 8))
    X = sp.csr_matrix((rng.normal(size=ROWS * 8), cols.ravel(), np.arange(0, ROWS * 8 + 1, 8)),
                      shape=(ROWS, 4000))
    X.sum_duplicates()
    return X, np.where(X @ rng.normal(size=4000) > 0, 1, -1)


GRIDS = {
    # name: (estimator, data, fixed parameters, axes)
    "losses-sgd": (SVMClassifier, lambda: problem(2), dict(solver="sgd"),
                   dict(losses=["hinge", "logistic", "squared_hinge"])),
    "losses-pegasos-ovr": (SVMClassifier, lambda: problem(3), dict(solver="pegasos"),
                           dict(losses=["hinge", "logistic"])),
    "class-weights-pegasos": (SVMClassifier, imbalanced, dict(solver="pegasos"),
                              dict(class_weights=[None, "balanced", {1: 3.0}])),
    "class-weights-x-losses-sgd": (SVMClassifier, imbalanced, dict(solver="sgd"),
                                   dict(class_weights=["balanced", None],
                                        losses=["hinge", "squared_hinge"])),
    "l1-ratios": (SVMClassifier, lambda: problem(2), dict(solver="sgd", penalty="elasticnet"),
                  dict(l1_ratios=[0.0, 0.5, 1.0])),
    "regressor-losses": (SVMRegressor, regression, dict(solver="sgd"),
                         dict(losses=["epsilon_insensitive", "squared"])),
    "l1-ratios-sparse-2-streams": (SVMClassifier, sparse_problem,
                                   dict(solver="sgd", penalty="elasticnet", n_streams=2),
                                   dict(l1_ratios=[0.0, 0.5])),
}


@pytest.mark.parametrize("name", list(GRIDS))
def test_each_candidate_of_a_product_grid_is_the_single_fit_of_its_parameters(name):
    """Stacking is exact along every axis: candidate k's state after the grid is the state of
    the fit of its parameters alone (its alpha, loss, l1_ratio, class weight) on the same
    training rows for the epochs it trained, bitwise, steps and averaging weight included.
    (The losses change the held-out objectives, the class weights the rows' weights and
    Pegasos' ball, the regressor's losses the intercept's start, l1_ratio the prox steps.)"""
    estimator, data, fixed, axes = GRIDS[name]
    X, y = data()
    params = estimator(random_state=3, chunk_rows=CHUNK, scale=False, max_epochs=4,
                       n_iter_no_change=2, **fixed).get_params()
    task = "classification" if estimator is SVMClassifier else "regression"
    spec = FitSpec.from_params(estimator.__name__ + "CV", task, params)
    alphas = [1e-4, 1e-2]
    record, report = fit_grid(spec, X, y, alphas=alphas, axes=axes)
    candidates = report.cv_results()["params"]
    n_other = int(np.prod([len(v) for v in axes.values()]))
    assert len(candidates) == len(alphas) * n_other == len(report.epochs_run)
    assert len({tuple(sorted(map(repr, c.items()))) for c in candidates}) == len(candidates)
    for k, candidate in enumerate(candidates):
        alone = single_fit(X, y, estimator, {**params, **candidate},
                           int(report.epochs_run[k])).state
        grid = report.candidate_state(k)
        for part in ("coef", "intercept", "avg_coef", "avg_intercept"):
            ours, theirs = getattr(grid, part), getattr(alone, part)
            assert (ours is None) == (theirs is None), (candidate, part)
            if ours is not None:
                np.testing.assert_array_equal(ours, theirs, err_msg=f"{candidate} {part}")
        assert (grid.t, grid.n_avg) == (alone.t, alone.n_avg)
    # the candidates differ along every axis (no axis silently ignored)
    models = [report.candidate_state(k).model()[0] for k in range(len(candidates))]
    assert all(not np.array_equal(models[i], models[j])
               for i in range(len(models)) for j in range(i))


def test_the_published_model_is_the_chosen_candidates_plain_fit():
    """best_estimator_ is the plain estimator with the chosen parameters, and its model is
    the grid's (no refit); the chosen values are published as sklearn names them."""
    X, y = imbalanced()
    clf = SVMClassifierCV(alphas=[1e-4, 1e-2], losses=["hinge", "logistic"],
                          class_weights=[None, "balanced"], solver="sgd", random_state=0,
                          chunk_rows=CHUNK, max_epochs=3).fit(X, y)
    res = clf.cv_results_
    assert set(res) >= {"param_alpha", "param_loss", "param_class_weight", "params"}
    assert "param_l1_ratio" not in res  # (only the axes given)
    assert list(res["param_loss"][:4]) == ["hinge", "hinge", "logistic", "logistic"]
    assert list(res["param_class_weight"][::4]) == [None, "balanced"]
    best = clf.best_index_
    assert clf.best_params_ == res["params"][best]
    assert (clf.alpha_, clf.loss_, clf.class_weight_) == (
        res["param_alpha"][best], res["param_loss"][best], res["param_class_weight"][best])
    assert clf.l1_ratio_ is None  # (penalty "l2")
    plain = clf.best_estimator_
    assert type(plain) is SVMClassifier
    assert (plain.alpha, plain.loss, plain.class_weight) == (clf.alpha_, clf.loss_,
                                                             clf.class_weight_)
    np.testing.assert_array_equal(clf.coef_, plain.coef_)
    np.testing.assert_array_equal(clf.alphas_, [1e-4, 1e-2])


def test_with_k_folds_the_published_model_is_the_plain_fit_of_the_chosen_parameters():
    """cv=k with other axes: the k + 1 stacks of every candidate train in the same pass, and
    the chosen candidate's model (stack 0, every row) is SVMClassifier's with its parameters,
    on 2 streams with windows of 2 chunks."""
    X, y = imbalanced(1)
    kw = dict(solver="sgd", random_state=3, chunk_rows=CHUNK, max_epochs=3, tol=None,
              n_streams=2, shuffle_window=2)
    cv = SVMClassifierCV(alphas=[1e-4, 1e-2], losses=["hinge", "logistic"],
                         class_weights=[None, {1: 3.0}], cv=2, **kw).fit(X, y)
    assert set(cv.cv_results_) >= {"split0_test_score", "split1_test_score", "param_loss"}
    plain = SVMClassifier(**cv.best_params_, **kw).fit(X, y)
    np.testing.assert_array_equal(cv.coef_, plain.coef_)
    np.testing.assert_array_equal(cv.intercept_, plain.intercept_)


def test_plot_path_draws_a_line_per_combination_and_the_memory_check_counts_all(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    X, y = problem(2)
    kw = dict(alphas=[1e-4, 1e-2, 1.0], losses=["hinge", "logistic"], random_state=0,
              chunk_rows=CHUNK, max_epochs=2)
    ax = SVMClassifierCV(**kw).fit(X, y).plot_path()
    labels = [line.get_label() for line in ax.lines]
    assert "loss='hinge'" in labels and "loss='logistic'" in labels
    assert all(len(line.get_xdata()) == 3 for line in ax.lines if line.get_label()[:4] == "loss")
    from dsvm.training import grid

    monkeypatch.setattr(grid, "worker_memory", lambda engine: 100)
    with pytest.raises(ValueError, match=r"alphas=\[0.0001, 0.01, 1.0\] x 2 losses: 6 "
                                         r"candidate states.*fewer alphas or values of the "
                                         r"other axes"):
        SVMClassifierCV(**kw).fit(X, y)


def test_the_product_grid_reads_each_chunk_as_often_as_one_fit(monkeypatch):
    """One read per epoch whatever the axes: 2 alphas x 2 losses x 2 class weights read
    every chunk as often as one fit, plus the pass that scores the final models."""
    reads = count_chunk_reads(monkeypatch)
    X, y = imbalanced()
    common = dict(solver="sgd", random_state=5, chunk_rows=CHUNK, scale=False, max_epochs=3,
                  tol=None, n_iter_no_change=50)
    SVMClassifierCV(alphas=[1e-4, 1e-2], losses=["hinge", "logistic"],
                    class_weights=[None, "balanced"], **common).fit(X, y)
    grid_reads = dict(reads)
    reads.clear()
    SVMClassifier(alpha=1e-3, **common).fit(X, y)
    assert len(grid_reads) == ROWS // CHUNK
    assert grid_reads == {c: n + 1 for c, n in reads.items()}


def test_the_loss_that_fits_the_problem_is_chosen():
    """Positives far beyond the margin (a second, distant cluster): the squared loss (LS-SVM)
    pays for being right by too much, tilts its boundary into the near positives and loses
    ten points of accuracy (held-out 0.78-0.82 against 0.92-0.95 here); the hinge does not.
    The choice is the hinge at every seed, and it is the loss whose separate fit scores
    better on fresh data."""
    rng = np.random.default_rng(0)

    def draw(n):
        y = np.where(rng.random(n) < 0.5, 1, -1)
        X = rng.normal(scale=0.7, size=(n, 2)) + np.outer(y, [1.0, 0.0])
        far = (y == 1) & (rng.random(n) < 0.3)
        X[far, 0] += 8.0
        return X, y

    X, y = draw(ROWS)
    Xt, yt = draw(2000)
    # (scaled columns: SGD's steps on the squared loss stay finite on the far rows)
    common = dict(solver="sgd", chunk_rows=CHUNK, scale=True, max_epochs=4, tol=None)
    for seed in (0, 1, 2):
        cv = SVMClassifierCV(alphas=[1e-4, 1e-3], losses=["squared", "hinge"],
                             random_state=seed, **common).fit(X, y)
        assert cv.loss_ == "hinge", cv.cv_results_["mean_test_score"]
        scores = cv.cv_results_["mean_test_score"]
        assert scores[2:].min() > scores[:2].max() + 0.05  # by a margin: a robust choice
    separate = {loss: SVMClassifier(loss=loss, alpha=1e-4, random_state=0, **common).fit(
        X, y).score(Xt, yt) for loss in ("squared", "hinge")}
    assert separate["hinge"] > separate["squared"] + 0.05


def test_combinations_that_cannot_share_a_pass_are_refused():
    X, y = problem(2)
    kw = dict(alphas=[1e-3, 1e-2], max_epochs=1, chunk_rows=CHUNK)
    with pytest.raises(ValueError, match=r"l1_ratios=\[0.0, 0.5\].*penalty='elasticnet'.*"
                                         r"penalty='l2'"):
        SVMClassifierCV(l1_ratios=[0.0, 0.5], **kw).fit(X, y)
    with pytest.raises(ValueError, match=r"l1_ratios=\[0.0, 0.5\]: solver='pegasos' has no "
                                         r"L1 part"):
        SVMClassifierCV(l1_ratios=[0.0, 0.5], penalty="elasticnet", solver="pegasos",
                        **kw).fit(X, y)
    with pytest.raises(ValueError, match=r"'losses' parameter of SVMClassifierCV.*"
                                         r"'epsilon_insensitive'"):
        SVMClassifierCV(losses=["hinge", "epsilon_insensitive"], **kw).fit(X, y)
    with pytest.raises(ValueError, match=r"'losses' parameter of SVMRegressorCV.*'hinge'"):
        SVMRegressorCV(losses=["squared", "hinge"], **kw).fit(X, y.astype(float))
    with pytest.raises(ValueError, match=r"'l1_ratios' parameter.*1.5"):
        SVMClassifierCV(l1_ratios=[0.5, 1.5], penalty="elasticnet", **kw).fit(X, y)
    with pytest.raises(ValueError, match=r"'class_weights' parameter.*'heavy'"):
        SVMClassifierCV(class_weights=[None, "heavy"], **kw).fit(X, y)
    with pytest.raises(TypeError, match="class_weights"):  # a regressor has no classes
        SVMRegressorCV(class_weights=[None, "balanced"])
    # the training layer refuses it too, before any work, whoever calls it
    spec = FitSpec.from_params("SVMRegressorCV", "regression",
                               SVMRegressor(max_epochs=1).get_params())
    with pytest.raises(ValueError, match="a regression has no classes"):
        fit_grid(spec, X, y.astype(float), alphas=[1e-3],
                 axes={"class_weights": [None, "balanced"]})
    # and the stacked solvers refuse candidates whose steps differ (an averaged L2 candidate
    # next to an elastic-net one: p = 0.75 with an average against p = 1 without)
    from dsvm.solvers.grid import CandidateGrid
    from dsvm.solvers.sgd import SGDSolver

    with pytest.raises(ValueError, match="candidates 0 and 1 take different steps"):
        CandidateGrid((SGDSolver(), SGDSolver(penalty="elasticnet", l1_ratio=0.5)))


def test_a_resumed_product_grid_is_the_uninterrupted_one_and_another_grid_is_refused(
        tmp_path):
    X, y = imbalanced()
    ckpt = tmp_path / "grid.ckpt"
    kw = dict(alphas=[1e-4, 1e-2], losses=["hinge", "logistic"],
              class_weights=[None, {1: 3.0}], solver="sgd", random_state=0, chunk_rows=CHUNK,
              tol=None)
    full = SVMClassifierCV(max_epochs=4, **kw).fit(X, y)
    SVMClassifierCV(max_epochs=2, checkpoint=ckpt, **kw).fit(X, y)
    resumed = SVMClassifierCV(max_epochs=4, checkpoint=ckpt, **kw).fit(X, y, resume=True)
    assert resumed.best_params_ == full.best_params_
    np.testing.assert_array_equal(resumed.coef_, full.coef_)
    np.testing.assert_array_equal(resumed.cv_results_["mean_test_score"],
                                  full.cv_results_["mean_test_score"])
    for other, name in ((dict(losses=["hinge"]), "grid_losses"),
                        (dict(class_weights=[None, {1: 4.0}]), "grid_class_weights"),
                        (dict(class_weights=None), "grid_class_weights")):
        with pytest.raises(ValueError, match=f"{name}="):
            SVMClassifierCV(max_epochs=4, checkpoint=ckpt, **{**kw, **other}).fit(
                X, y, resume=True)


def test_cli_list_flags_train_a_product_grid_and_bad_values_exit_2(tmp_path, capsys):
    import dsvm
    from dsvm.cli import main

    X, y = imbalanced()
    data = tmp_path / "d.zarr"
    dsvm.write_arrays(data, X.astype(np.float32), y, chunk_rows=CHUNK)
    out = tmp_path / "m.dsvm"
    assert main(["train", str(data), "--alpha", "1e-4,1e-2", "--loss", "hinge,logistic",
                 "--class-weight", "none,balanced,1:3", "--epochs", "2", "--out", str(out),
                 "--quiet"]) == 0
    log = capsys.readouterr().err
    assert "12 candidates (2 alphas x 2 losses x 3 class_weights)" in log
    assert log.count("<- best") == 1 and "balanced" in log and "1.0:3" in log
    model = dsvm.load(out)
    assert type(model) is SVMClassifier and model.loss in ("hinge", "logistic")
    assert main(["info", str(out)]) == 0
    shown = capsys.readouterr().out
    header = next(line for line in shown.splitlines() if "held_out_accuracy" in line)
    assert header.split() == ["alpha", "loss", "class_weight", "held_out_accuracy", "epochs"]
    assert shown.count("<- best") == 1
    # a list of one axis alone: a grid at the one --alpha
    assert main(["train", str(data), "--l1-ratio", "0,0.5", "--penalty", "elasticnet",
                 "--epochs", "1", "--out", str(tmp_path / "e.dsvm"), "--quiet"]) == 0
    assert "2 candidates (1 alpha x 2 l1_ratios)" in capsys.readouterr().err
    for args, flag in ((["--loss", "hinge,hing"], "--loss"),
                       (["--l1-ratio", "0,2", "--penalty", "elasticnet"], "--l1-ratio"),
                       (["--l1-ratio", "0,0.5"], "--penalty elasticnet"),
                       (["--class-weight", "none,heavy"], "--class-weight")):
        code = exit_code(main, ["train", str(data), *args, "--out", str(tmp_path / "x.dsvm"),
                                "--quiet"])
        lines = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and flag in lines[0], lines


def exit_code(main, argv):
    """The command's exit status, whether it returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code
