"""Connecting to a cluster from outside the training layer (the command line): a scheduler
address or file, with TLS, resolved to a client without the caller knowing distributed."""

from __future__ import annotations

from typing import Any


def connect(address: str, *, tls: tuple[str | None, str | None, str | None] | None = None,
            timeout: float | str | None = None) -> Any:
    """A client of the scheduler at ``address`` (or in the scheduler file ``address``);
    ``tls``: (CA file, certificate, key) for a ``tls://`` scheduler."""
    from dsvm.distributed.client import connect as _connect
    from dsvm.distributed.client import tls_security

    security = None if tls is None else tls_security(*tls)
    return _connect(address, security=security, timeout=timeout)


def start_workers_early() -> None:
    """For a command that will start its own LocalCluster: start the server its workers are
    forked from now (:func:`dsvm.distributed.start_method.start_forkserver`), so that its
    imports overlap the command's."""
    from dsvm.distributed.start_method import start_forkserver

    start_forkserver()


def quiet_cluster_logs(level: int) -> None:
    """Keep a command's output readable: distributed's INFO logs of every client and worker
    coming and going only at ``level`` INFO or below."""
    from dsvm.distributed.client import quiet_logs

    quiet_logs(level)


def compute(*collections: Any, what: str) -> tuple[Any, ...]:
    """Dask collections computed where they live (the active cluster, else this process), every
    wait through the no-workers watchdog (:func:`dsvm.distributed.watch.compute_watched`)."""
    from dsvm.distributed.client import compute_watched

    return compute_watched(*collections, what=what)


def held_if_spanning(*collections: Any) -> tuple[Any, ...]:
    """Dask collections (of one graph) whose chunks each take rows from many partitions (a
    merge, shuffle, ``set_index``), computed once and held where they are computed; others as
    they are (:func:`dsvm.distributed.dask_source.held_if_spanning`)."""
    from dsvm.distributed.dask_source import held_if_spanning as held

    return held(*collections)
