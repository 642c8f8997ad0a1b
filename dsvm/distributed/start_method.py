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

import ast
import contextlib
import multiprocessing
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

# What a worker of a fit imports anyway: imported once by the server it is forked from; the
# first, before the others, makes the server and its workers deaf to a terminal's Ctrl-C
PRELOAD = ("dsvm.distributed.forkserver_preload", "numpy", "pandas", "dask.array",
           "distributed", "dsvm.engine.tasks", "dsvm.estimators")

_lock = threading.Lock()
_preload_set = False


@contextlib.contextmanager
def forked_workers() -> Iterator[None]:
    """Within the block, the worker processes that dask's nannies start (and restart) are
    forked from a server with :data:`PRELOAD` imported."""
    import dask

    if not _has_forkserver():
        with _main_not_rerun():
            yield
        return
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}), \
            _main_not_rerun():
        preload_dsvm()
        yield


@contextlib.contextmanager
def _main_not_rerun() -> Iterator[None]:
    """Within the block, a main script that is no file (``python - <<EOF``, ``cat x.py |
    python``: its ``__file__`` is ``<stdin>``) is not given to new worker processes to run
    again: multiprocessing made each run ``<stdin>`` from the current folder, and every
    worker failed (``FileNotFoundError: .../<stdin>``, then "Nanny failed to start") in a
    fit that never asked for a cluster. Such a script, like ``python -c``'s code, cannot be
    run again anyway."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not isinstance(path, str) or Path(path).is_file():
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


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


def check_script_guarded() -> None:
    """Refuse, with the line to move, to start dsvm's own cluster from a script's top-level
    code outside ``if __name__ == "__main__":``.

    The workers are started with ``forkserver`` (or dask's ``spawn``), and Python's
    multiprocessing runs the main script again in each new process before its work, as
    ``__mp_main__``: unguarded, a worker reaches the same call and fails to start a cluster of
    its own, and the user saw thousands of lines of ``An attempt has been made to start a new
    process before the current process has finished its bootstrapping phase`` and
    ``RuntimeError: Nanny failed to start`` instead of their fit. Code in a notebook, in
    ``python -c``, in a package's ``__main__`` module or behind the guard is not run again,
    and passes."""
    found = unguarded_call()
    if found is None or _start_method() == "fork":
        return
    from dsvm.exceptions import UnguardedScriptError

    path, line = found
    raise UnguardedScriptError(
        f"{path}, line {line}: this starts a local Dask cluster, and its worker processes run "
        f"{Path(path).name} again from the top before they start (Python's multiprocessing), "
        "so each would reach this line and fail. Put the script's work under "
        "`if __name__ == \"__main__\":` (as in the README), or pass client= a cluster you "
        "started.")


def unguarded_call() -> tuple[str, int] | None:
    """(script, line) of the main script's top-level statement running now, when it lies
    outside every ``if __name__ == "__main__":`` of the script; None when the call does not
    come from such code (see :func:`check_script_guarded`)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    spec_name = getattr(getattr(main, "__spec__", None), "name", None) or ""
    if not isinstance(path, str) or not path.endswith(".py") or spec_name.endswith("__main__"):
        return None  # (a package's __main__ is not run again: multiprocessing skips it)
    frame: FrameType | None = sys._getframe(1)
    namespace = vars(main)
    while frame is not None and not (frame.f_globals is namespace
                                     and frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    if frame is None:
        return None
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None  # (a script we cannot read is left to multiprocessing's own message)
    line = frame.f_lineno
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_main_test(node.test) \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            return None
    return path, line


def _is_main_test(test: Any) -> bool:
    """Whether an ``if`` test compares ``__name__`` with ``"__main__"``."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(n, ast.Name) and n.id == "__name__" for n in sides) and any(
                    isinstance(n, ast.Constant) and n.value == "__main__" for n in sides):
                return True
    return False


def _start_method() -> str:
    """How dsvm's own cluster starts its workers (:func:`forked_workers`)."""
    if _has_forkserver():
        return "forkserver"
    import dask

    return str(dask.config.get("distributed.worker.multiprocessing-method", "spawn"))
