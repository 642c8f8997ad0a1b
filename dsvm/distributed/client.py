"""Finding or starting the Dask cluster a fit runs on.

``client=None`` means: the active Client if there is one, else an embedded LocalCluster sized to
the machine (processes with one thread each) that is closed when the work is done. A string is a
scheduler address (``tcp://host:8786``, ``tls://...``) or a scheduler file.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from distributed import Client, LocalCluster

from dsvm.distributed.start_method import check_script_guarded, forked_workers

logger = logging.getLogger(__name__)


def default_n_workers() -> int:
    return max(1, os.cpu_count() or 1)


def active_client() -> Client | None:
    """The Client the user made current (``Client(...)`` or ``with client:``), if any."""
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        return None


DEFAULT_CONNECT_TIMEOUT = "10s"


def _looks_like_a_file(address: str) -> bool:
    return "://" not in address and (address.endswith((".json", ".yaml", ".yml"))
                                     or os.sep in address or os.path.exists(address))


def scheduler_file_address(path: str) -> str:
    """The scheduler's address in a scheduler file (JSON, as ``dask scheduler
    --scheduler-file`` writes it); a file that is not one: ClusterConnectionError naming it."""
    import json

    from dsvm.exceptions import ClusterConnectionError

    try:
        with open(path) as f:
            found = json.load(f).get("address")
    except (OSError, ValueError, AttributeError) as exc:
        raise ClusterConnectionError(
            f"{path} is not a Dask scheduler file (JSON with the scheduler's address, as "
            f"dask scheduler --scheduler-file writes it): {type(exc).__name__}: {exc}") from None
    if not isinstance(found, str) or not found:
        raise ClusterConnectionError(f"{path} is not a Dask scheduler file: it has no "
                                     "\"address\"")
    return found


def connect(address: str, *, security: Any = None, timeout: float | str | None = None) -> Client:
    """Connect to a scheduler by address, or by a scheduler file if ``address`` is a path.

    ``timeout`` defaults to the dask config ``dsvm.connect-timeout`` (10 s). Raises
    :class:`dsvm.exceptions.ClusterConnectionError` within about ``timeout`` when nothing answers,
    or when what answers is not a Dask scheduler: distributed's own timeout does not cover a port
    that accepts the connection and never completes the handshake (the dashboard's HTTP port given
    by mistake hung for minutes).
    """
    import threading

    from dask.utils import parse_timedelta

    from dsvm.exceptions import ClusterConnectionError

    if timeout is None:
        import dask.config

        timeout = dask.config.get("dsvm.connect-timeout", DEFAULT_CONNECT_TIMEOUT)
    where = ""
    if _looks_like_a_file(address):
        if not os.path.isfile(address):
            raise FileNotFoundError(f"No scheduler file at {address!r}.")
        # read here, not by distributed: a stale file (its scheduler gone, as after a crash
        # on a shared filesystem) or a broken one raised OSError or AssertionError there
        where = (f" (the address in the scheduler file {address}, which a scheduler that "
                 "stopped leaves behind)")
        address = scheduler_file_address(address)
    seconds = float(parse_timedelta(timeout, default="seconds"))
    outcome: dict[str, Any] = {}

    def attempt() -> None:
        try:
            outcome["client"] = Client(address, security=security, timeout=timeout)
        except BaseException as exc:  # noqa: BLE001 - reported below, in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=attempt, name="dsvm-connect", daemon=True)
    thread.start()
    thread.join(seconds + 2.0)
    if thread.is_alive():
        raise ClusterConnectionError(
            f"{address}{where} did not answer as a Dask scheduler within {seconds:g}s (is it "
            "the dashboard's port? a scheduler listens on 8786 by default).")
    if "error" in outcome:
        error = outcome["error"]
        raise ClusterConnectionError(f"Could not connect to a Dask scheduler at {address}"
                                     f"{where}: {type(error).__name__}: {error}") from None
    return outcome["client"]


@contextlib.contextmanager
def cluster_client(
    client: Client | str | None = None,
    *,
    n_workers: int | None = None,
    memory_limit: str | float | None = "auto",
    security: Any = None,
) -> Iterator[Client]:
    """Yield the Client to use; close whatever this function itself started."""
    if isinstance(client, Client):
        if client.status in ("closing", "closed"):  # (a notebook's cell re-run after close())
            from dsvm.exceptions import ClusterConnectionError

            raise ClusterConnectionError(
                f"The Client given (client=) is {client.status}: create a new one, e.g. "
                "Client(cluster) or Client('tcp://scheduler:8786'), and pass it.")
        _maybe_tune_malloc(client)
        # current for the fit: its own computes (row counts, a merge held for the fit) find
        # it as the active client; a Client made with set_as_default=False was not found,
        # and they ran in this process, the rows passing through it
        with client.as_current():
            yield client
        return
    if isinstance(client, str):
        c = connect(client, security=security)
        try:
            _maybe_tune_malloc(c)
            yield c
        finally:
            c.close()
            forget_closed_scheduler()
        return
    if client is not None:
        raise TypeError(
            "client must be a distributed.Client, a scheduler address string or None; "
            f"got {type(client).__name__}."
        )
    current = active_client()
    if current is not None:
        _maybe_tune_malloc(current)
        yield current
        return
    check_script_guarded()  # (before any process starts: the workers would run the script)
    n = n_workers or default_n_workers()
    logger.info("starting a LocalCluster with %d worker processes", n)
    try:
        with contextlib.ExitStack() as started:
            with interrupts_after():  # (a cluster half started is not closed: see there)
                started.enter_context(forked_workers())
                cluster = started.enter_context(LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    # no dashboard, yet the scheduler's HTTP server (health, metrics) still
                    # listens: on 8787 by default, with a three-line warning when that is
                    # taken; any free port
                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                    # the workers' and nannies' log lines at the level the caller gave
                    # distributed (dsvm's command line: errors only unless --verbose), never
                    # below LocalCluster's
                    silence_logs=max(logging.WARNING,
                                     logging.getLogger("distributed").getEffectiveLevel()),
                    memory_limit=memory_limit,
                ))
                c = started.enter_context(Client(cluster))
                _quiet_own_cluster(c, started)
            yield c
    finally:
        forget_closed_scheduler()


def _quiet_own_cluster(c: Client, started: contextlib.ExitStack) -> None:
    from dsvm.distributed.malloc import TuneMalloc
    from dsvm.distributed.quiet import QuietWorkers, quiet_scheduler, wanted

    c.register_plugin(TuneMalloc())  # dsvm's own workers: chunk-sized buffers are reused
    if wanted():
        c.register_plugin(QuietWorkers())  # (what the fit says itself, not a traceback too)
        started.enter_context(quiet_scheduler())


@contextlib.contextmanager
def interrupts_after() -> Iterator[None]:
    """A Ctrl-C (SIGINT) that comes within the block interrupts when the block ends, not
    inside it. A LocalCluster interrupted while it started its workers was left half made,
    outside any ``with``: distributed's exit handler then failed to close it and printed
    ``AssertionError: Status.init`` with its traceback after ``dsvm train: interrupted``.
    Started, the cluster is closed by the ``with`` it is in. (Only the main thread receives
    signals; elsewhere, and where SIGINT is ignored or handled by the user, nothing is
    deferred.)"""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    caught: list[Any] = []
    signal.signal(signal.SIGINT, lambda *received: caught.append(received))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if caught:
        raise KeyboardInterrupt


def forget_closed_scheduler() -> None:
    """Leave dask's default scheduler as it was once the last Client is gone.

    A Client sets dask's config ``scheduler: dask.distributed`` while it lives and puts back
    what it found when it closes; two Clients closed out of order (two fits on two threads of
    one process, each connecting to its address) leave the config naming a distributed
    scheduler with no Client left, and every later ``dask.compute()`` in the process fails
    ("Requested dask.distributed scheduler but no Client active"). A distributed scheduler
    without a Client never works, so the name is dropped."""
    import dask

    if dask.config.get("scheduler", None) in ("dask.distributed", "distributed") \
            and active_client() is None:
        dask.config.set(scheduler=None)


def _maybe_tune_malloc(client: Client) -> None:
    """Register the malloc plugin on a user's cluster only when asked (``dsvm.tune-malloc``)."""
    from dsvm.distributed.malloc import TuneMalloc, wanted_on

    if wanted_on(client):
        client.register_plugin(TuneMalloc())


def n_workers_of(client: Client) -> int:
    """Workers connected now (waiting up to ``dsvm.no-workers-timeout`` for at least one)."""
    from dsvm.distributed.watch import no_workers_timeout
    from dsvm.exceptions import WorkerLostError

    timeout = no_workers_timeout()
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise WorkerLostError(
            f"No Dask workers on scheduler {client.scheduler.address} for {timeout:g}s. Start "
            f"workers, or raise dsvm.no-workers-timeout."
        ) from None
    return len(client.scheduler_info(n_workers=-1)["workers"])


def tls_security(ca_file: str | None, cert: str | None, key: str | None) -> Any:
    """A dask ``Security`` for a client of a TLS scheduler (``tls://``), from PEM files."""
    from distributed.security import Security

    for name, value in (("--tls-ca-file", ca_file), ("--tls-cert", cert)):
        if not value:
            raise ValueError(f"TLS needs {name} (with --tls-ca-file, --tls-cert and --tls-key).")
        if not os.path.isfile(value):
            raise FileNotFoundError(f"{name}: no file at {value!r}.")
    if key and not os.path.isfile(key):
        raise FileNotFoundError(f"--tls-key: no file at {key!r}.")
    return Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key,
                    require_encryption=True)


def quiet_logs(level: int) -> None:
    """Dask's own log lines and warnings only at ``level`` INFO or below (``dsvm --verbose``).

    distributed logs every client and worker coming and going at INFO, a nanny that kills its
    worker at shutdown at WARNING, and warns about task graphs over 10 MB: nothing a user of
    the command can act on. Above INFO its loggers show errors only and warnings raised in
    its modules are dropped (the caller scopes this with ``warnings.catch_warnings()``). An
    embedded LocalCluster takes the same level (:func:`cluster_client`). distributed sets its
    loggers' levels when it is imported, which it is by now.
    """
    import warnings

    quiet = level > logging.INFO
    # distributed's config gives some of its loggers their own level (distributed.client,
    # distributed.gc: WARNING), which a level set on "distributed" alone would not reach
    names = [name for name, known in list(logging.root.manager.loggerDict.items())
             if name.startswith(("distributed.", "dask.")) and isinstance(known, logging.Logger)
             and known.level != logging.NOTSET]
    for name in ("distributed", "dask", *names):
        logging.getLogger(name).setLevel(max(level, logging.ERROR) if quiet else level)
    if quiet:
        warnings.filterwarnings("ignore", module=r"(distributed|dask)(\.|$)")


def compute_watched(*collections: Any, what: str) -> tuple[Any, ...]:
    """``dask.compute(*collections)``, on the active Client's cluster through
    :func:`wait_for_result` (a clear error instead of a hang when its workers or scheduler are
    lost), else on dask's own scheduler in this process."""
    from dsvm.distributed.watch import wait_for_result

    client = active_client()
    if client is None:
        import dask

        return tuple(dask.compute(*collections))
    futures = client.compute(list(collections))
    return tuple(wait_for_result(client, f, what) for f in futures)
