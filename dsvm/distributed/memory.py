"""What each worker of a cluster says about its memory: its limit, its threads, and where dask
steps in (#28 item 3).

The training layer sizes a fit to these (:mod:`dsvm.training.memory`); this module only asks.
Everything is read on the workers themselves, in one ``client.run``: the thresholds as the
workers' own dask config says (a LocalCluster's workers get their nanny's config, a ``dask
worker`` its environment's). Not their size now: the window must not depend on what earlier
work left in their memory (:mod:`dsvm.training.memory`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class WorkerMemory:
    """One worker's memory, as it reports it (bytes; fractions of ``limit``)."""

    address: str
    limit: int | None  # the worker's memory limit (None: none set)
    nthreads: int
    pause: float | None  # dask pauses the worker above this fraction (None: never)
    terminate: float | None  # its nanny restarts it above this (None: no nanny, or never)


def _fraction(value: Any) -> float | None:
    """A threshold of ``distributed.worker.memory.*`` (False or None: turned off)."""
    if value is None or value is False:
        return None
    return float(value)


def _worker_memory_report(dask_worker: Any) -> dict[str, Any]:
    """Run on each worker (``client.run`` passes ``dask_worker``)."""
    import dask.config

    limit = getattr(getattr(dask_worker, "memory_manager", None), "memory_limit", None)
    return {
        "limit": int(limit) if limit else None,
        "nthreads": int(dask_worker.state.nthreads),
        "pause": _fraction(dask.config.get("distributed.worker.memory.pause", None)),
        # the nanny restarts the worker; a worker started without one is never restarted
        "terminate": (_fraction(dask.config.get("distributed.worker.memory.terminate", None))
                      if getattr(dask_worker, "nanny", None) else None),
    }


def workers_memory(client: Any) -> list[WorkerMemory]:
    """What every worker connected to ``client`` reports, in address order (a worker that
    could not answer, one lost meanwhile, is left out: the fit's own waits deal with it)."""
    reports = client.run(_worker_memory_report, on_error="return")
    return [WorkerMemory(address=address, **report)
            for address, report in sorted(reports.items()) if isinstance(report, dict)]
