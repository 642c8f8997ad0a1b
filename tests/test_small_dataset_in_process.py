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


def _counting_reads(monkeypatch, dataset_type) -> list[tuple[int, ...]]:
    """Every chunk read of any store of ``dataset_type``, as the ids of each read call."""
    reads: list[tuple[int, ...]] = []
    one, many = dataset_type.read_chunk, dataset_type.read_chunks

    def read_chunk(self, i):
        reads.append((int(i),))
        return one(self, i)

    def read_chunks(self, ids):
        reads.append(tuple(int(i) for i in ids))
        return many(self, ids) if len(ids) > 1 else [one(self, i) for i in ids]

    monkeypatch.setattr(dataset_type, "read_chunk", read_chunk)
    monkeypatch.setattr(dataset_type, "read_chunks", read_chunks)
    return reads


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_a_store_no_larger_than_a_window_is_read_once_for_the_whole_fit(small, layout,
                                                                       monkeypatch, tmp_path):
    """In this process a store of at most one window's bytes is read once (every epoch's
    window held it whole anyway) and its chunks handed out from memory: the same model, bit
    for bit, as reading it every epoch; a larger store is still read every epoch."""
    import scipy.sparse as sp

    X, y, ds = small
    if layout == "csr":  # (raw counts: the scaling stage wraps the store in its map)
        X = sp.random(3000, 200, density=0.05, format="csr", random_state=1) * 50.0
        y = np.where(X @ np.linspace(-1, 1, 200) > 0, 1.0, -1.0)
        ds = dsvm.write_arrays(tmp_path / "sparse.zarr", X, y, chunk_rows=400)
    reads = _counting_reads(monkeypatch, type(ds))
    import dsvm.solvers.chunk_codes as chunk_codes

    coded: list[int] = []  # the chunks' labels turned into class codes (ChunkCodes)
    targets_for = chunk_codes.targets_for
    monkeypatch.setattr(chunk_codes, "targets_for",
                        lambda y, *a, **k: (coded.append(len(y)), targets_for(y, *a, **k))[1])
    kw = dict(solver="sgd", alpha=1e-4, max_epochs=4, tol=None, random_state=2, n_streams=2)
    held = SVMClassifier(**kw).fit(str(ds.url))
    assert len(coded) == ds.n_chunks, coded  # once for the fit, not once an epoch
    everything = tuple(range(ds.n_chunks))
    train_reads = [r for r in reads if len(r) > 1 or r == (0,)]
    assert reads.count(everything) == 1, reads
    assert all(r == everything or len(r) <= 1 for r in reads), reads
    assert len(train_reads) <= 3, reads  # (the one read; the calibration's first rows)
    assert held.score(X, y) > 0.85

    reads.clear()
    monkeypatch.setattr(engines, "WINDOW_BYTES", ds.nbytes - 1)  # now over the limit
    every_epoch = SVMClassifier(**kw).fit(str(ds.url))
    read_chunks = sorted(i for r in reads for i in r)
    assert read_chunks.count(0) >= 4, reads  # every epoch reads every chunk again
    np.testing.assert_array_equal(held.coef_, every_epoch.coef_)
    np.testing.assert_array_equal(held.intercept_, every_epoch.intercept_)


def test_a_larger_store_reads_each_epochs_first_window_during_the_last(small, monkeypatch):
    """A store over the hold's limit is read every epoch, each stream's first window of the
    next epoch while it trains on the last of this one (dsvm.data.held.ReadsAhead): every
    chunk is still read once an epoch, none in vain (the last epoch reads nothing ahead), and
    the model is the one of reading each window when the pass asks for it, bit for bit."""
    import dsvm.data.held as held
    from dsvm.engine import local

    X, y, ds = small
    monkeypatch.setattr(engines, "WINDOW_BYTES", ds.nbytes // 2)  # not held
    reads = _counting_reads(monkeypatch, type(ds))
    later: list[tuple[int, ...]] = []
    read_later = held.ReadsAhead.read_later
    monkeypatch.setattr(held.ReadsAhead, "read_later",
                        lambda self, ids: (later.append(tuple(ids)), read_later(self, ids))[1])
    epochs = 4
    kw = dict(solver="pegasos", alpha=1e-3, max_epochs=epochs, tol=None, random_state=5,
              n_streams=2, shuffle_window=2)
    ahead = SVMClassifier(**kw).fit(str(ds.url))
    assert len(later) == 2 * (epochs - 1), later  # each stream, each epoch but the last
    assert all(len(ids) == 2 for ids in later), later  # its first window: 2 chunks
    train = [i for r in reads if r != (0,) for i in r]  # (the calibration reads chunk 0 alone)
    assert sorted(train).count(1) == epochs + 1, reads  # + the closing evaluation's read

    reads.clear()
    monkeypatch.setattr(local, "reads_ahead_of", lambda source: False)
    asked = SVMClassifier(**kw).fit(str(ds.url))
    assert sorted(i for r in reads if r != (0,) for i in r).count(1) == epochs + 1
    np.testing.assert_array_equal(ahead.coef_, asked.coef_)
    np.testing.assert_array_equal(ahead.intercept_, asked.intercept_)
