"""The workers of dsvm's own LocalCluster log nothing the fit says itself.

Two of distributed's worker log records reach the user of dsvm's embedded cluster as
tracebacks above what the fit says anyway:

- "Compute Failed": a worker logs every failed task at ERROR (its key, the task and the
  exception's traceback) before the client re-raises the exception. On that cluster every task
  is dsvm's and every failure reaches the user as the fit's exception (a missing value in a
  Dask DataFrame named by partition, column and row).
- "Failed to communicate with scheduler during heartbeat": when the fit ends, the cluster's
  scheduler may close while a worker's heartbeat is on the wire (on 2 busy cores, 4 of them
  in one script of 9 fits, 30 lines each). A scheduler lost during a fit is the fit's
  SchedulerLostError.
- "failed during get data": a worker sending a result to another that is closing (a Ctrl-C
  closes the cluster while one stream's state is on its way to the other worker: 25 lines of
  ConnectionResetError above ``dsvm train: interrupted``). A worker lost during a fit is the
  fit's to say (it continues on the others, or stops with the reason).

:class:`QuietWorkers`, registered on that cluster only (not on a user's, whose workers' logs
are the user's), drops them there.

That cluster's scheduler runs in the user's process, and logs every P2P shuffle (a merge of
two Dask DataFrames, held for the fit) at WARNING as it starts and as it ends: four lines of
shuffle ids and task keys above a fit on a merge, none of them a problem. :func:`quiet_scheduler`
drops those two routine records while that cluster lives (from any scheduler of the process:
a logging filter cannot tell them apart); a shuffle restarted after a lost worker is still
said. With distributed's loggers at DEBUG (``dsvm --log-level DEBUG``), nothing is dropped.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

_SAID_BY_THE_FIT = ("Compute Failed", "Failed to communicate with scheduler during heartbeat",
                    "failed during get data")


class _DropSaidByTheFit(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_SAID_BY_THE_FIT)


class QuietWorkers(WorkerPlugin):
    """In each worker, drop the log records listed in the module's notes."""

    name = "dsvm-quiet-workers"
    idempotent = True

    def setup(self, worker: Any) -> None:
        log = logging.getLogger("distributed.worker")
        if not any(isinstance(f, _DropSaidByTheFit) for f in log.filters):
            log.addFilter(_DropSaidByTheFit())


def wanted() -> bool:
    """Whether to quiet them: unless distributed's log level asks for every detail (DEBUG;
    INFO is distributed's own default)."""
    return logging.getLogger("distributed").getEffectiveLevel() > logging.DEBUG


_ROUTINE_SHUFFLE = ("Shuffle %s initialized by task", "Shuffle %s deactivated due to stimulus")


class _DropRoutineShuffles(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_ROUTINE_SHUFFLE)


@contextlib.contextmanager
def quiet_scheduler() -> Iterator[None]:
    """Drop the scheduler's routine shuffle records (module notes) inside the block."""
    log = logging.getLogger("distributed.shuffle._scheduler_plugin")
    drop = _DropRoutineShuffles()
    log.addFilter(drop)
    try:
        yield
    finally:
        log.removeFilter(drop)
