"""SVMClassifier in process: scikit-learn conventions, determinism, dtypes, multiclass."""

from __future__ import annotations

import pickle
import time

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from dsvm import SVMClassifier


@pytest.mark.parametrize("solver", ["pegasos", "sgd"])
def test_learns_a_separable_problem(blobs, solver):
    X, y = blobs
    clf = SVMClassifier(solver=solver, alpha=1e-3, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.93
    assert clf.coef_.shape == (1, X.shape[1]) and clf.intercept_.shape == (1,)
    assert clf.n_features_in_ == 8 and clf.n_iter_ == len(clf.history_) >= 1
    assert set(np.unique(clf.predict(X))) <= {-1, 1}
    assert clf.predict(X).dtype == y.dtype  # labels keep their dtype


def test_float32_data_gives_float32_coef(blobs):
    X, y = blobs
    clf = SVMClassifier(alpha=1e-3, random_state=0, max_epochs=2, tol=None)
    assert clf.fit(X.astype(np.float32), y).coef_.dtype == np.float32
    assert clf.fit(X, y).coef_.dtype == np.float64


def test_same_seed_same_model_other_seed_differs(blobs):
    X, y = blobs
    a = SVMClassifier(random_state=7, max_epochs=3, tol=None, chunk_rows=100).fit(X, y).coef_
    b = SVMClassifier(random_state=7, max_epochs=3, tol=None, chunk_rows=100).fit(X, y).coef_
    c = SVMClassifier(random_state=8, max_epochs=3, tol=None, chunk_rows=100).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_partial_fit_epochs_equal_fit(blobs):
    X, y = blobs
    full = SVMClassifier(solver="sgd", random_state=3, max_epochs=3, tol=None, chunk_rows=128)
    full.fit(X, y)
    inc = SVMClassifier(solver="sgd", random_state=3, chunk_rows=128)
    for _ in range(3):
        inc.partial_fit(X, y, classes=[-1, 1])
    np.testing.assert_allclose(inc.coef_, full.coef_, rtol=1e-12, atol=1e-12)
    assert inc.n_iter_ == 3 and inc.t_ == full.t_


def test_dense_and_csr_inputs_agree(blobs):
    X, y = blobs
    kw = dict(random_state=1, max_epochs=3, tol=None, alpha=1e-3)
    dense = SVMClassifier(**kw).fit(X, y)
    csr = SVMClassifier(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(csr.predict(sp.csr_matrix(X)), dense.predict(X))


def test_multiclass_one_vs_rest_in_one_pass():
    rng = np.random.default_rng(0)
    centers = np.array([[0, 4], [4, 0], [-4, -4]], dtype=float)
    labels = rng.integers(0, 3, size=900)
    X = centers[labels] + rng.normal(size=(900, 2))
    y = np.array([3, 5, 9])[labels]
    clf = SVMClassifier(alpha=1e-3, random_state=0, max_epochs=5, tol=None).fit(X, y)
    assert clf.coef_.shape == (3, 2) and list(clf.classes_) == [3, 5, 9]
    assert clf.score(X, y) > 0.95
    assert clf.decision_function(X).shape == (900, 3)
    # every epoch visits each row once, all three classes updated in that one pass
    assert all(h["n_rows"] == 900 for h in clf.history_)


def test_history_times_each_epoch():
    """An epoch's ``seconds`` cover its pass (in this process the epoch runs inside its
    submission: timed from before it), and the epochs fit inside the fit."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200_000, 20)).astype(np.float32)
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=len(X)) > 0, 1, -1)
    tic = time.perf_counter()
    # (the stochastic loop, whose epochs are submitted ahead: solver="auto" would run CoCoA+)
    clf = SVMClassifier(solver="sgd", alpha=1e-4, random_state=0, max_epochs=3, tol=None).fit(X, y)
    wall = time.perf_counter() - tic
    seconds = [h["seconds"] for h in clf.history_]
    # 200,000 rows of 20 features: well over a millisecond an epoch on any machine
    assert all(s > 1e-3 for s in seconds), seconds
    assert sum(seconds) <= wall
    assert all(h["rows_per_s"] < 1e9 for h in clf.history_)


def test_sklearn_conventions(blobs):
    X, y = blobs
    clf = SVMClassifier(alpha=1e-3, random_state=0)
    assert clone(clf).get_params() == clf.get_params()
    pipe = make_pipeline(StandardScaler(), SVMClassifier(alpha=1e-3, random_state=0))
    assert pipe.fit(X, y).score(X, y) > 0.93
    fitted = SVMClassifier(alpha=1e-3, random_state=0).fit(X, y)
    back = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(back.predict(X), fitted.predict(X))


def test_validation_accuracy_is_recorded(blobs):
    X, y = blobs
    clf = SVMClassifier(alpha=1e-3, random_state=0, max_epochs=3, tol=None)
    clf.fit(X[:400], y[:400], validation=(X[400:], y[400:]))
    accs = [h["val_accuracy"] for h in clf.history_]
    assert len(accs) == 3 and all(0.8 < a <= 1.0 for a in accs)
    assert accs[-1] == pytest.approx(clf.score(X[400:], y[400:]))


def test_tol_stops_early(blobs):
    X, y = blobs
    clf = SVMClassifier(alpha=1e-2, random_state=0, max_epochs=200, tol=1e-3).fit(X, y)
    assert clf.n_iter_ < 200


def test_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        SVMClassifier().predict(np.zeros((2, 2)))


def test_in_memory_streams_run_in_threads_with_the_same_model(monkeypatch):
    """n_streams > 1 on NumPy input runs the streams in threads; the thread count is invisible."""
    import dsvm.engine.local as engine

    rng = np.random.default_rng(3)
    X = rng.normal(size=(4000, 8)).astype(np.float32)
    y = np.where(X[:, 0] - X[:, 1] > 0, 1.0, -1.0)
    kw = dict(alpha=1e-4, max_epochs=3, tol=None, random_state=4, n_streams=3, chunk_rows=500)
    monkeypatch.setattr(engine.os, "cpu_count", lambda: 4)
    threaded = SVMClassifier(**kw).fit(X, y)
    monkeypatch.setattr(engine.os, "cpu_count", lambda: 1)
    sequential = SVMClassifier(**kw).fit(X, y)
    np.testing.assert_array_equal(threaded.coef_, sequential.coef_)
    np.testing.assert_array_equal(threaded.intercept_, sequential.intercept_)
    assert threaded.score(X, y) > 0.95
