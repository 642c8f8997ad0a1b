"""A small dataset with no cluster asked for trains in this process (#25, first contact): the
embedded LocalCluster's start, its workers' imports and their kernel loading cost more than
the fit, and the threads run the streams the workers would have run, so the model is the same."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dsvm
from dsvm import SVMClassifier
from dsvm.training import engines


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 10))
    y = np.where(X @ rng.normal(size=10) + 0.2 * rng.normal(size=3000) > 0, 1.0, -1.0)
    path = tmp_path_factory.mktemp("small") / "small.zarr"
    return X, y, dsvm.write_arrays(path, X, y, chunk_rows=400, dtype="float64")


def test_a_small_dataset_trains_here_like_the_embedded_cluster(small, monkeypatch):
    X, y, ds = small

    def no_cluster(*args, **kwargs):
        raise AssertionError("a cluster was started for a small dataset")

    import dsvm.distributed.engine as cluster  # (training.engines imports it when needed)

    monkeypatch.setattr(cluster, "cluster_engine", no_cluster)
    kw = dict(solver="pegasos", alpha=1e-3, max_epochs=3, tol=None, random_state=4)
    here = SVMClassifier(**kw).fit(str(ds.url))
    # the embedded cluster would have run one stream per core: the same streams over the same
    # chunks in memory give the same model (up to the grouping of float64 sums)
    streams = max(1, os.cpu_count() or 1)
    arrays = SVMClassifier(chunk_rows=400, n_streams=streams, **kw).fit(X, y)
    np.testing.assert_allclose(here.coef_, arrays.coef_, rtol=1e-12, atol=1e-12)
    assert here.score(ds) > 0.9


def test_a_cluster_is_kept_where_one_was_asked_for_or_the_data_is_large(small, monkeypatch):
    ds = small[2]
    assert engines.small_dataset_here(str(ds.url), None, None)
    assert engines.small_dataset_here(ds, None, None)
    assert not engines.small_dataset_here(str(ds.url), None, 2)  # n_workers / --workers N
    assert not engines.small_dataset_here(str(ds.url), "tcp://127.0.0.1:1", None)
    monkeypatch.setattr(engines, "IN_PROCESS_BYTES", ds.nbytes - 1)
    assert not engines.small_dataset_here(str(ds.url), None, None)
