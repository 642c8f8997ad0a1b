"""class_weight, predict_proba and early stopping on held-out chunks (issue #16)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import expit

import dsvm
from dsvm import SVMClassifier
from tests.conftest import load_libsvm


@pytest.fixture(scope="module")
def unbalanced():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=3000) > 1.2, 1, -1)  # about 14% positives
    return X, y


def _clf(**kw):
    return SVMClassifier(**{**dict(alpha=1e-3, max_epochs=5, tol=None, random_state=0,
                                   chunk_rows=1000), **kw})


def test_class_weight_is_a_weight_on_every_row_of_the_class(unbalanced):
    X, y = unbalanced
    weighted = _clf(class_weight={1: 4.0}).fit(X, y)
    by_rows = _clf().fit(X, y, sample_weight=np.where(y == 1, 4.0, 1.0))
    np.testing.assert_array_equal(weighted.coef_, by_rows.coef_)


def test_balanced_weights_raise_the_minority_recall(unbalanced):
    from sklearn.metrics import balanced_accuracy_score

    X, y = unbalanced
    plain, balanced = _clf().fit(X, y), _clf(class_weight="balanced").fit(X, y)
    assert balanced_accuracy_score(y, balanced.predict(X)) > \
        balanced_accuracy_score(y, plain.predict(X)) + 0.02
    counts = np.array([(y == -1).sum(), (y == 1).sum()])
    explicit = _clf(class_weight=dict(zip([-1, 1], len(y) / (2 * counts)))).fit(X, y)
    np.testing.assert_allclose(balanced.coef_, explicit.coef_, rtol=1e-12)


def test_balanced_on_a_dataset_uses_the_recorded_class_counts(unbalanced, tmp_path):
    X, y = unbalanced
    ds = dsvm.write_arrays(tmp_path / "u.zarr", X, y, chunk_rows=1000, dtype="float64")
    assert ds.info()["class_counts"] == [int((y == -1).sum()), int((y == 1).sum())]
    kw = dict(class_weight="balanced", n_streams=1)
    np.testing.assert_array_equal(_clf(**kw).fit(ds).coef_, _clf(**kw).fit(X, y).coef_)


def test_class_weight_survives_save_load_and_resume(unbalanced, tmp_path):
    X, y = unbalanced
    ckpt = tmp_path / "c.ckpt"
    full = _clf(class_weight={1: 3.0}, max_epochs=4).fit(X, y)
    _clf(class_weight={1: 3.0}, max_epochs=2, checkpoint=ckpt).fit(X, y)
    resumed = _clf(class_weight={1: 3.0}, max_epochs=4, checkpoint=ckpt).fit(X, y, resume=True)
    np.testing.assert_array_equal(resumed.coef_, full.coef_)
    with pytest.raises(ValueError, match="class_weight"):
        _clf(class_weight={1: 2.0}, max_epochs=4, checkpoint=ckpt).fit(X, y, resume=True)
    full.save(tmp_path / "m.dsvm")
    assert dsvm.load(tmp_path / "m.dsvm").class_weight == {1: 3.0}


def test_class_weight_balanced_is_refused_by_partial_fit_and_bsgd(unbalanced):
    X, y = unbalanced
    with pytest.raises(ValueError, match="partial_fit"):
        _clf(class_weight="balanced").partial_fit(X, y, classes=[-1, 1])
    with pytest.raises(ValueError, match="bsgd"):
        _clf(solver="bsgd", class_weight={1: 2.0}).fit(X, y)


def test_predict_proba_for_the_logistic_loss_only(unbalanced):
    X, y = unbalanced
    clf = _clf(loss="logistic", solver="sgd").fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba[:, 1], expit(clf.decision_function(X)))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(proba))
    three = np.digitize(X[:, 1], [-0.5, 0.5])
    multi = _clf(loss="logistic", solver="sgd").fit(X, three).predict_proba(X)
    assert multi.shape == (len(X), 3)
    np.testing.assert_allclose(multi.sum(axis=1), 1.0)
    hinge = _clf().fit(X, y)
    assert not hasattr(hinge, "predict_proba")
    with pytest.raises(AttributeError, match="predict_proba"):
        hinge.predict_proba(X)


def test_calibrated_classifier_works(unbalanced):
    from sklearn.calibration import CalibratedClassifierCV

    X, y = unbalanced
    cal = CalibratedClassifierCV(_clf(), cv=3).fit(X, y)
    assert cal.predict_proba(X).shape == (len(X), 2)


@pytest.mark.realdata
@pytest.mark.slow
def test_a9a_logistic_log_loss_matches_logistic_regression():
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss

    X, y = load_libsvm("a9a/a9a.xz", 123)
    Xt, yt = load_libsvm("a9a/a9a.t.xz", 123)
    alpha = 1.0 / X.shape[0]
    lr = LogisticRegression(C=1.0 / (X.shape[0] * alpha), max_iter=1000).fit(X, y)
    ours = SVMClassifier(solver="sgd", loss="logistic", alpha=alpha, random_state=0).fit(X, y)
    assert log_loss(yt, ours.predict_proba(Xt)) <= 1.01 * log_loss(yt, lr.predict_proba(Xt))


@pytest.mark.realdata
@pytest.mark.slow
def test_a9a_early_stopping_stops_early_near_the_full_run():
    X, y = load_libsvm("a9a/a9a.xz", 123)
    Xt, yt = load_libsvm("a9a/a9a.t.xz", 123)
    # the same solver both ways (solver="auto" picks CoCoA+ for the full run: early stopping
    # is what makes it pick sgd), so that the comparison is of stopping only
    kw = dict(alpha=1.0 / X.shape[0], max_epochs=40, random_state=0, solver="sgd")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = SVMClassifier(tol=None, **kw).fit(X, y)
        early = SVMClassifier(early_stopping=True, n_iter_no_change=5, **kw).fit(X, y)
    assert early.n_iter_ < 40
    assert all(h["holdout_objective"] is not None for h in early.history_)
    assert abs(early.score(Xt, yt) - full.score(Xt, yt)) <= 0.003


def test_early_stopping_holds_out_rows_of_every_chunk_and_resumes(unbalanced, tmp_path):
    """The rows of every chunk that the row fold holds out (dsvm.data.fold) are left out of
    training and score each epoch's start model (the objective one epoch late, the last by a
    pass of its own); a fit resumed from a checkpoint stops where the whole fit stopped."""
    from dsvm.data.fold import fold_for
    from dsvm.data.sources import ArraySource

    X, y = unbalanced
    ckpt = tmp_path / "es.ckpt"
    kw = dict(early_stopping=True, validation_fraction=0.2, tol=1e-2, max_epochs=20)
    full = _clf(**kw).fit(X, y)
    fold = fold_for(0, 0.2, ArraySource(X, np.zeros(len(X)), None, chunk_rows=1000))
    held = sum(int(fold.held_mask(c, 1000).sum()) for c in range(3))
    assert held == 600  # under EXACT_BELOW rows: exactly round(0.2 n)
    assert {h["n_rows"] for h in full.history_} == {3000 - held}  # 3 chunks of 1000 rows
    assert full.n_iter_ < 20 and full.stop_reason_.startswith("early stopping")
    assert all(h["holdout_objective"] is not None for h in full.history_)
    _clf(checkpoint=ckpt, **{**kw, "max_epochs": 2}).fit(X, y)
    resumed = _clf(checkpoint=ckpt, **kw).fit(X, y, resume=True)
    assert resumed.n_iter_ == full.n_iter_
    np.testing.assert_array_equal(resumed.coef_, full.coef_)
    np.testing.assert_allclose([h["holdout_objective"] for h in resumed.history_],
                               [h["holdout_objective"] for h in full.history_], rtol=1e-12)


def test_early_stopping_on_a_few_rows_holds_out_one():
    """By its hash alone the row fold held out no row of these 8 at 1% (the fit was refused);
    on small data it holds out exactly max(1, round(fraction n)) rows, so early stopping has a
    row to score and 7 to train on."""
    from dsvm.data.fold import RowFold

    X = np.arange(16, dtype=float).reshape(8, 2)
    y = np.array([1, -1] * 4)
    assert not RowFold(0, 0.01).held_mask(0, 8).any()
    est = _clf(early_stopping=True, validation_fraction=0.01, max_epochs=2).fit(X, y)
    assert {h["n_rows"] for h in est.history_} == {7}


