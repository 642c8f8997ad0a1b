"""Which engine runs a computation: this process for in-memory arrays, else a Dask cluster."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

from dsvm.data.sources import Source, is_source
from dsvm.data.window import WINDOW_BYTES
from dsvm.engine.local import Engine, LocalEngine
from dsvm.solvers.objective import pass_scratch_kept
from dsvm.training.inputs import is_dask_collection, is_dataset_ref, is_parquet_ref

logger = logging.getLogger(__name__)

# A dataset up to this size (uncompressed) trains in this process when no cluster was asked
# for (no client, none active, no n_workers): starting an embedded LocalCluster, importing dsvm
# in each worker and loading or compiling the kernels there cost ~10 s on 2 cores, and a first
# run compiled every kernel once per worker, while a 4 MB dataset's ten epochs take 0.6 s (#25).
# Threads run the same streams as the workers would (one per core, the numba passes release
# the GIL), so the model is the one the embedded cluster gives. Memory still does not grow
# with the data: the chunks are read from the store window by window, as on a worker; only a
# store no larger than one window (WINDOW_BYTES) is read once for the whole fit and held, as
# every epoch's window held all of it anyway, and a larger one's next epoch's first window is
# read while this epoch's last trains (dsvm.data.held).
IN_PROCESS_BYTES = 256 << 20


def runs_in_process(data: Any) -> bool:
    """In-memory arrays train here (dask-ml's rule); datasets and dask collections on a
    cluster. ``data`` is a source, or the user's input before it becomes one."""
    if is_source(data):
        return data.in_memory
    return not (is_dataset_ref(data) or is_dask_collection(data))


def _stored_bytes(data: Any) -> int | None:
    """Uncompressed bytes of a dataset (a source, a path or a Dataset); None for other input."""
    if is_source(data):
        return None if data.dataset is None else int(data.dataset.nbytes)
    if is_dataset_ref(data) and not is_parquet_ref(data):
        from dsvm.data.zarr_store import Dataset, open_dataset

        return int((data if isinstance(data, Dataset) else open_dataset(data)).nbytes)
    return None


def active_cluster() -> bool:
    """Whether this process has an active Dask Client (loads the cluster's code: a process
    that never imported distributed has none, :func:`_cluster_in_use`)."""
    from dsvm.distributed.engine import active_cluster as active

    return active()


def _cluster_in_use() -> bool:
    # no Client can be active in a process that never imported distributed
    return "distributed" in sys.modules and active_cluster()


def small_dataset_here(data: Any, client: Any, n_workers: int | None) -> bool:
    """Whether a dataset fit runs in this process although datasets belong on a cluster: it is
    small (:data:`IN_PROCESS_BYTES`) and no cluster was given, is active, or sized."""
    if client is not None or n_workers is not None or _cluster_in_use():
        return False
    size = _stored_bytes(data)
    return size is not None and size <= IN_PROCESS_BYTES


# Whether this process said that a fit compiles dsvm's kernels first (said once at most).
_COMPILING = {"said": False}


def say_if_compiling(client: Any) -> None:
    """One log line (WARNING, which Python prints to stderr when logging is not configured,
    as in a notebook) before the first fit of this process on this machine that compiles
    dsvm's kernels first: a minute or two once per installation, which looked like a hang.
    Not for a given or active cluster, whose workers may be elsewhere with caches of their
    own. ``dsvm`` commands say it in their own words (:func:`compiling_said`)."""
    if _COMPILING["said"] or client is not None or _cluster_in_use():
        return
    from dsvm.kernels._jit import kernels_not_compiled

    compiling_said()
    if kernels_not_compiled():
        logger.warning("dsvm: compiling its kernels for this machine (once per installation, "
                       "a minute or two)...")


def compiling_said() -> None:
    """Mark that this process said that its fit compiles dsvm's kernels (not to say it twice)."""
    _COMPILING["said"] = True


@contextlib.contextmanager
def engine_for(data: Any, client: Any = None, n_workers: int | None = None) -> Iterator[Engine]:
    """The engine a fit on ``data`` (a source or the user's input) runs on; ``client``: a
    Client, an address or None. Open it before turning dask input into a source: dask
    collections are inspected (chunk lengths, labels) on its cluster."""
    say_if_compiling(client)
    if runs_in_process(data):
        local = LocalEngine()
        if n_workers is not None:  # the streams a cluster of them would run, in threads here
            local.n_workers = int(n_workers)
        with pass_scratch_kept():  # the passes run in this thread, one after another
            yield local
        return
    if small_dataset_here(data, client, n_workers):
        local = LocalEngine(hold_bytes=WINDOW_BYTES)
        local.n_workers = max(1, os.cpu_count() or 1)  # the streams the embedded cluster runs
        logger.info("training in this process on %d threads (a dataset under %d MB; pass "
                    "n_workers or a client for a cluster)", local.n_workers,
                    IN_PROCESS_BYTES >> 20)
        try:
            yield local
        finally:
            local.close()
        return
    from dsvm.distributed.engine import cluster_engine  # (a cluster's code, loaded for one)

    with cluster_engine(client, n_workers=n_workers) as engine:
        yield engine


@contextlib.contextmanager
def prediction_engine(source: Source, client: Any = None,
                      n_workers: int | None = None) -> Iterator[Engine]:
    """Prediction on a dataset runs in this process unless a client was given or is active
    (starting a cluster to predict a dataset would cost more than it saves)."""
    if runs_in_process(source) or (client is None and source.dataset is not None
                                   and not active_cluster()):
        yield LocalEngine()
        return
    with engine_for(source, client, n_workers) as engine:
        yield engine
