"""Checkpoints: the full state after every epoch, atomic, no pickle; resume == uninterrupted."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dsvm
from dsvm import SVMClassifier
from dsvm.data.order import epoch_chunk_order
from dsvm.exceptions import ModelFormatError
from dsvm.io.checkpoints import save_checkpoint


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 8))
    y = np.where(X @ rng.normal(size=8) + 0.3 * rng.normal(size=3000) > 0, 1, -1)
    return X, y


def _clf(**kw):
    params = dict(solver="pegasos", max_epochs=6, tol=None, random_state=3, chunk_rows=500,
                  n_streams=2)
    params.update(kw)
    return SVMClassifier(**params)


@pytest.mark.parametrize("solver", ["pegasos", "sgd"])
@pytest.mark.parametrize("multiclass", [False, True])
def test_resume_then_finish_equals_the_uninterrupted_fit(problem, tmp_path, solver, multiclass):
    X, y = problem
    if multiclass:
        y = np.digitize(X[:, 1], [-0.5, 0.5])
    ckpt = tmp_path / "fit.ckpt"
    full = _clf(solver=solver).fit(X, y)
    _clf(solver=solver, max_epochs=2, checkpoint=ckpt).fit(X, y)
    assert dsvm.load_checkpoint(ckpt).epoch == 2
    # random_state=None: the seed, like the rest of the state, comes from the checkpoint
    resumed = _clf(solver=solver, random_state=None, checkpoint=ckpt).fit(X, y, resume=True)
    assert resumed.n_iter_ == 6 and len(resumed.history_) == 6
    np.testing.assert_array_equal(resumed.coef_, full.coef_)  # bit for bit
    np.testing.assert_array_equal(resumed.intercept_, full.intercept_)
    assert resumed.t_ == full.t_
    assert [h["objective"] for h in resumed.history_] == [h["objective"] for h in full.history_]
    np.testing.assert_array_equal(resumed.predict(X), full.predict(X))


def test_checkpoint_holds_the_full_state(problem, tmp_path):
    X, y = problem
    ckpt = tmp_path / "fit.ckpt"
    clf = _clf(solver="sgd", max_epochs=3, checkpoint=str(ckpt)).fit(X, y)
    c = dsvm.load_checkpoint(ckpt)
    assert c.epoch == 3 and c.seed == 3 and c.n_streams == 2 and c.n_features == 8
    np.testing.assert_array_equal(c.avg_coef.astype(clf.coef_.dtype), clf.coef_)
    assert c.t == clf.t_ and c.n_avg == clf.state_.n_avg and c.eta0 == clf.state_.eta0
    np.testing.assert_array_equal(c.coef, clf.state_.coef)
    np.testing.assert_array_equal(c.classes, clf.classes_)
    assert c.next_chunk_order == epoch_chunk_order(3, 3, 6).tolist()
    assert c.history == clf.history_ and c.params["solver"] == "sgd"
    # written atomically: no temporary file left beside it
    assert os.listdir(tmp_path) == ["fit.ckpt"]


def test_checkpoint_keeps_pegasos_extrapolation(problem, tmp_path):
    """The snapshots of the average and the probe's verdict (dsvm.solvers.extrapolation) are
    part of the state: a fit resumed after epoch 5 (snapshots of epochs 2 and 4, verdicts
    already taken) ends bit-identical to the uninterrupted one."""
    X, y = problem
    ckpt = tmp_path / "fit.ckpt"
    part = _clf(max_epochs=5, checkpoint=ckpt).fit(X, y)
    c = dsvm.load_checkpoint(ckpt)
    ours = part.state_.extrapolation
    assert [s.t for s in c.extrapolation.snapshots] == [s.t for s in ours.snapshots] == [
        part.t_ * 2 / 5, part.t_ * 4 / 5]
    assert c.extrapolation.use == ours.use
    for a, b in zip(c.extrapolation.snapshots, ours.snapshots):
        np.testing.assert_array_equal(a.coef, b.coef)
        np.testing.assert_array_equal(a.intercept, b.intercept)
    full = _clf(max_epochs=9).fit(X, y)
    resumed = _clf(max_epochs=9, checkpoint=ckpt).fit(X, y, resume=True)
    np.testing.assert_array_equal(resumed.coef_, full.coef_)


@pytest.mark.filterwarnings("ignore::dsvm.exceptions.ConvergenceWarning")
def test_resume_replays_the_stopping_rule(problem, tmp_path):
    X, y = problem
    full = _clf(max_epochs=30, tol=1e-2, n_iter_no_change=2).fit(X, y)
    assert full.n_iter_ < 30  # it stopped early
    ckpt = tmp_path / "fit.ckpt"
    _clf(max_epochs=full.n_iter_ - 1, tol=1e-2, n_iter_no_change=2, checkpoint=ckpt).fit(X, y)
    resumed = _clf(max_epochs=30, tol=1e-2, n_iter_no_change=2, checkpoint=ckpt).fit(
        X, y, resume=True)
    assert resumed.n_iter_ == full.n_iter_
    np.testing.assert_array_equal(resumed.coef_, full.coef_)
    # resuming a converged fit runs nothing more
    again = _clf(max_epochs=30, tol=1e-2, n_iter_no_change=2, checkpoint=ckpt).fit(
        X, y, resume=True)
    assert again.n_iter_ == full.n_iter_


def test_resume_without_a_file_starts_from_scratch(problem, tmp_path):
    X, y = problem
    ckpt = tmp_path / "new.ckpt"
    clf = _clf(max_epochs=2, checkpoint=ckpt).fit(X, y, resume=True)
    np.testing.assert_array_equal(clf.coef_, _clf(max_epochs=2).fit(X, y).coef_)
    assert dsvm.load_checkpoint(ckpt).epoch == 2


def test_checkpoint_on_an_fsspec_url(problem):
    X, y = problem
    url = "memory://dsvm-tests/fit.ckpt"
    full = _clf(max_epochs=4).fit(X, y)
    _clf(max_epochs=2, checkpoint=url).fit(X, y)
    assert dsvm.load_checkpoint(url).epoch == 2
    resumed = _clf(max_epochs=4, checkpoint=url).fit(X, y, resume=True)
    np.testing.assert_array_equal(resumed.coef_, full.coef_)


def test_resume_refuses_another_problem(problem, tmp_path):
    X, y = problem
    ckpt = tmp_path / "fit.ckpt"
    _clf(max_epochs=1, checkpoint=ckpt).fit(X, y)
    with pytest.raises(ValueError, match="alpha=0.0001 but this estimator has alpha=0.01"):
        _clf(alpha=0.01, checkpoint=ckpt).fit(X, y, resume=True)
    with pytest.raises(ValueError, match="written for 8 features but the data has 5"):
        _clf(checkpoint=ckpt).fit(X[:, :5], y, resume=True)
    # other rows of the same columns (a slice, another day's file) went on silently: a model
    # trained partly on data it was not for
    with pytest.raises(ValueError, match=r"written by a fit on 3,000 rows \(array\), but "
                                         r"this fit's data \(array\) has 2,000\. Resume on "
                                         r"the same data"):
        _clf(checkpoint=ckpt).fit(X[:2000], y[:2000], resume=True)
    with pytest.raises(ValueError, match="resume=True needs the 'checkpoint' parameter"):
        _clf().fit(X, y, resume=True)


def test_loading_never_unpickles(tmp_path):
    bad = tmp_path / "pickled.ckpt"
    meta = np.frombuffer(b'{"format": "dsvm-checkpoint", "version": 1}', dtype=np.uint8)
    with open(bad, "wb") as f:
        np.savez(f, meta=meta, classes=np.array([object()], dtype=object))
    with pytest.raises(ModelFormatError, match="not a dsvm checkpoint"):
        dsvm.load_checkpoint(bad)
    text = tmp_path / "text.ckpt"
    text.write_text("hello")
    with pytest.raises(ModelFormatError):
        dsvm.load_checkpoint(text)
    model = tmp_path / "m.dsvm"
    SVMClassifier(max_epochs=1).fit(np.eye(4), [0, 1, 0, 1]).save(model)
    with pytest.raises(ModelFormatError, match="format 'dsvm-model'"):
        dsvm.load_checkpoint(model)
    with pytest.raises(FileNotFoundError, match="No checkpoint"):
        dsvm.load_checkpoint(tmp_path / "absent.ckpt")


def test_a_failed_write_keeps_the_previous_checkpoint(problem, tmp_path):
    X, y = problem
    ckpt = tmp_path / "fit.ckpt"
    _clf(max_epochs=1, checkpoint=ckpt).fit(X, y)
    before = ckpt.read_bytes()
    good = dsvm.load_checkpoint(ckpt)
    good.params = {"unserialisable": object()}  # json.dumps fails before anything is written
    with pytest.raises(TypeError):
        save_checkpoint(ckpt, good)
    assert ckpt.read_bytes() == before and os.listdir(tmp_path) == ["fit.ckpt"]
