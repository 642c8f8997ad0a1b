"""A grid of alphas (#27) on a LocalCluster of worker processes: the same candidates, scores
and chosen model as in this process (the stacked states travel and combine like one model's,
and the held rows of every chunk are the same ones whichever worker reads it)."""

from __future__ import annotations

import numpy as np
import pytest

import dsvm
from dsvm import SVMClassifier, SVMClassifierCV

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(300)]


def test_grid_on_two_workers_equals_the_grid_in_process(tmp_path, _session_client):
    # (the session's cluster, given explicitly: it is not current while the in-process fits run)
    rng = np.random.default_rng(7)
    X = rng.normal(size=(4000, 12)).astype(np.float32)
    W = rng.normal(size=(12, 3))
    y = np.argmax(X @ W + 0.3 * rng.normal(size=(4000, 3)), axis=1)  # 3 classes x 4 alphas
    ds = dsvm.write_arrays(tmp_path / "grid.zarr", X, y, chunk_rows=200)
    # n_iter_no_change=1, tol=3e-3: two candidates freeze after epochs 5 and 6 of 8 (the state
    # is re-held on the cluster, and the epoch sent ahead from the old one dropped:
    # training.loop.EpochDecision); the held-out scores, made in the training pass on the
    # workers, arrive one epoch late
    kw = dict(alphas=[1e-4, 1e-3, 1e-2, 1e-1], solver="sgd", max_epochs=8, random_state=2,
              n_streams=2, n_iter_no_change=1, tol=3e-3, scale=False)
    local = SVMClassifierCV(chunk_rows=200, **kw).fit(X, y)  # (before any Client exists)
    one = dict(solver="sgd", alpha=1e-3, max_epochs=3, tol=None, random_state=2, n_streams=2,
               scale=False, early_stopping=True)
    local_one = SVMClassifier(chunk_rows=200, **one).fit(X, y)
    remote = SVMClassifierCV(client=_session_client, **kw).fit(ds)
    remote_one = SVMClassifier(client=_session_client, **one).fit(ds)
    # the held-out chunks are the ones scored on the cluster too (they once shipped as the
    # training part: distributed.engine keyed a chunk subset on its whole source)
    np.testing.assert_allclose([h["holdout_objective"] for h in remote_one.history_],
                               [h["holdout_objective"] for h in local_one.history_])
    assert remote.alpha_ == local.alpha_
    assert list(local.cv_results_["n_epochs"]) == [8, 8, 6, 5]
    np.testing.assert_array_equal(remote.cv_results_["n_epochs"], local.cv_results_["n_epochs"])
    np.testing.assert_allclose(remote.cv_results_["test_score_by_epoch"],
                               local.cv_results_["test_score_by_epoch"])
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(remote.intercept_, local.intercept_, rtol=1e-5, atol=1e-6)
    # k folds (cv=3): the k + 1 stacks travel and combine as one state, and each fold's rows
    # are the same ones whichever worker reads their chunk
    folds = dict(kw, cv=3, max_epochs=3, tol=None)
    local_k = SVMClassifierCV(chunk_rows=200, **folds).fit(X, y)
    remote_k = SVMClassifierCV(client=_session_client, **folds).fit(ds)
    assert remote_k.alpha_ == local_k.alpha_
    for key in ("split0_test_score", "split2_test_score", "mean_test_score"):
        np.testing.assert_allclose(remote_k.cv_results_[key], local_k.cv_results_[key])
    np.testing.assert_allclose(remote_k.coef_, local_k.coef_, rtol=1e-5, atol=1e-6)
    # the other axes (#27): losses x class weights, each candidate's own solver on its views
    # of the stacked state, travel and combine on the cluster as in this process
    axes = dict(kw, losses=["hinge", "logistic"], class_weights=[None, "balanced"],
                max_epochs=3, tol=None)
    local_a = SVMClassifierCV(chunk_rows=200, **axes).fit(X, y)
    remote_a = SVMClassifierCV(client=_session_client, **axes).fit(ds)
    assert len(local_a.cv_results_["params"]) == 16
    assert remote_a.best_params_ == local_a.best_params_
    np.testing.assert_allclose(remote_a.cv_results_["mean_test_score"],
                               local_a.cv_results_["mean_test_score"])
    np.testing.assert_allclose(remote_a.coef_, local_a.coef_, rtol=1e-5, atol=1e-6)
