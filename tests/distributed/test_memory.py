"""Out of core, small: workers whose memory limits together are below the dataset's size train
an epoch over it without restarting, spilling or exceeding their limits, and their peak memory
does not grow with the dataset (benchmarks/bench_out_of_core.py is the >= 4 GiB version)."""

from __future__ import annotations

import pytest

import dsvm
from benchmarks._common import worker_peak_rss, worker_spilled
from dsvm.data.writer import DatasetWriter

pytestmark = [pytest.mark.distributed, pytest.mark.slow, pytest.mark.timeout(600)]

LIMIT = 640 * 2**20  # per worker; two workers hold 1.25 GiB together


def _epoch_peak(client, path):
    """One epoch over ``path``; then each worker's peak memory since it started."""
    workers = sorted(client.scheduler_info()["workers"])
    clf = dsvm.SVMClassifier(solver="pegasos", max_epochs=1, tol=None, random_state=0,
                             client=client)
    clf.fit(path)
    assert sorted(client.scheduler_info()["workers"]) == workers, "a worker was restarted"
    assert clf.history_[-1]["n_rows"] == dsvm.open_dataset(path).n_samples
    return worker_peak_rss(client)


def _repeated(path, times, block):
    """``times`` copies of ``block`` one after the other, written in 16,384-row chunks:
    what is measured is memory, which does not depend on the values, and drawing 3.5M x 100
    normals took as long as the two epochs."""
    with DatasetWriter(path, n_features=block.X.shape[1], layout="dense", dtype="float32",
                       chunk_rows=16384) as writer:
        for _ in range(times):
            writer.append(block)
    return writer.dataset


def test_epoch_over_data_larger_than_the_workers_memory(tmp_path):
    from distributed import Client, LocalCluster

    small = dsvm.write_synthetic(tmp_path / "small.zarr", 400_000, 100, chunk_rows=16384)
    big = _repeated(tmp_path / "big.zarr", 214, small.read_chunk(0))  # 3,506,176 rows
    assert big.nbytes > 2 * LIMIT  # X alone is larger than both workers' memory together
    # One cluster for both epochs (a start less): a worker's peak is its high-water mark since
    # it started, so the big epoch's peaks include the small one's and their difference is
    # what reading 8.75x the rows added.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=LIMIT) as cluster, Client(cluster) as client:
        small_peaks = _epoch_peak(client, small.url)
        big_peaks = _epoch_peak(client, big.url)
        spilled = worker_spilled(client)
    assert all(v == 0 for v in spilled.values()), spilled
    assert all(p < LIMIT for p in big_peaks.values()), big_peaks
    growth = max(big_peaks.values()) - max(small_peaks.values())
    assert growth < 64 * 2**20, (small_peaks, big_peaks)
