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

:class:`QuietWorkers`, registered on that cluster only (not on a user's, whose workers' logs
are the user's), drops them there. With distributed's loggers at DEBUG (``dsvm --log-level
DEBUG``), nothing is dropped.
"""

from __future__ import annotations

import logging
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

_SAID_BY_THE_FIT = ("Compute Failed", "Failed to communicate with scheduler during heartbeat")


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
