"""How a task reads chunks of dask arrays persisted on the cluster: a window of them through
one round trip to the scheduler, not one per chunk, and the same blocks either way."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = [pytest.mark.distributed]


def _read_in_task(source, ids, ahead):  # noqa: ANN001, ANN202
    """In a task: the blocks ``iter_chunks`` yields, and how many graphs it computed."""
    import distributed

    from dsvm.engine.tasks import iter_chunks

    computes = []
    compute = distributed.Client.compute

    def counted(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        computes.append(1)
        return compute(self, *args, **kwargs)

    distributed.Client.compute = counted
    try:
        got = [(i, b.X.copy(), b.y.copy()) for i, b in iter_chunks(source, ids, ahead=ahead)]
    finally:
        distributed.Client.compute = compute
    return got, len(computes)


def test_a_window_of_persisted_chunks_is_one_round_trip(local_client):
    import dask.array as da

    from dsvm.distributed.dask_source import DaskSource

    rng = np.random.default_rng(0)
    X = rng.standard_normal((700, 5)).astype(np.float32)
    y = rng.integers(0, 2, 700).astype(np.float64)
    Xd, yd = local_client.persist([da.from_array(X, chunks=(100, -1)),
                                   da.from_array(y, chunks=100)])
    source = DaskSource(Xd, yd)
    assert source.on_cluster
    ids = [5, 0, 3, 6, 1, 2, 4]
    for ahead, rounds in ((3, 3), (1, 1), (8, 1)):
        # (ahead 1, a statistics or evaluation pass: a default window of these small chunks)
        got, n_computes = local_client.submit(_read_in_task, source, ids, ahead,
                                              pure=False).result()
        assert [i for i, _, _ in got] == ids
        for i, Xi, yi in got:
            np.testing.assert_array_equal(Xi, X[100 * i:100 * (i + 1)])
            np.testing.assert_array_equal(yi, y[100 * i:100 * (i + 1)])
        assert n_computes == rounds, (ahead, n_computes)
