"""Waiting for a fit's results without hanging when the cluster goes away.

A Dask future whose workers have all died simply waits (its tasks stay in the scheduler's
``no-worker`` state until a worker joins), and a client whose scheduler died may retry its
connection for a long while. Waiting on an epoch therefore polls: the result, the client's
connection, and the number of workers. A lost worker is not an error (its tasks re-run on the
others, with the same result); *no* worker for longer than the timeout, or no scheduler, is.

The timeout is dask configuration, so it can be set per fit, per process or per cluster:
``dask.config.set({"dsvm.no-workers-timeout": "30s"})`` or the environment variable
``DASK_DSVM__NO_WORKERS_TIMEOUT=30s``. Default: 60 s.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError
from typing import Any

DEFAULT_NO_WORKERS_TIMEOUT = "60s"
_POLL_SECONDS = 0.5

_RESUME_HINT = ("If the fit had a checkpoint, continue it with fit(..., resume=True) or "
                "`dsvm train --resume`.")


def no_workers_timeout() -> float:
    import dask.config
    from dask.utils import parse_timedelta

    value = dask.config.get("dsvm.no-workers-timeout", DEFAULT_NO_WORKERS_TIMEOUT)
    seconds = parse_timedelta(value, default="seconds")
    if seconds is None or seconds <= 0:
        raise ValueError(f"dsvm.no-workers-timeout must be a positive duration; got {value!r}.")
    return float(seconds)


def _scheduler_lost(client: Any, what: str, cause: BaseException | None = None) -> Exception:
    from dsvm.exceptions import SchedulerLostError

    address = getattr(getattr(client, "scheduler", None), "address", "?")
    detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
    return SchedulerLostError(
        f"Lost the connection to the Dask scheduler at {address} during {what}{detail}. "
        + _RESUME_HINT
    )


def _n_workers(client: Any, what: str) -> int:
    return len(workers_of(client, what))


def workers_of(client: Any, what: str) -> dict[str, int]:
    """The cluster's workers and their threads; a scheduler that is gone: SchedulerLostError
    naming ``what`` (distributed's CommClosedError escaped from a fit's closing evaluation,
    whose scheduler was killed after its last epoch)."""
    try:
        return dict(client.nthreads())
    except (OSError, CancelledError) as exc:
        raise _scheduler_lost(client, what, exc) from None


def wait_for_result(client: Any, future: Any, what: str, *,
                    timeout: float | None = None) -> Any:
    """``future.result()``, but a clear error instead of a hang when the cluster is gone;
    ``timeout``: seconds to wait at most (``TimeoutError`` after them), as
    ``future.result(timeout=...)`` gives (default: as long as the cluster can finish it)."""
    from distributed import TimeoutError as DaskTimeout

    from dsvm.exceptions import WorkerLostError

    limit = timeout
    deadline = None if limit is None else time.monotonic() + limit
    timeout = no_workers_timeout()
    no_workers_since: float | None = None
    lost_since: float | None = None
    # Wait on a done-callback, not on future.result(timeout=...): distributed's sync() leaves
    # its result unbound when the wait_for inside it is cancelled at the moment it times out
    # (seen on a loaded machine: UnboundLocalError out of a detached job's reduction).
    finished = threading.Event()
    future.add_done_callback(lambda _: finished.set())
    while True:
        try:
            if finished.wait(_POLL_SECONDS):
                return future.result()
        except (DaskTimeout, TimeoutError):
            pass
        except CancelledError as exc:
            if client.status != "running":
                raise _scheduler_lost(client, what, exc) from None
            raise
        now = time.monotonic()
        if deadline is not None and now > deadline:
            raise TimeoutError(f"{what} did not finish within {limit:g}s.")
        if client.status != "running":  # reconnecting, or closed
            lost_since = lost_since or now
            if client.status in ("closed", "closing") or now - lost_since > timeout:
                raise _scheduler_lost(client, what)
            continue
        lost_since = None
        if _n_workers(client, what) == 0:
            no_workers_since = no_workers_since or now
            if now - no_workers_since > timeout:
                raise WorkerLostError(
                    f"No Dask workers for {timeout:g}s during {what} (scheduler "
                    f"{client.scheduler.address}): all workers were lost and none joined. "
                    f"Start workers, or raise dsvm.no-workers-timeout. " + _RESUME_HINT
                )
        else:
            no_workers_since = None

