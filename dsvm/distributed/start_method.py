"""How the worker processes of the LocalCluster that dsvm starts itself come to life.

Dask starts a LocalCluster's workers with ``spawn`` by default: every worker is a fresh
interpreter that imports numpy, dask, distributed, scikit-learn and dsvm again (about 2 CPU-s
each here) before it runs a task. dsvm's own cluster (``client=None`` with a Dask collection,
``dsvm train`` without ``--scheduler``) forks them instead from a ``forkserver`` that imported
those modules once (:data:`PRELOAD`), as distributed's own test suite does: 3 starts of a
2-worker cluster and a short fit each took 30.7 s with spawn, 21.2 s with dask's forkserver
and 12.9 s with dsvm preloaded in it (2-core VM). Where there is no forkserver (Windows),
dask's setting stands. A cluster the user starts is left as the user configured it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
from collections.abc import Iterator

# What a worker of a fit imports anyway: imported once by the server it is forked from.
PRELOAD = ("numpy", "pandas", "dask.array", "distributed", "dsvm.engine.tasks",
           "dsvm.estimators")

_lock = threading.Lock()
_preload_set = False


@contextlib.contextmanager
def forked_workers() -> Iterator[None]:
    """Within the block, the worker processes that dask's nannies start (and restart) are
    forked from a server with :data:`PRELOAD` imported."""
    import dask

    if "forkserver" not in multiprocessing.get_all_start_methods():
        yield
        return
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        preload_dsvm()
        yield


def preload_dsvm() -> None:
    """Have this process's forkserver import :data:`PRELOAD` (once; no effect when it is
    already running, e.g. started by an earlier cluster, whose workers then import what they
    need themselves)."""
    global _preload_set
    with _lock:
        if _preload_set:
            return
        from distributed.utils import get_mp_context

        # (dask sets its own list on the first forkserver context of the process; ours
        # replaces it)
        get_mp_context().set_forkserver_preload(list(PRELOAD))
        _preload_set = True

