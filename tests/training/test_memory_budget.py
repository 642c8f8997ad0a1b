"""The arithmetic of a fit sized to its workers' memory limit (dsvm.training.memory), on
workers' reports as dsvm.distributed.memory makes them; the cluster itself is exercised in
tests/distributed/test_memory_limit.py."""

from __future__ import annotations

import numpy as np

from dsvm.data.sources import ArraySource
from dsvm.data.window import WINDOW_BYTES, window_of
from dsvm.distributed.memory import WorkerMemory
from dsvm.engine.local import LocalEngine
from dsvm.training.memory import (
    HEADROOM,
    PROCESS_BYTES,
    STATE_COPIES,
    budget_of,
    chunks_that_fit,
    memory_window,
    refusal,
)
from dsvm.training.window import window_for

MiB = 1 << 20


def worker(address="tcp://a", *, limit=600 * MiB, nthreads=1, pause=0.8, terminate=0.95):
    return WorkerMemory(address, limit, nthreads, pause, terminate)


def test_the_budget_is_the_smallest_limit_a_fixed_process_and_the_first_threshold():
    budget = budget_of([worker(limit=800 * MiB), worker("tcp://b", limit=600 * MiB)],
                       n_streams=2)
    # (the process is not what the workers measure now: the window, which decides the model,
    # would depend on what earlier work left in their memory)
    assert (budget.limit, budget.process) == (600 * MiB, PROCESS_BYTES)
    assert (budget.threshold, budget.action) == (0.8, "pauses")
    assert budget.usable == int((0.8 - HEADROOM) * 600 * MiB)
    # the config's thresholds are read, not assumed: pausing off leaves the restart
    restart = budget_of([worker(pause=None, terminate=0.9)], n_streams=1)
    assert (restart.threshold, restart.action) == (0.9, "restarts")
    assert budget_of([worker(pause=None, terminate=None)], n_streams=1).threshold == 1.0


def test_no_limit_no_budget_and_streams_at_once_follow_the_threads():
    assert budget_of([worker(limit=None), worker("tcp://b", limit=None)], n_streams=2) is None
    # 8 streams on 2 workers of 2 threads: 2 run at once on each, each with its two windows
    budget = budget_of([worker(nthreads=2), worker("tcp://b", nthreads=2)], n_streams=8)
    assert budget.streams_at_once == 2
    assert budget.window_bytes(10 * MiB) == 4 * 10 * MiB
    assert budget.states(MiB) == (STATE_COPIES + 1) * MiB
    assert budget_of([worker(nthreads=4)] * 2, n_streams=2).streams_at_once == 1


def test_the_chunks_that_fit_are_the_most_whose_need_stays_within_the_budget():
    budget = budget_of([worker(limit=1000 * MiB)], n_streams=1)
    for state_bytes, chunk_bytes in [(0, 15 * MiB), (50 * MiB, 7 * MiB), (3 * MiB, 1.5 * MiB)]:
        n = chunks_that_fit(budget, state_bytes, chunk_bytes)
        assert n >= 1
        assert budget.need(state_bytes, chunk_bytes, n) <= budget.usable
        assert budget.need(state_bytes, chunk_bytes, n + 1) > budget.usable
    # the process and four 2^22-feature sgd states (50 MB) already fill a 0.49 GiB worker
    small = budget_of([worker(limit=int(0.49 * 1024) * MiB)], n_streams=2)
    assert chunks_that_fit(small, 50 * MiB, 1 * MiB) == 0


def test_the_refusal_names_the_numbers_and_what_to_do():
    budget = budget_of([worker(limit=600 * MiB)], n_streams=2)
    # chunks of 40 MiB (10,000 rows): two windows of one do not fit beside the process
    message = refusal(budget, 1 * MiB, 40 * MiB, 10_000)
    for part in ("600 MiB", f"{PROCESS_BYTES / MiB:,.0f} MiB", f"{STATE_COPIES} x 1.0 MiB",
                 "2 x 40.0 MiB",
                 f"{budget.usable / MiB:,.0f} MiB", "pauses a worker at 80%",
                 "--memory-limit", "dsvm convert --chunk-rows"):
        assert part in message, (part, message)
    assert "\n" not in message
    # the rows suggested make two windows of one chunk fit
    rows = int(message.split("--chunk-rows ")[1].split()[0])
    assert budget.need(1 * MiB, 40 * MiB * rows / 10_000) <= budget.usable < \
        budget.need(1 * MiB, 40 * MiB * (rows + 2) / 10_000)
    # when the process and states alone are too much, smaller chunks are not the advice
    states = refusal(budget, 40 * MiB, 1 * MiB, 10_000)
    assert "Smaller chunks would not help" in states and "smaller model" in states
    assert "--chunk-rows" not in states


def test_the_window_says_which_cap_set_it():
    chunk = 16e6
    by_memory = window_of(None, chunk, 1000.0, memory_chunks=3, memory_limit=600 * MiB)
    assert by_memory.chunks == 3 and by_memory.capped and by_memory.capped_by_memory
    assert "capped by the workers' memory limit of 600 MiB" in by_memory.describe()
    assert "128 MB" not in by_memory.describe()
    # the byte cap is the smaller: it is the one named
    by_bytes = window_of(None, 2e7, 1000.0, memory_chunks=7, memory_limit=600 * MiB)
    assert by_bytes.chunks == WINDOW_BYTES // 2e7 < 7 and not by_bytes.capped_by_memory
    assert "capped at 128 MB of rows" in by_bytes.describe()
    # never below one chunk; room for more than asked: not capped
    assert window_of(None, chunk, 1000.0, memory_chunks=0, memory_limit=MiB).chunks == 1
    roomy = window_of(2, 1e6, 1000.0, memory_chunks=50, memory_limit=600 * MiB)
    assert roomy.chunks == 2 and not roomy.capped and "memory" not in roomy.describe()
    # a stream of 4 chunks holds 4 whether or not the limit allows only 4: not its doing
    share = window_of(None, 1e6, 1000.0, limit=4, streams=2, memory_chunks=4,
                      memory_limit=600 * MiB)
    assert share.held == 4 and not share.capped_by_memory
    assert "memory" not in share.describe() and "at most 4 chunks" in share.describe()


def test_a_fit_in_process_keeps_its_window():
    X = np.random.default_rng(0).standard_normal((8192, 512)).astype(np.float32)
    source = ArraySource(X, np.sign(X[:, 0]), chunk_rows=1024)
    for requested in (None, 3):
        assert memory_window(requested, source, LocalEngine(), state_bytes=10**9) == \
            window_for(requested, source, n_streams=1)
