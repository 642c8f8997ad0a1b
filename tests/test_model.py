"""Model files: round trip, and refusal of anything that is not a dsvm model."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dsvm
from dsvm import SVMClassifier
from dsvm.exceptions import ModelFormatError


@pytest.fixture
def fitted(blobs):
    X, y = blobs
    return SVMClassifier(alpha=1e-3, random_state=0, max_epochs=3).fit(X, y), X, y


def test_round_trip_predicts_the_same(fitted, tmp_path):
    clf, X, y = fitted
    path = tmp_path / "m.dsvm"
    clf.save(path)
    back = dsvm.load(path)
    np.testing.assert_array_equal(back.predict(X), clf.predict(X))
    np.testing.assert_array_equal(back.coef_, clf.coef_)
    assert back.classes_.dtype == clf.classes_.dtype
    assert back.get_params()["alpha"] == clf.alpha
    assert back.history_ == clf.history_
    assert back.n_iter_ == clf.n_iter_


def test_pickled_object_arrays_are_refused(tmp_path):
    path = tmp_path / "evil.dsvm"
    with open(path, "wb") as f:
        np.savez(f, coef=np.array([object()], dtype=object), intercept=np.zeros(1),
                 classes=np.array([-1.0, 1.0]), meta=np.frombuffer(b"{}", dtype=np.uint8))
    with pytest.raises(ModelFormatError, match="evil.dsvm"):
        dsvm.load(path)


def test_plain_pickle_file_is_refused(tmp_path):
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps({"coef": [1.0]}))
    with pytest.raises(ModelFormatError, match="not a dsvm model"):
        dsvm.load(path)


def test_npz_without_meta_is_refused(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, a=np.zeros(3))
    with pytest.raises(ModelFormatError, match="lacks"):
        dsvm.load(path)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        dsvm.load(tmp_path / "nope.dsvm")


def test_save_and_load_through_an_fsspec_url(fitted):
    """Model files go through the same npz + JSON envelope as checkpoints: any fsspec URL."""
    clf, X, _ = fitted
    url = "memory://dsvm-tests/models/m.dsvm"
    clf.save(url)
    back = dsvm.load(url)
    np.testing.assert_array_equal(back.coef_, clf.coef_)
    np.testing.assert_array_equal(back.predict(X), clf.predict(X))


@pytest.mark.parametrize("corrupt", ["nan_coef", "negative_alpha", "unknown_loss"])
def test_a_corrupt_model_file_is_refused_when_loaded(fitted, tmp_path, corrupt):
    """A model file whose coefficients are not finite or whose parameters are invalid does not
    load (it used to load and evaluate, printing an objective of nan)."""
    from dsvm.io.models import load_model_record, save_model_record

    clf, _, _ = fitted
    good, bad = tmp_path / "m.dsvm", tmp_path / "bad.dsvm"
    clf.save(good)
    record = load_model_record(good)
    if corrupt == "nan_coef":
        record.coef = record.coef.copy()
        record.coef[0, 0] = np.nan
    elif corrupt == "negative_alpha":
        record.params["alpha"] = -1.0
    else:
        record.params["loss"] = "no-such-loss"
    save_model_record(bad, record)
    with pytest.raises(ModelFormatError, match="bad.dsvm"):
        dsvm.load(bad)


@pytest.mark.parametrize("solver", ["sgd", "auto", "pegasos"])
def test_a_loaded_model_is_continued_by_partial_fit_and_a_warm_start(blobs, tmp_path, solver):
    """Yesterday's model, loaded, then ``partial_fit`` on today's rows: it had no training
    state, so ``partial_fit`` asked for ``classes=`` and, given them, trained from zero and
    threw the loaded model away (accuracy 0.998 -> 0.854 after one call of 50 rows)."""
    import warnings

    X, codes = blobs
    X = X * np.array([1.0, 100.0, 1, 1, 1, 1, 1, 1])  # a raw column: the fit scales it
    y = np.where(codes > 0, "yes", "no")
    clf = SVMClassifier(random_state=0, solver=solver).fit(X, y)
    assert clf.scaling_ is not None
    clf.save(tmp_path / "m.dsvm")
    for how in ("partial_fit", "warm_start"):
        loaded, session = dsvm.load(tmp_path / "m.dsvm"), pickle.loads(pickle.dumps(clf))
        coef = loaded.coef_.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for est in (loaded, session):
                if how == "partial_fit":  # (no classes=: the model has them)
                    est.partial_fit(X[:60], y[:60])
                else:
                    est.set_params(warm_start=True, max_epochs=2).fit(X[:60], y[:60])
        # it goes on from the loaded model with small steps, not from zero with large ones,
        # and as well as the fitted estimator itself goes on (whose solver's state, e.g. its
        # average, the file does not keep; CoCoA+'s model is all there is to continue)
        assert np.linalg.norm(loaded.coef_ - coef) < 0.25 * np.linalg.norm(coef), how
        assert loaded.score(X, y) >= session.score(X, y) - 0.03, how
        if solver == "auto":
            np.testing.assert_allclose(loaded.coef_, session.coef_, rtol=1e-6)
        assert list(loaded.classes_) == ["no", "yes"] and loaded.n_iter_ > clf.n_iter_
    kernel = SVMClassifier(random_state=0, kernel="rff", n_components=32).fit(X, y)
    kernel.save(tmp_path / "k.dsvm")
    with pytest.raises(ValueError, match="kernel model loaded from a model file cannot be "
                                         "continued"):
        dsvm.load(tmp_path / "k.dsvm").partial_fit(X[:60], y[:60])
