"""Detached jobs: a fit whose driver runs on the cluster, so the notebook or shell may go away.

``submit`` sends one task that runs ``estimator.fit`` on a worker. The task leaves the worker's
thread pool (``worker_client`` secedes), so the fit's own stream tasks can use every worker
thread, including the one it started on. The job lives on the scheduler, not in the submitting
client:

* the job's future is published as the scheduler dataset ``dsvm-job-<id>``, which keeps it (and
  its result, the fitted estimator) alive after the submitting client disconnects;
* its progress is a record in the scheduler's metadata under ``("dsvm-jobs", <id>)``: status,
  epoch, history, error, and a ``cancel`` flag that the fit checks after every epoch.

``attach`` finds both again from any client. If the worker running a job dies, the scheduler
re-runs the task elsewhere; with a ``checkpoint`` on shared storage the job resumes from its last
epoch (``submit`` fits with ``resume=True`` when the estimator has a checkpoint).
"""

from __future__ import annotations

import html
import logging
import os
import time
import uuid
from collections.abc import Callable
from typing import Any

from distributed import Client

from dsvm.distributed.watch import wait_for_result
from dsvm.engine.hooks import epoch_hook

logger = logging.getLogger(__name__)

META_KEY = "dsvm-jobs"
DATASET_PREFIX = "dsvm-job-"
FINAL_STATES = ("finished", "failed", "error", "cancelled")


class JobCancelledError(RuntimeError):
    """The job was cancelled (``job.cancel()`` / ``dsvm cancel``)."""


# -- on the worker ---------------------------------------------------------------------------------
def _set(client: Client, job_id: str, **fields: Any) -> None:
    for key, value in fields.items():
        client.set_metadata([META_KEY, job_id, key], value)


def _cancel_requested(client: Client, job_id: str) -> bool:
    return bool(client.get_metadata([META_KEY, job_id, "cancel"], default=False))


def _run_job(job_id: str, estimator: Any, X: Any, y: Any, out: str | None,
             fit_kwargs: dict[str, Any], keep_failed: bool = False) -> Any:
    """The job's task: fit on this cluster, publishing progress after every epoch. A fit that
    failed (``outcome_.failed``: no better than a constant model) ends with status "failed",
    and its model is saved to ``out`` only with ``keep_failed``."""
    from distributed import get_worker, worker_client

    with worker_client(separate_thread=True) as client:
        if _cancel_requested(client, job_id):
            raise JobCancelledError(f"dsvm job {job_id} was cancelled before it started.")
        _set(client, job_id, status="running", worker=get_worker().address, started=time.time())

        def publish(est: Any, state: Any, history: list, converged: bool) -> None:
            _set(client, job_id, epoch=len(history), history=list(history), updated=time.time())
            if _cancel_requested(client, job_id):
                raise JobCancelledError(f"dsvm job {job_id} was cancelled after epoch "
                                        f"{len(history)}.")

        estimator.client = client
        try:
            with epoch_hook(publish):
                estimator.fit(X, y, **fit_kwargs)
            estimator.client = None
            outcome = getattr(estimator, "outcome_", None)
            failed = outcome is not None and outcome.failed
            if out and (keep_failed or not failed):
                estimator.save(out)
        except JobCancelledError:
            _set(client, job_id, status="cancelled", finished=time.time())
            raise
        except BaseException as exc:
            _set(client, job_id, status="error", error=f"{type(exc).__name__}: {exc}",
                 finished=time.time())
            raise
        finally:
            estimator.client = None
        ended: dict[str, Any] = {"status": "finished"}
        if failed and outcome is not None:
            ended = {"status": "failed", "error": f"the fit failed: {outcome.problem()}"
                     + ("; its model was saved anyway (keep_failed)" if out and keep_failed
                        else "; nothing saved")}
        _set(client, job_id, finished=time.time(), epoch=estimator.n_iter_,
             history=list(estimator.history_), out=out if keep_failed or not failed else None,
             **ended)
    return estimator


# -- on the client ---------------------------------------------------------------------------------
def _describe(X: Any) -> str:
    url = getattr(X, "url", None)
    if url is not None:
        return str(url)
    if isinstance(X, (str, os.PathLike)):
        return os.fspath(X)
    return f"{type(X).__name__} of shape {getattr(X, 'shape', '?')}"


def _absolute(X: Any) -> Any:
    """Local paths are resolved here: the worker's working directory may differ."""
    if isinstance(X, (str, os.PathLike)) and "://" not in os.fspath(X):
        return os.path.abspath(os.fspath(X))
    return X


def _check_before_submitting(est: Any, X: Any, out: str | None, validation: Any) -> None:
    """What would fail the job only on the cluster, after its fit, checked now: the
    parameters, a local input that is not there, and ``out`` (nothing there, or a model file,
    which ``save`` replaces; never anything else: a job whose ``out`` was a dataset trained
    every epoch, then lost its model)."""
    from dsvm.data.location import MODEL, check_replaceable

    est._validate()
    paths = [p for p in (X, validation) if isinstance(p, str) and "://" not in p]
    for path in paths:
        if not os.path.exists(path):
            raise FileNotFoundError(f"No dataset at {path} (seen from this process; the "
                                    "workers read the same path).")
    if out is not None:
        check_replaceable(out, MODEL, overwrite=True, inputs=paths, label=f"out={out}")


def submit(estimator: Any, X: Any, y: Any = None, *, client: Client, out: str | None = None,
           job_id: str | None = None, keep_failed: bool = False, **fit_kwargs: Any) -> Job:
    """Run ``estimator.fit(X, y, **fit_kwargs)`` as a detached job on ``client``'s cluster;
    ``keep_failed``: save the model to ``out`` even when the fit failed."""
    if not isinstance(client, Client):
        raise TypeError(f"client must be a distributed.Client; got {type(client).__name__}.")
    job_id = job_id or uuid.uuid4().hex[:12]
    if client.get_metadata([META_KEY, job_id], default=None) is not None:
        raise ValueError(f"A dsvm job with id {job_id!r} already exists on this scheduler.")
    # a fresh, unfitted copy with the same parameters; the live Client stays here (sklearn's
    # clone would deep-copy it)
    est = type(estimator)(**{**estimator.get_params(deep=False), "client": None})
    if est.checkpoint is not None:
        est.checkpoint = _absolute(est.checkpoint)
        fit_kwargs.setdefault("resume", True)  # a re-run task (lost worker) continues from it
    X = _absolute(X)
    out = None if out is None else _absolute(out)
    if "validation" in fit_kwargs:  # a path, resolved here as X is (not a pair of arrays)
        fit_kwargs["validation"] = _absolute(fit_kwargs["validation"])
    _check_before_submitting(est, X, out, fit_kwargs.get("validation"))
    record: dict[str, Any] = {
        "id": job_id, "status": "queued", "submitted": time.time(), "epoch": 0,
        "max_epochs": int(est.max_epochs), "history": [], "data": _describe(X),
        "estimator": repr(est), "cancel": False, "error": None, "out": out,
    }
    client.set_metadata([META_KEY, job_id], record)
    future = client.submit(_run_job, job_id, est, X, y, out, fit_kwargs, keep_failed,
                           key=f"{DATASET_PREFIX}{job_id}", pure=False)
    client.publish_dataset(future, name=f"{DATASET_PREFIX}{job_id}")
    return Job(job_id, client, future)


def list_jobs(client: Client) -> list[dict[str, Any]]:
    """Every dsvm job this scheduler knows of, oldest first."""
    records = client.get_metadata([META_KEY], default={}) or {}
    return sorted(records.values(), key=lambda r: r.get("submitted", 0.0))


def attach(job_id: str, client: Client) -> Job:
    """Reconnect to a detached job by id."""
    if client.get_metadata([META_KEY, job_id], default=None) is None:
        known = [r["id"] for r in list_jobs(client)]
        raise ValueError(f"No dsvm job {job_id!r} on scheduler {client.scheduler.address}; "
                         f"known jobs: {known or 'none'}.")
    future = None
    if f"{DATASET_PREFIX}{job_id}" in client.list_datasets():
        future = client.get_dataset(f"{DATASET_PREFIX}{job_id}")
    return Job(job_id, client, future)


class Job:
    """A handle on a detached fit: its progress, history, result; cancel or forget it."""

    def __init__(self, job_id: str, client: Client, future: Any = None) -> None:
        self.id = job_id
        self.client = client
        self._future = future

    def info(self) -> dict[str, Any]:
        return dict(self.client.get_metadata([META_KEY, self.id]))

    @property
    def status(self) -> str:
        return str(self.client.get_metadata([META_KEY, self.id, "status"]))

    @property
    def epoch(self) -> int:
        return int(self.client.get_metadata([META_KEY, self.id, "epoch"]))

    def history(self) -> list[dict[str, Any]]:
        return list(self.client.get_metadata([META_KEY, self.id, "history"]))

    def done(self) -> bool:
        return self.status in FINAL_STATES

    def result(self, timeout: float | None = None) -> Any:
        """The fitted estimator (waits for the job); raises the job's error if it failed."""
        if self._future is None:
            raise RuntimeError(f"dsvm job {self.id} has no result on the scheduler any more "
                               f"(status {self.status!r}).")
        # a cluster that lost its workers is an error, not a wait until the timeout (or ever)
        return wait_for_result(self.client, self._future, f"dsvm job {self.id}",
                               timeout=timeout)

    def watch(self, callback: Callable[[dict[str, Any]], None], *, poll: float = 0.5,
              timeout: float | None = None) -> dict[str, Any]:
        """Call ``callback(record)`` for every new epoch until the job ends; return its info."""
        shown = 0
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            info = self.info()
            for record in info.get("history", [])[shown:]:
                callback(record)
            shown = max(shown, len(info.get("history", [])))
            if info["status"] in FINAL_STATES:
                return info
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"dsvm job {self.id} still {info['status']} after {timeout}s.")
            time.sleep(poll)

    def cancel(self) -> None:
        """Stop the job after its current epoch and drop it from the scheduler."""
        self.client.set_metadata([META_KEY, self.id, "cancel"], True)
        if self.status not in FINAL_STATES:
            self.client.set_metadata([META_KEY, self.id, "status"], "cancelled")
        name = f"{DATASET_PREFIX}{self.id}"
        if name in self.client.list_datasets():
            self.client.unpublish_dataset(name)
        if self._future is not None:
            self._future.cancel()
            self._future = None

    def __repr__(self) -> str:
        try:
            info = self.info()
        except Exception:  # noqa: BLE001 - a repr must not raise
            return f"Job({self.id!r})"
        return (f"Job({self.id!r}, status={info['status']!r}, epoch={info['epoch']}/"
                f"{info['max_epochs']})")

    def _repr_html_(self) -> str:
        info = self.info()
        last = info["history"][-1] if info.get("history") else None
        obj = "" if last is None else f", objective {last['objective']:.6f}"
        return (f"<div><b>dsvm job</b> {html.escape(self.id)}: {html.escape(info['status'])}, "
                f"epoch {info['epoch']}/{info['max_epochs']}{obj}<br>"
                f"<small>{html.escape(info['data'])}</small></div>")
