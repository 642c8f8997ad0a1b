"""A task's error, said once: by the fit that raises it, not also by the worker that ran it.

A worker logs every failed task at ERROR ("Compute Failed", its key, the task and the
exception's traceback) before the client re-raises the exception. On the LocalCluster dsvm
starts itself, every task is dsvm's and every failure reaches the user as the fit's exception
(a missing value in a Dask DataFrame named by partition, column and row), so those lines only
put a worker's traceback above the one-line error. :class:`QuietTaskFailures`, registered on
that cluster only (not on a user's, whose workers' logs are the user's), drops them there.
With distributed's loggers at DEBUG (``dsvm --log-level DEBUG``), nothing is dropped.
"""

from __future__ import annotations

import logging
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

_FAILED = "Compute Failed"


class _DropTaskFailures(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_FAILED)


class QuietTaskFailures(WorkerPlugin):
    """In each worker, drop distributed's "Compute Failed" log records (see the module)."""

    name = "dsvm-quiet-task-failures"
    idempotent = True

    def setup(self, worker: Any) -> None:
        log = logging.getLogger("distributed.worker")
        if not any(isinstance(f, _DropTaskFailures) for f in log.filters):
            log.addFilter(_DropTaskFailures())


def wanted() -> bool:
    """Whether to quiet them: unless distributed's log level asks for every detail (DEBUG;
    INFO is distributed's own default)."""
    return logging.getLogger("distributed").getEffectiveLevel() > logging.DEBUG
