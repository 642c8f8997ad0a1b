"""Data never travels through the client or the scheduler: during a fit on a zarr dataset the
only task results are states and partials, whose size depends on n_features, not on the data."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from distributed.diagnostics.plugin import SchedulerPlugin

import dsvm

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(300)]


class ResultSizes(SchedulerPlugin):
    """Records the size of every task result the scheduler learns about (a copy of it runs in
    the scheduler; the sizes are read back with run_on_scheduler)."""

    name = "dsvm-result-sizes"

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}

    async def start(self, scheduler) -> None:  # noqa: ANN001
        self.scheduler = scheduler

    def transition(self, key, start, finish, *args, **kwargs) -> None:  # noqa: ANN001
        if finish == "memory":
            ts = self.scheduler.tasks.get(key)
            if ts is not None:
                self.sizes[str(key)] = max(self.sizes.get(str(key), 0), int(ts.nbytes))


@contextlib.contextmanager
def result_sizes(client, name: str = ResultSizes.name) -> Iterator[Callable[[], dict]]:
    """A :class:`ResultSizes` on the scheduler while the block runs; yields a function that
    reads what it recorded. The plugin is removed after: the test cluster is shared by the
    session (tests/conftest.py ``local_client``)."""
    client.register_plugin(ResultSizes(), name=name)
    try:
        yield lambda: client.run_on_scheduler(
            lambda dask_scheduler: dict(dask_scheduler.plugins[name].sizes))
    finally:
        client.unregister_scheduler_plugin(name)


def test_dask_sees_the_real_size_of_dsvm_objects(tmp_path):
    from dask.sizeof import sizeof

    from dsvm.combine.averaging import ParameterAveraging
    from dsvm.solvers.base import PassStats
    from dsvm.solvers.registry import make_solver

    X = np.zeros((1000, 50))
    ds = dsvm.write_arrays(tmp_path / "s.zarr", X, np.r_[np.ones(500), -np.ones(500)],
                           dtype="float64")
    block = ds.read_chunk(0)
    assert sizeof(block) >= X.nbytes
    state = make_solver("sgd").init_state(50, 10, np.dtype(np.float64))
    assert sizeof(state) >= 10 * 50 * 8 * 2  # coef and its running average
    partial = ParameterAveraging().chunk(state, PassStats(1.0, 10, 10.0))
    assert sizeof(partial) >= 10 * 50 * 8


def test_task_results_are_model_sized_not_data_sized(tmp_path, local_client):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40_000, 30))
    y = np.where(X[:, 0] + 0.2 * rng.normal(size=40_000) > 0, 1.0, -1.0)
    ds = dsvm.write_arrays(tmp_path / "d.zarr", X, y, chunk_rows=5000, dtype="float64")
    chunk_bytes = 5000 * 30 * 8
    with result_sizes(local_client) as recorded:
        clf = dsvm.SVMClassifier(max_epochs=2, tol=None, random_state=0, client=local_client)
        clf.fit(ds, validation=ds)
        sizes = recorded()
    dsvm_keys = {k: v for k, v in sizes.items() if k.startswith("dsvm-")}
    assert any(k.startswith("dsvm-pass") for k in dsvm_keys), sizes
    # a state/partial of 30 features is a few KB; one chunk of X is 1.2 MB
    assert max(dsvm_keys.values()) < chunk_bytes / 50, dsvm_keys
    assert clf.score(ds) > 0.9


def test_a_source_that_reads_windows_whole_gets_the_next_window_while_one_trains():
    """A source with ``read_chunks`` (zarr datasets: one buffer per window) is asked for whole
    windows: the next one as soon as the consumer holds the current one, and no further."""
    import time

    from dsvm.engine.tasks import iter_chunks

    asked: list[list[int]] = []

    class Source:
        def read_chunk(self, i):
            raise AssertionError("chunks of a window are read together")

        def read_chunks(self, ids):
            asked.append(list(ids))
            return [f"block {i}" for i in ids]

    it = iter_chunks(Source(), [5, 1, 7, 3, 9, 0, 2], ahead=3)
    got = [next(it) for _ in range(3)]
    deadline = time.monotonic() + 5
    while len(asked) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert asked == [[5, 1, 7], [3, 9, 0]]
    got += list(it)
    assert asked == [[5, 1, 7], [3, 9, 0], [2]]
    assert got == [(i, f"block {i}") for i in [5, 1, 7, 3, 9, 0, 2]]


def test_a_zarr_window_is_read_into_one_buffer(tmp_path):
    """Dataset.read_chunks: the same rows as chunk by chunk, as views of one buffer (dense X;
    CSR indices and data), so that the pass runs on the span instead of a copy."""
    import scipy.sparse as sp

    from dsvm.data import write_arrays
    from dsvm.solvers.passes import span_of_views

    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 7)).astype(np.float32)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    Xs = sp.random(1000, 50, density=0.1, format="csr", random_state=0, dtype=np.float32)
    for data in (X, Xs):
        ds = write_arrays(tmp_path / f"{type(data).__name__}.zarr", data, y, chunk_rows=128)
        ids = [5, 0, 7, 2]  # 7: the short last chunk
        blocks = ds.read_chunks(ids)
        for i, b in zip(ids, blocks):
            one = ds.read_chunk(i)
            np.testing.assert_array_equal(b.y, one.y)
            if sp.issparse(data):
                for name in ("indptr", "indices", "data"):
                    np.testing.assert_array_equal(getattr(b, name), getattr(one, name))
                assert b.data.base is blocks[0].data.base is not None
            else:
                np.testing.assert_array_equal(b.X, one.X)
                assert b.X.base is blocks[0].X.base
        codes = [np.zeros(b.n_samples, np.int32) for b in blocks]
        assert span_of_views(blocks, codes) is not None


def test_windows_read_the_next_window_while_the_current_one_trains():
    """iter_chunks(..., ahead=k) keeps k chunks in flight: once the consumer holds a window of
    k chunks (and trains on it), the next window's k reads are issued, in order, one at a
    time; every chunk arrives once, in order. One chunk ahead left all but one of a window's
    reads waited for."""
    import time

    from dsvm.engine.tasks import iter_chunks

    issued: list[int] = []

    class Source:
        def read_chunk(self, i):
            issued.append(i)
            return i

    it = iter_chunks(Source(), list(range(12)), ahead=4)
    got = [next(it)[1] for _ in range(4)]  # the first window
    deadline = time.monotonic() + 5
    while len(issued) < 8 and time.monotonic() < deadline:  # the background thread's reads
        time.sleep(0.01)
    assert issued == list(range(8))  # the next window, and no further
    got += [block for _, block in it]
    assert got == list(range(12)) and issued == list(range(12))
