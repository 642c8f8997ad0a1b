"""A fit sized to its workers' memory limit (#28 item 3), on a real LocalCluster of 2 worker
processes x 1 thread with a small limit: chunks large next to it shrink the shuffle window
(and the fit completes, no worker restarted); a chunk too large for it is refused up front,
before any task ran, from Python and from the command line.

The chunks are sized from what the workers report (their process differs from machine to
machine): the test works out the room the budget leaves for windows, then writes chunks of
a seventh of it (three fit in a window, two windows at once) or of three quarters of it (two
windows of one do not fit)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import dsvm
from benchmarks._common import worker_peak_rss
from dsvm.distributed.engine import DaskEngine
from dsvm.training.memory import budget_of
from dsvm.training.window import DEFAULT_WINDOW

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(300)]

LIMIT = 640 * 2**20
N_FEATURES = 256  # float32: 1 KiB a row


@pytest.fixture(scope="module")
def small_workers():
    """A Client on 2 worker processes x 1 thread whose memory limit is LIMIT each."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=LIMIT) as cluster, Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def room(small_workers):
    """Bytes the workers' budget leaves for windows (two at once) beside their process."""
    budget = budget_of(DaskEngine(small_workers).worker_memory(), n_streams=2)
    assert budget is not None and budget.limit == LIMIT
    room = budget.usable - budget.process
    assert room > 20 * 2**20, f"the workers' process leaves no room under {LIMIT} bytes"
    return room


def store_with_chunks(path, chunk_bytes: float, n_chunks: int):
    rows = max(1, int(chunk_bytes) // (4 * N_FEATURES))
    return dsvm.write_synthetic(path, rows * n_chunks, N_FEATURES, chunk_rows=rows)


@pytest.fixture(scope="module")
def too_big(room, tmp_path_factory):
    """One chunk of three quarters of the room: two windows of it do not fit."""
    return store_with_chunks(tmp_path_factory.mktemp("mem") / "big.zarr", 0.75 * room, 1)


def test_large_chunks_shrink_the_window_and_the_fit_completes(small_workers, room, tmp_path,
                                                              caplog):
    ds = store_with_chunks(tmp_path / "s.zarr", room / 7, 2 * DEFAULT_WINDOW)
    workers = sorted(small_workers.scheduler_info()["workers"])
    clf = dsvm.SVMClassifier(solver="sgd", max_epochs=1, tol=None, random_state=0,
                             client=small_workers)
    with caplog.at_level(logging.INFO, logger="dsvm.training"):
        clf.fit(ds.url)
    [line] = [r.getMessage() for r in caplog.records if "shuffle window" in r.getMessage()]
    assert "capped by the workers' memory limit of 640 MiB" in line, line
    chunks = int(line.split("shuffle window: ")[1].split()[0])
    assert 1 <= chunks < DEFAULT_WINDOW, line  # each stream has DEFAULT_WINDOW chunks
    assert clf.history_[-1]["n_rows"] == ds.n_samples
    assert sorted(small_workers.scheduler_info()["workers"]) == workers, "a worker restarted"
    peaks = worker_peak_rss(small_workers)
    assert all(p < 0.95 * LIMIT for p in peaks.values()), peaks


@pytest.mark.parametrize("estimator", [
    dsvm.SVMClassifier(solver="sgd"), dsvm.SVMClassifier(solver="cocoa"),
    dsvm.SVMClassifierCV(alphas=[1e-4, 1e-3])], ids=["sgd", "cocoa", "grid"])
def test_a_chunk_too_large_for_the_limit_is_refused_before_any_task(small_workers, too_big,
                                                                     estimator):
    from distributed import get_task_stream

    workers = sorted(small_workers.scheduler_info()["workers"])
    clf = estimator.set_params(client=small_workers, random_state=0)
    with get_task_stream(small_workers) as stream, \
            pytest.raises(ValueError, match="memory limit of 640 MiB is too small") as caught:
        clf.fit(too_big.url)
    message = str(caught.value)
    assert "dsvm convert --chunk-rows" in message and "--memory-limit" in message
    assert f"2 x {too_big.nbytes / 2**20:,.1f} MiB for windows of one chunk" in message, message
    assert stream.data == [], [t["key"] for t in stream.data]  # no task read a row
    assert sorted(small_workers.scheduler_info()["workers"]) == workers


@pytest.mark.parametrize("estimator", [dsvm.SVMClassifier(), dsvm.SVMClassifierCV(cv=2)],
                         ids=["fit", "grid"])
def test_raw_dask_rows_too_large_are_refused_before_their_statistics_are_read(
        small_workers, room, estimator):
    """Raw columns (above 16) ask for a pass of scaling statistics, a Dask input for a pass
    that finds its classes: chunks too large for the workers are refused before either."""
    import dask.array as da
    from distributed import get_task_stream

    rows = max(2, int(0.75 * room) // (4 * N_FEATURES))
    rng = np.random.default_rng(0)
    X = da.from_array(1000 * rng.standard_normal((rows, N_FEATURES), dtype=np.float32),
                      chunks=(rows, N_FEATURES))
    y = da.from_array(np.arange(rows) % 2, chunks=rows)
    clf = estimator.set_params(client=small_workers, random_state=0)
    with get_task_stream(small_workers) as stream, \
            pytest.raises(ValueError, match="memory limit of 640 MiB is too small"):
        clf.fit(X, y)
    assert stream.data == [], sorted({str(t["key"]) for t in stream.data})


def test_a_grid_of_folds_too_wide_for_the_limit_names_the_folds(small_workers, tmp_path):
    """k folds hold (k + 1) stacks of the K candidates' states: 3 x 8 states of a 2^21-column
    model do not fit beside the process, and fewer folds is one way out."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)  # (sp.random draws among all 400 x 2^21 cells: minutes)
    X = sp.csr_matrix((np.ones(4000, np.float32), (np.repeat(np.arange(400), 10),
                                                   rng.integers(0, 2**21, 4000))),
                      shape=(400, 2**21))
    y = np.arange(400) % 2
    ds = dsvm.write_arrays(tmp_path / "wide.zarr", X, y, chunk_rows=100)
    clf = dsvm.SVMClassifierCV(alphas=np.logspace(-6, -2, 8), cv=2, client=small_workers)
    with pytest.raises(ValueError, match="Smaller chunks would not help") as caught:
        clf.fit(ds.url)
    assert "fewer features, alphas, folds or classes" in str(caught.value)


def test_the_command_line_refuses_in_one_line(small_workers, too_big, tmp_path, capsys):
    from dsvm.cli import main

    out = tmp_path / "model.dsvm"
    address = small_workers.scheduler.address
    code = main(["train", too_big.url, "--scheduler", address, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "memory limit of 640 MiB is too small" in err and "--chunk-rows" in err, err
    assert not out.exists()
