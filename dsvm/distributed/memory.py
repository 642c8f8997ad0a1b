"""What each worker of a cluster says about its memory: its limit, its process's size now,
whether dsvm's kernels are loaded in it, and where dask steps in (#28 item 3).

The training layer sizes a fit to these (:mod:`dsvm.training.memory`); this module only asks.
Everything is read on the workers themselves, in one ``client.run``: the resident size at this
moment (the scheduler's ``metrics["memory"]`` is the one of the last heartbeat, and right after
a fit it still counts that fit's windows), and the thresholds as the workers' own dask config
says (a LocalCluster's workers get their nanny's config, a ``dask worker`` its environment's).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class WorkerMemory:
    """One worker's memory, as it reports it (bytes; fractions of ``limit``)."""

    address: str
    limit: int | None  # the worker's memory limit (None: none set)
    process: int  # the worker process's resident memory now
    kernels_loaded: bool  # whether dsvm's numba kernels are imported in it yet
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
    import psutil

    limit = getattr(getattr(dask_worker, "memory_manager", None), "memory_limit", None)
    return {
        "limit": int(limit) if limit else None,
        "process": int(psutil.Process().memory_info().rss),
        "kernels_loaded": "dsvm.kernels" in sys.modules,
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
