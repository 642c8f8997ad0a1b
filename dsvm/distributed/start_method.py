"""How the worker processes of the LocalCluster that dsvm starts itself come to life.

Dask starts a LocalCluster's workers with ``spawn`` by default: every worker is a fresh
interpreter that imports numpy, dask, distributed, scikit-learn and dsvm again (about 2 CPU-s
each here) before it runs a task. dsvm's own cluster (``client=None`` with a Dask collection,
``dsvm train`` without ``--scheduler``) forks them instead from a ``forkserver`` that imported
those modules once (:data:`PRELOAD`), as distributed's own test suite does: 3 starts of a
2-worker cluster and a short fit each took 30.7 s with spawn, 21.2 s with dask's forkserver
and 12.9 s with dsvm preloaded in it (2-core VM). Where there is no forkserver (Windows),
dask's setting stands. A cluster the user starts is left as the user configured it.

The server's imports take as long as a command's own (about 3 s here), and the first cluster
of a process waits for them. So a command that will start a cluster starts the server first
thing (:func:`start_forkserver`): the two import side by side on two cores. The server then
needs what a nanny would have given it, as a forked worker keeps the server's environment:
dask's pre-spawn environment (one BLAS/OpenMP thread, the malloc trim threshold) and the
nannies' fixed hash seed.
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

    if not _has_forkserver():
        yield
        return
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        preload_dsvm()
        yield


def _has_forkserver() -> bool:
    return "forkserver" in multiprocessing.get_all_start_methods()  # (not on Windows)


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


def start_forkserver() -> None:
    """Start this process's forkserver now, with :data:`PRELOAD` and the environment a
    nanny would give it (:func:`server_environ`), and return at once: the server imports in
    its own process, and a cluster's first worker waits for it. The server ends with this
    process; a command that then starts no cluster (a flag refused) has spent only the
    server's imports, on another core. This process's environment is left as it was."""
    from multiprocessing import forkserver

    if not _has_forkserver():
        return
    # first: it imports distributed, whose configuration defaults must be loaded before
    # forked_workers sets one of its keys (a set made before drops them all when undone)
    environ = server_environ()
    with forked_workers(), _environ(environ):
        forkserver.ensure_running()


@contextlib.contextmanager
def _environ(variables: dict[str, str]) -> Iterator[None]:
    """``variables`` set in this process's environment within the block (for a child process
    started there), then restored."""
    import os

    before = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


def server_environ() -> dict[str, str]:
    """The variables a nanny sets before it starts a worker process (distributed's Nanny:
    ``distributed.nanny.pre-spawn-environ``, values already in the environment kept, and
    PYTHONHASHSEED 6640 unless that configuration sets one), which a forked worker can only get
    from its server."""
    import os

    import dask
    import distributed  # noqa: F401  (its configuration defaults)

    config = dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {}
    environ = {k: os.environ.get(k, str(v)) for k, v in config.items() if v is not None}
    if environ.get("PYTHONHASHSEED") in (None, "0"):  # (the nanny's rule: config only)
        environ["PYTHONHASHSEED"] = "6640"
    return environ
