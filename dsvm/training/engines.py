"""Which engine runs a computation: this process for in-memory arrays, else a Dask cluster."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from dsvm.distributed.engine import Engine, LocalEngine, active_cluster, cluster_engine
from dsvm.distributed.sources import ArraySource, DatasetSource


def runs_in_process(source: Any) -> bool:
    """In-memory arrays train here (dask-ml's rule); datasets and dask arrays on a cluster."""
    return isinstance(getattr(source, "inner", source), ArraySource)


@contextlib.contextmanager
def engine_for(source: Any, client: Any = None, n_workers: int | None = None) -> Iterator[Engine]:
    """The engine a fit on ``source`` runs on (``client``: a Client, an address or None)."""
    if runs_in_process(source):
        yield LocalEngine()
        return
    with cluster_engine(client, n_workers=n_workers) as engine:
        yield engine


@contextlib.contextmanager
def prediction_engine(source: Any, client: Any = None,
                      n_workers: int | None = None) -> Iterator[Engine]:
    """Prediction on a dataset runs in this process unless a client was given or is active
    (starting a cluster to predict a dataset would cost more than it saves)."""
    inner = getattr(source, "inner", source)
    if runs_in_process(source) or (client is None and isinstance(inner, DatasetSource)
                                   and not active_cluster()):
        yield LocalEngine()
        return
    with engine_for(source, client, n_workers) as engine:
        yield engine
