"""The capability matrix (#26): for every solver and every capability, the combination works, or
it is refused before any work with an error that says why it cannot apply. The README's table
is this one (``REFUSED``). A killed worker giving the same model is tested on real clusters:
tests/distributed/test_failures.py (stochastic, NESVM) and tests/distributed/test_cocoa.py."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dsvm

SOLVERS = ("pegasos", "sgd", "asset", "asset*", "nesvm", "bsgd", "cocoa")

# (solver, capability) -> what the refusal says (why it cannot apply)
REFUSED = {
    ("nesvm", "early_stopping"): "stops on tol",
    ("nesvm", "partial_fit"): "full-gradient method and has no partial_fit",
    ("cocoa", "partial_fit"): "keeps a dual variable per training row",
    ("cocoa", "warm_start"): "starts from zero duals",
    ("bsgd", "class_weight"): "supports neither sample weights nor class_weight",
    ("bsgd", "sample_weight"): "supports neither sample weights nor class_weight",
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1200, 6))
    scores = X @ rng.normal(size=(6, 3))
    y2 = np.where(scores[:, 0] + 0.3 * rng.normal(size=1200) > 0, 1, -1)
    y3 = np.argmax(scores + 0.3 * rng.normal(size=scores.shape), axis=1)
    return X, y2, y3


def _clf(solver, **kw):
    params = dict(solver=solver, alpha=1e-3, max_epochs=4, tol=None, random_state=0,
                  chunk_rows=200, budget=40, gamma=0.2)
    params.update(kw)
    return dsvm.SVMClassifier(**params)


def _fit(clf, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (ConvergenceWarning: 4 epochs)
        return clf.fit(*args, **kw)


def _refused_or(solver, capability, run):
    """Run ``run()``; for a refused combination, check it raises the reason before any work."""
    reason = REFUSED.get((solver, capability))
    if reason is None:
        return run()
    with pytest.raises(ValueError, match=reason):
        run()
    return None


@pytest.mark.parametrize("solver", SOLVERS)
def test_validation_set(data, solver):
    X, y, _ = data
    clf = _refused_or(solver, "validation", lambda: _fit(_clf(solver), X[:900], y[:900],
                                                         validation=(X[900:], y[900:])))
    scores = [h["val_accuracy"] for h in clf.history_]
    assert None not in scores and 0.8 < scores[-1] <= 1.0, scores
    assert scores[-1] == pytest.approx(clf.score(X[900:], y[900:]), abs=1e-12)


@pytest.mark.parametrize("solver", SOLVERS)
def test_early_stopping(data, solver):
    X, y, _ = data
    clf = _refused_or(solver, "early_stopping", lambda: _fit(
        _clf(solver, early_stopping=True, max_epochs=30, tol=1e-2), X, y))
    if clf is not None:  # (CoCoA+ may meet tol on its duality gap first)
        assert clf.history_[-1]["holdout_objective"] is not None and clf.n_iter_ < 30
        assert clf.stop_reason_.startswith(("early stopping", "tol met: the relative duality"))


@pytest.mark.parametrize("solver", SOLVERS)
def test_checkpoint_and_resume(data, solver, tmp_path):
    """A fit stopped during epoch 3 (a driver killed) resumes to the uninterrupted model."""
    from dsvm.engine.hooks import epoch_hook

    def stop_in_epoch_3(spec, state, history, converged):  # noqa: ANN001, ANN202
        if len(history) == 3:
            raise KeyboardInterrupt

    X, y, _ = data
    whole = _fit(_clf(solver), X, y)
    ckpt = tmp_path / "fit.ckpt"
    with epoch_hook(stop_in_epoch_3), pytest.raises(KeyboardInterrupt):
        _fit(_clf(solver, checkpoint=ckpt), X, y)
    assert 2 <= dsvm.load_checkpoint(ckpt).epoch <= 3
    resumed = _fit(_clf(solver, checkpoint=ckpt), X, y, resume=True)
    assert resumed.n_iter_ == whole.n_iter_
    np.testing.assert_array_equal(resumed.coef_, whole.coef_)


@pytest.mark.parametrize("solver", SOLVERS)
def test_class_weight_and_sample_weight(data, solver):
    """A class weight is that weight on the class's rows (the same model); with an intercept,
    a heavier positive class moves rows to it."""
    X, y, _ = data
    by_class = _refused_or(solver, "class_weight", lambda: _fit(
        _clf(solver, class_weight={1: 5.0}), X, y))
    by_row = _refused_or(solver, "sample_weight", lambda: _fit(
        _clf(solver), X, y, sample_weight=np.where(y == 1, 5.0, 1.0)))
    if by_class is None:
        return
    np.testing.assert_allclose(by_class.coef_, by_row.coef_, rtol=1e-9, atol=1e-12)
    if solver != "asset*":  # (no intercept: the positive share need not move)
        plain = _fit(_clf(solver), X, y)
        assert (by_class.predict(X) == 1).mean() > (plain.predict(X) == 1).mean()


@pytest.mark.parametrize("solver", SOLVERS)
def test_warm_start(data, solver):
    X, y, _ = data
    clf = _fit(_clf(solver, max_epochs=2), X, y)
    first = clf.n_iter_
    clf.set_params(warm_start=True)
    again = _refused_or(solver, "warm_start", lambda: _fit(clf, X, y))
    if again is not None:
        assert again.n_iter_ > first or solver == "nesvm"  # (NESVM: a fit from the model)
        assert again.score(X, y) > 0.85


@pytest.mark.parametrize("solver", SOLVERS)
def test_partial_fit(data, solver):
    X, y, _ = data
    clf = _refused_or(solver, "partial_fit",
                      lambda: _clf(solver).partial_fit(X, y, classes=[-1, 1]))
    if clf is not None:
        clf.partial_fit(X, y)
        assert clf.n_iter_ == 2


@pytest.mark.parametrize("solver", SOLVERS)
def test_multiclass_in_one_pass(data, solver):
    X, _, y3 = data
    clf = _fit(_clf(solver, max_epochs=3), X, y3)
    assert clf.classes_.tolist() == [0, 1, 2] and len(clf.history_) == 3
    assert clf.score(X, y3) > 0.6


@pytest.mark.parametrize("solver", SOLVERS)
def test_dataframe_and_dataset_inputs(data, solver, tmp_path):
    X, y, _ = data
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    # (two streams both ways: a small dataset trains in process on one per core)
    from_frame = _fit(_clf(solver, n_streams=2), frame, y)
    assert from_frame.feature_names_in_.tolist() == list(frame.columns)
    ds = dsvm.write_arrays(tmp_path / "d.zarr", X, y, chunk_rows=200, dtype=np.float64)
    from_dataset = _fit(_clf(solver, n_streams=2), ds)
    np.testing.assert_allclose(from_dataset.coef_, from_frame.coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("solver", SOLVERS)
def test_history_and_progress(data, solver, capsys):
    X, y, _ = data
    clf = _fit(_clf(solver, max_epochs=3, verbose=1), X, y)
    err = capsys.readouterr().err
    assert len(clf.history_) == 3 and all("objective" in h for h in clf.history_)
    assert err.count("epoch ") >= 3 and "published model:" in err
