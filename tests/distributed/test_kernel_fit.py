"""Kernel SVMs on a LocalCluster of worker processes: maps fitted and applied on the workers."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest

import dsvm
from dsvm import SVMClassifier

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 5))
    y = np.where((X[:, :2] ** 2).sum(1) > 1.4, 1.0, -1.0)
    return X, y


def test_nystroem_on_cluster_equals_in_process(problem, tmp_path, local_client):
    X, y = problem
    ds = dsvm.write_arrays(tmp_path / "k.zarr", X, y, chunk_rows=500, dtype="float64")
    kw = dict(kernel="nystroem", n_components=64, gamma=0.5, alpha=1e-4, max_epochs=2, tol=None,
              random_state=4, n_streams=2)
    remote = SVMClassifier(client=local_client, **kw).fit(ds)
    local = SVMClassifier(chunk_rows=500, **kw).fit(X, y)
    # the landmark sample is drawn per chunk on the workers: the same rows as in-process
    np.testing.assert_array_equal(remote.feature_map_.landmarks_, local.feature_map_.landmarks_)
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-9, atol=1e-12)
    assert remote.score(ds) > 0.9
    np.testing.assert_array_equal(remote.predict(X), local.predict(X))


def test_rff_with_dask_arrays_maps_chunks_on_the_workers(problem, local_client):
    X, y = problem
    dX, dy = da.from_array(X, chunks=(600, 5)), da.from_array(y, chunks=600)
    clf = SVMClassifier(kernel="rff", n_components=128, gamma=0.5, alpha=1e-4, max_epochs=3,
                        tol=None, random_state=0, client=local_client).fit(dX, dy)
    assert clf.n_features_in_ == 5
    pred = clf.predict(dX)
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(pred.compute(), clf.predict(X))
    assert clf.score(X, y) > 0.9


def test_bsgd_two_streams_on_cluster_equals_in_process(problem, tmp_path, local_client):
    X, y = problem
    ds = dsvm.write_arrays(tmp_path / "b.zarr", X, y, chunk_rows=500, dtype="float64")
    kw = dict(solver="bsgd", gamma=0.5, budget=40, alpha=1e-4, max_epochs=2, tol=None,
              random_state=1, n_streams=2)
    remote = SVMClassifier(client=local_client, **kw).fit(ds)
    local = SVMClassifier(chunk_rows=500, **kw).fit(X, y)
    assert remote.feature_map_.n_output_features <= 40
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-9, atol=1e-9)
    assert remote.score(ds) > 0.9


def test_a_large_map_is_broadcast_once_not_sent_with_every_task(problem, tmp_path, local_client):
    """A 1,200-landmark Nystroem map (11 MB of float64) reaches the workers by one broadcast."""
    import warnings

    X, y = problem
    ds = dsvm.write_arrays(tmp_path / "big.zarr", X, y, chunk_rows=500, dtype="float64")
    kw = dict(kernel="nystroem", n_components=1200, gamma=0.5, alpha=1e-4, max_epochs=2,
              tol=None, random_state=4, n_streams=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        remote = SVMClassifier(client=local_client, **kw).fit(ds)
        remote_scores = remote.decision_function(ds)
    assert not [w for w in caught if "large graph" in str(w.message)]
    local = SVMClassifier(chunk_rows=500, **kw).fit(X, y)
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(remote_scores, local.decision_function(X), rtol=1e-9, atol=1e-9)


def test_validation_through_a_large_map_reuses_its_broadcast(problem, tmp_path, local_client):
    """Each epoch's validation pass wraps the same (data, map): one broadcast, not one per epoch."""
    from dsvm.data.sources import DatasetSource, map_source
    from dsvm.distributed.engine import DaskEngine

    X, y = problem
    ds = dsvm.write_arrays(tmp_path / "v.zarr", X, y, chunk_rows=500, dtype="float64")
    clf = SVMClassifier(kernel="nystroem", n_components=600, gamma=0.5, alpha=1e-4,
                        max_epochs=1, tol=None, random_state=4, client=local_client).fit(ds)
    engine, inner = DaskEngine(local_client), DatasetSource(ds)
    first = engine._ship(map_source(inner, clf.feature_map_))
    again = engine._ship(map_source(inner, clf.feature_map_))
    assert first is again and len(engine._shipped) == 1
    assert type(first).__name__ == "Future"  # 600 landmarks: large enough to broadcast
