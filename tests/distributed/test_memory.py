"""Out of core, small: workers whose memory limits together are below the dataset's size train
an epoch over it without restarting, spilling or exceeding their limits, and their peak memory
does not grow with the dataset (benchmarks/bench_out_of_core.py is the >= 4 GiB version)."""

from __future__ import annotations

import pytest

import dsvm
from benchmarks._common import worker_peak_rss, worker_spilled

pytestmark = [pytest.mark.distributed, pytest.mark.slow, pytest.mark.timeout(600)]

LIMIT = 640 * 2**20  # per worker; two workers hold 1.25 GiB together


def _epoch_peaks(path, tmp_path):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=LIMIT) as cluster, Client(cluster) as client:
        workers = sorted(client.scheduler_info()["workers"])
        # (a stochastic epoch: CoCoA+'s window holds up to 128 MB of a stream's rows)
        clf = dsvm.SVMClassifier(solver="pegasos", max_epochs=1, tol=None, random_state=0,
                                 client=client)
        clf.fit(path)
        assert sorted(client.scheduler_info()["workers"]) == workers, "a worker was restarted"
        assert clf.history_[-1]["n_rows"] == dsvm.open_dataset(path).n_samples
        return worker_peak_rss(client), worker_spilled(client)


def test_epoch_over_data_larger_than_the_workers_memory(tmp_path):
    # the small dataset has enough chunks (25: 12 per stream) to fill a stream's shuffle window
    # of 8 chunks, as the big one does: the window is bounded memory, not growth with n
    small = dsvm.write_synthetic(tmp_path / "small.zarr", 400_000, 100, chunk_rows=16384)
    big = dsvm.write_synthetic(tmp_path / "big.zarr", 3_500_000, 100, chunk_rows=16384)
    assert big.nbytes > 2 * LIMIT  # X alone is larger than both workers' memory together
    small_peaks, _ = _epoch_peaks(small.url, tmp_path)
    big_peaks, spilled = _epoch_peaks(big.url, tmp_path)
    assert all(v == 0 for v in spilled.values()), spilled
    assert all(p < LIMIT for p in big_peaks.values()), big_peaks
    # 9x more data, yet the peak grows by no more than a few chunks (6.5 MB each)
    growth = max(big_peaks.values()) - max(small_peaks.values())
    assert growth < 64 * 2**20, (small_peaks, big_peaks)
