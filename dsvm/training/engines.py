"""Which engine runs a computation: this process for in-memory arrays, else a Dask cluster."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from dsvm.distributed.engine import Engine, LocalEngine, active_cluster, cluster_engine
from dsvm.distributed.sources import ArraySource, DaskSource, DatasetSource, base_source
from dsvm.solvers.objective import pass_scratch_kept
from dsvm.training.inputs import is_dask_collection, is_dataset_ref


def runs_in_process(data: Any) -> bool:
    """In-memory arrays train here (dask-ml's rule); datasets and dask collections on a
    cluster. ``data`` is a source, or the user's input before it becomes one."""
    inner = base_source(data)
    if isinstance(inner, (ArraySource, DatasetSource, DaskSource)):
        return isinstance(inner, ArraySource)
    return not (is_dataset_ref(data) or is_dask_collection(data))


@contextlib.contextmanager
def engine_for(data: Any, client: Any = None, n_workers: int | None = None) -> Iterator[Engine]:
    """The engine a fit on ``data`` (a source or the user's input) runs on; ``client``: a
    Client, an address or None. Open it before turning dask input into a source: dask
    collections are inspected (chunk lengths, labels) on its cluster."""
    if runs_in_process(data):
        with pass_scratch_kept():  # the passes run in this thread, one after another
            yield LocalEngine()
        return
    with cluster_engine(client, n_workers=n_workers) as engine:
        yield engine


@contextlib.contextmanager
def prediction_engine(source: Any, client: Any = None,
                      n_workers: int | None = None) -> Iterator[Engine]:
    """Prediction on a dataset runs in this process unless a client was given or is active
    (starting a cluster to predict a dataset would cost more than it saves)."""
    inner = base_source(source)
    if runs_in_process(source) or (client is None and isinstance(inner, DatasetSource)
                                   and not active_cluster()):
        yield LocalEngine()
        return
    with engine_for(source, client, n_workers) as engine:
        yield engine
