"""How often a large model crosses the network in an epoch (issue #12, item 3).

Every model-sized (de)serialisation on the workers is counted by wrapping distributed's own
pickle functions in each worker process (what runs whenever an object leaves or reaches a
worker). Per epoch, with several streams on each worker, a worker must read the epoch's state
once and send at most one model-sized partial: its streams are combined where they ran before
anything leaves it. Before that change a worker with three streams sent three partials.

The model stays on the cluster between epochs: the root of the combine finalizes it and keeps
it, so after the first epoch (whose state the client sends once) only the worker that does not
hold the state reads it, and nothing model-sized reaches the client until the fit ends. Before
that change the combined sums went to the client and the client scattered the next state
(three model-sized reads on the workers an epoch, and one on the client).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.sparse as sp

import dsvm

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(300)]

BIG = 1 << 20  # bytes: a model of 2^18 features in float32 is 1 MiB, its float64 sums 2 MiB


def _count_big_pickles(big: int) -> None:
    """In a worker: record the type of every object pickled and the size of every payload
    unpickled, when it is at least ``big`` bytes (buffers included)."""
    import distributed.protocol.pickle as dp

    if not hasattr(dp, "_dsvm_counts"):
        loads, dumps = dp.loads, dp.dumps

        def counted_loads(x, *, buffers=()):  # noqa: ANN001, ANN202
            n = len(x) + sum(memoryview(b).nbytes for b in buffers)
            if n >= big:
                dp._dsvm_counts.append(("loads", n))
            return loads(x, buffers=buffers)

        def counted_dumps(x, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            frames = dumps(x, *args, **kwargs)
            n = sum(memoryview(f).nbytes for f in (frames if isinstance(frames, list)
                                                   else [frames]))
            if n >= big or getattr(x, "nbytes", 0) >= big or \
                    type(x).__name__ in ("AveragePartial", "StreamPass"):
                dp._dsvm_counts.append(("dumps", type(x).__name__))
            return frames

        dp._dsvm_original = loads, dumps
        dp.loads, dp.dumps = counted_loads, counted_dumps
    dp._dsvm_counts = []


def _stop_counting() -> None:
    """In a worker: put distributed's own pickle functions back (the cluster is shared by the
    session's other tests)."""
    import distributed.protocol.pickle as dp

    if hasattr(dp, "_dsvm_original"):
        dp.loads, dp.dumps = dp._dsvm_original
        del dp._dsvm_original, dp._dsvm_counts


def _take_counts() -> list:
    import distributed.protocol.pickle as dp

    out, dp._dsvm_counts = list(dp._dsvm_counts), []
    return out


def _in_scheduler() -> bool:
    """Whether the caller runs inside distributed's scheduler (this process hosts it)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("distributed.scheduler"):
            return True
        frame = frame.f_back
    return False


async def _stealing(dask_scheduler, on: bool) -> None:  # noqa: ANN001
    """Start or stop the scheduler's work stealing (idempotent both ways)."""
    stealing = dask_scheduler.extensions["stealing"]
    await (stealing.start() if on else stealing.stop())


def _counted_fit(local_client, ds, n_streams: int, monkeypatch) -> tuple[list, list, list]:
    """Fit 3 epochs; per window (an epoch, from its submission to its record; or with epochs
    run ahead, the whole run of them): the workers' counts and the model-sized payloads the
    client read; and the order in which epochs were submitted and recorded."""
    from distributed.protocol import pickle as dp

    from dsvm.training import loop

    local_client.run(_count_big_pickles, BIG)
    windows: list[dict[str, list]] = []
    on_client: list[list] = []
    inside: list[bool] = []
    order: list[str] = []
    loads, submit, record = dp.loads, loop.submit_epoch, loop.epoch_record

    def client_loads(x, *, buffers=()):  # noqa: ANN001, ANN202
        n = len(x) + sum(memoryview(b).nbytes for b in buffers)
        # (the fit's calibration and its end fetch the model; the LocalCluster's scheduler
        # runs in this process too, and reads the state the client sends inside a task
        # whenever its event loop gets to it, possibly once the first epoch has begun)
        if n >= BIG and inside and not _in_scheduler():
            on_client[-1].append(n)
        return loads(x, buffers=buffers)

    def opened(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if not inside:
            local_client.run(_take_counts)
            on_client.append([])
            inside.append(True)
        order.append(f"submit {args[7] + 1}")
        return submit(*args, **kwargs)

    def closed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        out = record(*args, **kwargs)
        order.append(f"record {out['epoch']}")
        if not loop.RUN_AHEAD or out["epoch"] == 3:
            inside.clear()
            windows.append(local_client.run(_take_counts))
        return out

    monkeypatch.setattr(dp, "loads", client_loads)
    monkeypatch.setattr(loop, "submit_epoch", opened)
    monkeypatch.setattr(loop, "epoch_record", closed)
    # counted is where the fit places its tasks: a stream stolen by the other worker under a
    # loaded machine (seen once in a full suite on 2 cores) reads the state a second time,
    # which is the scheduler's choice, not the fit's
    local_client.run_on_scheduler(_stealing, on=False)
    try:
        dsvm.SVMClassifier(client=local_client, solver="sgd", max_epochs=3, tol=None,
                           n_streams=n_streams, random_state=0).fit(ds)
    finally:
        local_client.run_on_scheduler(_stealing, on=True)
        local_client.run(_stop_counting)
        monkeypatch.undo()
    return windows, on_client, order


def test_a_worker_reads_the_state_once_and_sends_one_partial(tmp_path, local_client,
                                                             monkeypatch):
    from dsvm.training import loop

    n_features, n_streams = 2 ** 18, 6  # 3 streams on each of the 2 workers
    rng = np.random.default_rng(0)
    n, nnz = 6_000, 10
    indices = np.sort(rng.integers(0, n_features, (n, nnz)), axis=1).ravel()
    X = sp.csr_matrix((rng.random(n * nnz).astype(np.float32), indices,
                       np.arange(0, n * nnz + 1, nnz)), shape=(n, n_features))
    X.sum_duplicates()
    ds = dsvm.write_arrays(tmp_path / "wide.zarr", X, rng.integers(0, 2, n), chunk_rows=500)
    # the workers compile their kernels first: a stream held up for seconds by compiling
    # may be stolen by the other worker (allow_other_workers), whose partial then travels
    # on its own; counted here is the steady state
    dsvm.SVMClassifier(client=local_client, solver="sgd", max_epochs=1, tol=None,
                       n_streams=n_streams, random_state=0).fit(ds)
    with monkeypatch.context() as m:  # one epoch at a time, each counted on its own
        m.setattr(loop, "RUN_AHEAD", False)
        per_epoch, on_client, order = _counted_fit(local_client, ds, n_streams, monkeypatch)
    assert order == ["submit 1", "record 1", "submit 2", "record 2", "submit 3", "record 3"]
    assert len(per_epoch) == 3
    # nothing model-sized reaches the client during the epochs (only the summary)
    assert on_client == [[], [], []], on_client
    for epoch, counts in enumerate(per_epoch):
        assert len(counts) == 2
        for worker, events in counts.items():
            # the state arrives at most once, a partial from the other worker may too
            state_reads = [e for e in events if e[0] == "loads"]
            partials_sent = [e for e in events if e == ("dumps", "AveragePartial")]
            assert len(state_reads) <= 2, (worker, events)
            assert len(partials_sent) <= 1, (worker, events)
        # one partial crosses between the workers: one worker's streams are combined on the
        # other, where the state is held and the next one finalized
        assert sum(e == ("dumps", "AveragePartial") for ev in counts.values()
                   for e in ev) == 1, counts
        # in all: the epoch's start read by the worker that does not hold it, and the
        # partial read by the one that does; epoch 1 also reads the client's state once,
        # unless that message arrived before the epoch's counting began or in one message
        # with another (seen once in a full suite on 2 cores: 2 reads, one of 5.2 MB)
        n_loads = sum(e[0] == "loads" for ev in counts.values() for e in ev)
        assert (n_loads == 2) if epoch else (2 <= n_loads <= 3), (epoch, counts)
    # with each epoch submitted while the one before runs (the default on a cluster), the
    # same traffic in all, and still nothing model-sized to the client
    assert loop.RUN_AHEAD
    whole, on_client, order = _counted_fit(local_client, ds, n_streams, monkeypatch)
    assert order == ["submit 1", "submit 2", "record 1", "submit 3", "record 2", "record 3"]
    assert len(whole) == 1 and on_client == [[]], on_client
    assert sum(e == ("dumps", "AveragePartial") for ev in whole[0].values() for e in ev) == 3
    # at most that many loads: under load the scheduler may run a stream where the state
    # already is, and one read fewer is fine (a run at 6 was seen on a loaded machine)
    assert sum(e[0] == "loads" for ev in whole[0].values() for e in ev) <= 3 + 2 + 2, whole
