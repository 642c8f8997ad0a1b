"""A fit sized to its workers' memory limit (#28 item 3).

Dask restarts a worker whose process grows above a share of its memory limit
(``distributed.worker.memory.terminate``, 95% by default; its nanny does it) and pauses one
above another (``...pause``, 80%: it starts no task until its memory comes down, and memory
that a fit holds between tasks never does). A fit that does not fit is then killed and
retried on worker after worker until dask gives up with ``KilledWorker``, minutes later. So
before the first pass the fit works out what one worker holds at once, and

* the shuffle window shrinks to the chunks that fit (never below one), which the fit's log
  line and :meth:`dsvm.data.window.Window.describe` then say;
* if not even one chunk fits, the fit is refused there, with the numbers and what to do.

What a worker holds at once: its process (``PROCESS_BYTES``, whatever a worker measures now:
the window is part of what decides the model, so it must not depend on what earlier work
left in the workers' memory, and a session's worker grown to 711 MiB refused a fit of 16 MiB
of states that dask would have run), ``STATE_COPIES`` model states (K stacked
ones for a grid) and, for each of its streams that run at once, two windows of rows (the one
trained on and the one read ahead, :func:`dsvm.engine.tasks.iter_chunks`) and one more copy
of the state. That must stay below the lower of dask's two thresholds less ``HEADROOM`` of
the limit for what is not counted (a solver's kernels compiled later, a state's pickled copy
in transfer, the allocator's slack). In process (no cluster) nothing here applies.

Only :mod:`dsvm.distributed` asks the workers (:mod:`dsvm.distributed.memory`); the
arithmetic is here, in plain functions of what they report.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dsvm.data.sources import Source
from dsvm.engine.local import Engine
from dsvm.training.window import DEFAULT_WINDOW, Window, chunk_bytes, window_for

if TYPE_CHECKING:  # (an in-process fit loads no cluster code: tests/test_layering.py)
    from dsvm.distributed.memory import WorkerMemory

logger = logging.getLogger(__name__)

# Model states a worker holds at once, at the root of an epoch's combine: the epoch's start
# (which the finalize reads), its own stream's partial, the other worker's and the new state,
# none of which it may overwrite (each is another task's result). Measured (benchmarks/
# RESULTS.md, "#28 item 3"): from 2^20 to 2^24 features a worker's peak grew by 4.7-4.8
# states, the CSR pass's working arrays included.
STATE_COPIES = 4
# A worker process with dsvm's kernels loaded and run. Measured on this machine (x86_64,
# Python 3.11, numba 0.68, zarr 3.1, distributed 2026.8; 2 worker processes x 1 thread): a
# fresh worker is 62 MiB, 195 MiB once numba, zarr and dsvm's kernels are imported, 318-326
# MiB after its first fit (the kernels loaded from numba's cache and run); further solvers
# added 0-32 MiB (once 120 MiB on one worker, which the head-room is for).
PROCESS_BYTES = 330 << 20
# The share of the limit kept free below dask's first threshold for what is not counted.
HEADROOM = 0.10

# What a smaller model has fewer of, in the advice of a refusal (a grid with folds adds them)
FEWER = "features, alphas or classes"
_MiB = float(1 << 20)


@dataclass(frozen=True)
class MemoryBudget:
    """What a worker of the cluster may hold for a fit (bytes): the smallest worker limit,
    the process, the first of dask's thresholds, the streams a worker runs at once."""

    limit: int
    process: int  # a worker process with dsvm's kernels loaded (PROCESS_BYTES)
    threshold: float  # the fraction of ``limit`` where dask first steps in
    action: str  # what dask does there ("pauses", "restarts")
    streams_at_once: int = 1

    @property
    def usable(self) -> int:
        """Bytes a fit may plan for: below the threshold by ``HEADROOM`` of the limit."""
        return max(0, int((self.threshold - HEADROOM) * self.limit))

    def states(self, state_bytes: int) -> int:
        """Bytes of the model states held at once (a copy more for each extra stream)."""
        return int(state_bytes) * (STATE_COPIES + self.streams_at_once - 1)

    def window_bytes(self, chunk_bytes: float) -> float:
        """Bytes one chunk more in the window costs: two windows for each stream at once."""
        return 2.0 * float(chunk_bytes) * self.streams_at_once

    def need(self, state_bytes: int, chunk_bytes: float, chunks: int = 1) -> int:
        """Bytes a worker needs with windows of ``chunks`` chunks."""
        return int(self.process + self.states(state_bytes)
                   + chunks * self.window_bytes(chunk_bytes))


def budget_of(reports: Sequence[WorkerMemory], n_streams: int) -> MemoryBudget | None:
    """The budget of the cluster whose workers report ``reports``, for ``n_streams``
    streams (None: no worker has a memory limit)."""
    limited = [r for r in reports if r.limit]
    if not limited:
        return None
    limit = min(int(r.limit or 0) for r in limited)
    process = PROCESS_BYTES  # (not what the workers measure now: see the module notes)
    steps = [(f, "pauses") for r in limited if (f := r.pause) is not None]
    steps += [(f, "restarts") for r in limited if (f := r.terminate) is not None]
    threshold, action = min(steps) if steps else (1.0, "runs out of memory")
    per_worker = -(-max(1, int(n_streams)) // max(1, len(reports)))
    at_once = max(1, min(per_worker, max(r.nthreads for r in reports)))
    return MemoryBudget(limit, int(process), float(threshold), action, at_once)


def chunks_that_fit(budget: MemoryBudget, state_bytes: int, chunk_bytes: float) -> int:
    """The most chunks a window may hold under ``budget`` (0: not even one)."""
    room = budget.usable - budget.process - budget.states(state_bytes)
    if room <= 0:
        return 0
    return int(room // max(1.0, budget.window_bytes(chunk_bytes)))


def refusal(budget: MemoryBudget, state_bytes: int, chunk_bytes: float,
            chunk_rows: float, fewer: str = FEWER) -> str:
    """The message of a fit refused because not even one chunk fits: the numbers, and what
    to do (``fewer``: what a smaller model has fewer of)."""
    copies = STATE_COPIES + budget.streams_at_once - 1
    windows = 2 * budget.streams_at_once
    need = budget.need(state_bytes, chunk_bytes)
    head = (f"The workers' memory limit of {budget.limit / _MiB:,.0f} MiB is too small for this "
            f"fit: a worker needs {budget.process / _MiB:,.0f} MiB for its process (dsvm's "
            f"kernels loaded), {copies} x {state_bytes / _MiB:,.1f} MiB for the model states "
            f"it holds at once and {windows} x {chunk_bytes / _MiB:,.1f} MiB for windows of "
            f"one chunk, {need / _MiB:,.0f} MiB, above the {budget.usable / _MiB:,.0f} MiB it "
            f"may use (dask {budget.action} a worker at {budget.threshold:.0%} of its limit; "
            f"{HEADROOM:.0%} of it is kept free). ")
    more = ("give each worker more memory (dask worker --memory-limit, "
            "LocalCluster(memory_limit=...))")
    fixed = budget.process + budget.states(state_bytes)
    if fixed >= budget.usable:
        smaller = ("" if budget.process >= budget.usable else
                   f", or train a smaller model (fewer {fewer})")
        return head + (f"Smaller chunks would not help (the process and states alone need "
                       f"{fixed / _MiB:,.0f} MiB): {more}{smaller}.")
    room = budget.usable - fixed
    rows = int(room / budget.window_bytes(chunk_bytes) * chunk_rows)
    return head + (f"{more[0].upper()}{more[1:]}, or write the data in smaller chunks "
                   f"(dsvm convert --chunk-rows {max(1, rows)} or fewer).")


def memory_window(requested: int | None, source: Source, engine: Engine, *,
                  state_bytes: int, n_streams: int | None = None,
                  default: int = DEFAULT_WINDOW, fewer: str = FEWER,
                  row_bytes: float = 0.0) -> Window:
    """The window of :func:`dsvm.training.window.window_for`, capped to what the workers'
    memory limit leaves room for beside their process and ``state_bytes`` of model state; a
    ``ValueError`` if not even one chunk fits. ``row_bytes``: what a window holds per row
    besides the row (CoCoA+'s duals, :mod:`dsvm.training.cocoa_grid`). In process (an engine
    that reports no workers' memory), or with no limit set, the window of ``window_for``."""
    n_streams = n_streams or engine.n_workers
    report = getattr(engine, "worker_memory", None)
    budget = None if report is None else budget_of(report(), n_streams)
    if budget is None:
        return window_for(requested, source, default, n_streams)
    n_chunks = max(1, int(source.n_chunks))
    per_chunk = chunk_bytes(source) or 0.0  # (not known: the process and states only)
    per_chunk += float(row_bytes) * source.n_samples / n_chunks
    fit = chunks_that_fit(budget, state_bytes, per_chunk)
    if fit < 1:
        raise ValueError(refusal(budget, state_bytes, per_chunk,
                                 float(source.n_samples) / n_chunks, fewer))
    logger.info("worker memory: limit %.0f MiB, usable %.0f MiB (dask %s at %.0f%%), process "
                "%.0f MiB, %d x %.1f MiB of states: windows of up to %d chunks of %.1f MiB fit",
                budget.limit / _MiB, budget.usable / _MiB, budget.action,
                100 * budget.threshold, budget.process / _MiB,
                STATE_COPIES + budget.streams_at_once - 1, state_bytes / _MiB, fit,
                per_chunk / _MiB)
    return window_for(requested, source, default, n_streams,
                      memory_chunks=fit if per_chunk else None, memory_limit=budget.limit)


def check_worker_memory(source: Source, engine: Engine, *, state_bytes: int,
                        n_streams: int | None = None, fewer: str = FEWER,
                        row_bytes: float = 0.0) -> None:
    """Refuse a fit whose workers cannot hold one chunk beside their process and the model
    states, before any of its tasks runs (see :func:`memory_window`)."""
    memory_window(1, source, engine, state_bytes=state_bytes, n_streams=n_streams,
                  fewer=fewer, row_bytes=row_bytes)
