"""The driver's remaining waits on a cluster go through the no-workers watchdog (#26 item 5):
a dask array's unknown chunk lengths counted for a fit, dask blocks computed for writing, and
a detached job's result waited on with a timeout. On a scheduler with no worker each is the
watchdog's clear error within seconds, not a hang; on a healthy cluster each gives what it
gave before."""

from __future__ import annotations

import functools
import time

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from dsvm.data.dask_io import dask_blocks
from dsvm.distributed.dask_source import DaskSource
from dsvm.distributed.jobs import Job
from dsvm.exceptions import WorkerLostError
from dsvm.training.cluster import compute

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(180)]


def _frame() -> dd.DataFrame:
    """Arrays from a DataFrame have unknown chunk lengths (nan): counting them is a wait."""
    rows = 90
    pdf = pd.DataFrame({"a": np.arange(rows, dtype=np.float64), "b": np.ones(rows),
                        "y": np.where(np.arange(rows) % 2, 1.0, -1.0)})
    return dd.from_pandas(pdf, npartitions=3)


@pytest.fixture(scope="module")
def no_workers():
    """A scheduler whose workers are all gone (none ever joined), with a 1 s watchdog."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client, dask.config.set({"dsvm.no-workers-timeout": "1s"}):
        yield client


@pytest.fixture(scope="module")
def healthy():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        yield client


def _fails_clearly(call):
    t0 = time.monotonic()
    with pytest.raises(WorkerLostError, match="No Dask workers for 1s during"):
        call()
    assert time.monotonic() - t0 < 30


def test_unknown_chunk_lengths_are_counted_through_the_watchdog(no_workers):
    frame = _frame()
    _fails_clearly(lambda: DaskSource(frame[["a", "b"]].to_dask_array(),
                                      frame["y"].to_dask_array()))


def test_unknown_chunk_lengths_counted_on_a_cluster_are_dasks(healthy):
    frame = _frame()
    X, y = frame[["a", "b"]].to_dask_array(), frame["y"].to_dask_array()
    source = DaskSource(X, y)
    expected = X.compute_chunk_sizes().chunks[0]
    assert source.X.chunks[0] == source.y.chunks[0] == expected and sum(expected) == 90
    for i in range(source.n_chunks):  # the same rows, chunk by chunk
        block = source.read_chunk(i)
        start = sum(expected[:i])
        np.testing.assert_array_equal(block.X, frame.compute()[["a", "b"]].to_numpy()[
            start:start + expected[i]])


def test_dask_blocks_computed_with_the_watched_compute(no_workers, healthy):
    X = da.from_array(np.arange(40.0).reshape(20, 2), chunks=(5, 2))
    y = da.from_array(np.where(np.arange(20) % 2, 1.0, -1.0), chunks=5)
    watched = functools.partial(compute, what="writing the dataset's blocks")
    with no_workers.as_current():
        _fails_clearly(lambda: list(dask_blocks(X, y, compute=watched)))
    with healthy.as_current():
        blocks = list(dask_blocks(X, y, compute=watched))
    assert [b.n_samples for b in blocks] == [5, 5, 5, 5]
    np.testing.assert_array_equal(np.vstack([b.X for b in blocks]), X.compute())


def _three() -> int:
    return 3


def test_a_jobs_result_with_a_timeout_is_watched(no_workers, healthy):
    """``Job.result(timeout=60)`` on a cluster without workers: the watchdog's error after 1 s,
    not a wait of 60 s; a timeout shorter than the watchdog's is a TimeoutError at its end."""
    job = Job("j", no_workers, no_workers.submit(_three, pure=False))
    _fails_clearly(lambda: job.result(timeout=60))
    with dask.config.set({"dsvm.no-workers-timeout": "60s"}):
        t0 = time.monotonic()
        with pytest.raises(TimeoutError, match="dsvm job j did not finish within 1s"):
            job.result(timeout=1)
        assert time.monotonic() - t0 < 10
    assert Job("k", healthy, healthy.submit(_three, pure=False)).result(timeout=60) == 3
