"""The workers of dsvm's own LocalCluster drop the log records whose news the fit gives itself
(dsvm.distributed.quiet); the end-to-end check is tests/test_user_runs.py's
``test_a_task_error_on_dsvms_own_cluster_is_said_once``."""

from __future__ import annotations

import inspect
import logging

import distributed.worker

from dsvm.distributed.quiet import QuietWorkers


def test_the_records_dropped_are_distributeds_own_and_only_those():
    source = inspect.getsource(distributed.worker)
    log = logging.getLogger("distributed.worker")
    before = list(log.filters)
    QuietWorkers().setup(worker=None)
    QuietWorkers().setup(worker=None)  # (idempotent: one filter)
    try:
        added = [f for f in log.filters if f not in before]
        assert len(added) == 1
        for message in ("Compute Failed\nKey: x", "Failed to communicate with scheduler during "
                        "heartbeat.", "failed during get data with %s -> %s"):
            assert message.split("\n")[0] in source  # the wording of this distributed
            record = logging.LogRecord("distributed.worker", logging.ERROR, "", 0, message,
                                       None, None)
            assert not added[0].filter(record)
        kept = logging.LogRecord("distributed.worker", logging.ERROR, "", 0,
                                 "Worker exceeded 95% memory budget", None, None)
        assert added[0].filter(kept)
    finally:
        for f in log.filters:
            if f not in before:
                log.removeFilter(f)
