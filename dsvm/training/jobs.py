"""Public entry points for detached jobs (``dsvm.submit``, ``dsvm.attach``, ``dsvm.jobs``); the
work is in :mod:`dsvm.distributed.jobs`.

``client`` may be a ``distributed.Client``, a scheduler address or ``None`` (the active Client).
"""

from __future__ import annotations

from typing import Any


def _client(client: Any) -> Any:
    from dsvm.distributed.client import active_client, connect

    if client is None:
        client = active_client()
        if client is None:
            raise ValueError("Detached jobs need a cluster: pass client= (a Client or a "
                             "scheduler address) or create a distributed.Client first.")
    if isinstance(client, str):
        return connect(client)
    return client


def submit(estimator: Any, X: Any, y: Any = None, *, client: Any = None, out: str | None = None,
           job_id: str | None = None, keep_failed: bool = False, **fit_kwargs: Any) -> Any:
    """Fit ``estimator`` on ``X`` as a job running on the cluster; returns a ``Job``.

    The fit's driver runs in a task on a worker, so this process may exit: reconnect with
    :func:`attach`. ``out``: a path (shared by the workers) or URL where the job saves the
    model when it finishes, unless the fit failed (no better than a constant model: the job's
    status is then "failed"; ``keep_failed=True`` saves it anyway). ``fit_kwargs`` go to
    ``fit`` (``validation=...``).
    """
    from dsvm.distributed.jobs import submit as _submit

    return _submit(estimator, X, y, client=_client(client), out=out, job_id=job_id,
                   keep_failed=keep_failed, **fit_kwargs)


def attach(job_id: str, client: Any = None) -> Any:
    """Reconnect to the detached job ``job_id``: progress, ``history()``, ``result()``."""
    from dsvm.distributed.jobs import attach as _attach

    return _attach(job_id, _client(client))


def jobs(client: Any = None) -> list[dict[str, Any]]:
    """The records of every dsvm job on the cluster (id, status, epoch, history, ...)."""
    from dsvm.distributed.jobs import list_jobs

    return list_jobs(_client(client))
