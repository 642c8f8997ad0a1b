"""Shared fixtures: where the real datasets are, small problems, and real clusters.

Real datasets come from ../shared/data beside the repository (or $DSVM_SHARED_DATA); tests that
need them skip with the reason when it is absent. Clusters are real: a LocalCluster of worker
processes, or a scheduler and workers started as separate ``dask`` processes on loopback.
"""

from __future__ import annotations

import lzma
import os
import shutil
import socket
import subprocess
import sys
import time
from functools import cache
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]

# Idle Dask processes, quieter. A cluster's processes cost CPU while they wait: an idle
# LocalCluster of 2 workers took 3.9 CPU-s per 30 s (workers 1.2 each, scheduler and client
# 1.6), mostly the workers' statistical profiler (a stack sample every 10 ms, for the
# dashboard) and the event loops' 20 ms health tick; with these 0.9. The suite keeps about
# four clusters up on its 2 cores (a process cluster and a LocalCluster per xdist worker), so
# that was a tenth of the machine. None of it is dsvm's behaviour: the profiler feeds only the
# dashboard, the tick only detects a blocked event loop (still, at 500 ms), the system monitor
# only the dashboard's plots. Set in the environment too, for the clusters, CLI runs and
# notebook kernels the tests start as processes.
QUIET_DASK = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "500ms",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "2s",
}
for _name, _value in QUIET_DASK.items():
    os.environ.setdefault(_name, _value)
if "dask" in sys.modules:  # (imported by a plugin before this file: read the environment again)
    import dask.config

    dask.config.refresh()


# The files that take longest on a fresh clone, slowest first (seconds summed over their tests,
# from `pytest --durations=0` on the 2-core VM; the order matters, not the numbers). pytest-xdist
# hands whole files (--dist loadfile) to its two processes in collection order
# (--no-loadscope-reorder; by default it would sort files by their number of tests, which sent
# the few long tests of the cluster and README files last, where one process ran them alone for
# minutes while the other sat idle): starting with the longest files lets the short ones fill
# in at the end (longest-processing-time-first). A file not listed here runs after these, in
# collection order. Re-measure and update the list when a file's time changes much.
SLOWEST_FILES_FIRST = (  # seconds in a fresh-clone run of 2026-11-27 (463 s in all)
    "kernels/test_asset_prox_kernels.py",  # 113 s: numba compiles its specialisations
    "distributed/test_failures.py",  # 109 s: clusters started and killed
    "distributed/test_processes.py",  # 60 s: a9a/w8a through the CLI on a process cluster
    # the files that compile the pass kernels early, on one process: listed by time alone,
    # the notebooks came next and their cluster's workers compiled them instead (54 -> 104 s,
    # the kernel tests 37 -> 8 s, the suite 463 -> 507 s)
    "kernels/test_kernel_passes.py",  # 37 s: compilation
    "test_sklearn_checks.py",  # 34 s
    "test_notebooks.py",  # 54 s
    "distributed/test_jobs.py",  # 41 s
    "test_readme.py",  # 39 s: one test, the README's Guide from a shell
    "test_cli_first_contact.py",  # 38 s
    "distributed/test_memory.py",  # 27 s
    "distributed/test_tls.py",
    "test_order.py",
    "distributed/test_cocoa.py",
    "test_cli.py",
    "distributed/test_dataframes.py",
    "test_fixed_failures.py",
    "distributed/test_write_predictions.py",
    "distributed/test_memory_limit.py",
    "data/test_convert.py",
    "test_cluster_recipes.py",
    "test_saved_models.py",
    "test_class_weight_proba_early_stopping.py",
    "distributed/test_unknown_chunks.py",
)


def pytest_collection_modifyitems(config, items) -> None:
    """Run the files of :data:`SLOWEST_FILES_FIRST` first, in its order (a stable sort: the
    tests of a file keep their order and stay together)."""
    rank = {f"tests/{path}": i for i, path in enumerate(SLOWEST_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def shared_data_dir() -> Path:
    env = os.environ.get("DSVM_SHARED_DATA")
    return Path(env) if env else (REPO.parent / "shared" / "data")


def shared_file(rel: str) -> Path:
    path = shared_data_dir() / rel
    if not path.exists():
        pytest.skip(f"real dataset {rel} not found under {shared_data_dir()} "
                    "(set DSVM_SHARED_DATA)")
    return path


@cache
def _load_svmlight(path: str, n_features: int):
    from sklearn.datasets import load_svmlight_file

    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rb") as f:
        X, y = load_svmlight_file(f, n_features=n_features)
    X = X.tocsr()
    # LIBLINEAR (LinearSVC) accepts only 32-bit sparse indices
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X, y


def load_libsvm(rel: str, n_features: int):
    """(X csr float64, y) of a LIBSVM file in the shared data folder (cached per session)."""
    return _load_svmlight(str(shared_file(rel)), n_features)


def liblinear_objective(X, y, alpha: float) -> float:
    """LIBLINEAR's optimum of alpha/2 ||w||^2 + mean hinge (no intercept), via LinearSVC."""
    from sklearn.svm import LinearSVC

    n = X.shape[0]
    svc = LinearSVC(loss="hinge", C=1.0 / (alpha * n), fit_intercept=False, dual=True,
                    tol=1e-6, max_iter=200_000).fit(X, y)
    w = svc.coef_.ravel()
    margins = y * (X @ w)
    return float(0.5 * alpha * w @ w + np.maximum(0.0, 1.0 - margins).mean())


@pytest.fixture
def blobs():
    """A small separable-ish binary problem (dense float64), labels in {-1, 1}."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 8))
    w = rng.normal(size=8)
    y = np.where(X @ w + 0.3 * rng.normal(size=600) > 0, 1, -1)
    return X, y


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask_cmd() -> list[str]:
    exe = shutil.which("dask")
    return [exe] if exe else [sys.executable, "-m", "dask"]


class ProcessCluster:
    """A scheduler and workers started as separate OS processes on loopback.

    The workers run without a nanny: ``procs[i]`` is the worker itself, so a test's SIGKILL
    is a worker lost as with its machine (with a nanny it killed the nanny, whose worker went
    with it). A nanny and its worker are two processes importing distributed: without it a
    cluster's start costs 4.7 CPU-s instead of 6.3-7.1 (scheduler, 2 workers, dsvm's tasks
    imported), and the suite starts about a dozen."""

    def __init__(self, n_workers: int = 2, memory_limit: str = "1GiB", nthreads: int = 1) -> None:
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.procs.append(subprocess.Popen(
            _dask_cmd() + ["scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                           "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        for _ in range(n_workers):
            self.add_worker(memory_limit=memory_limit, nthreads=nthreads, env=env)
        self.wait_for(n_workers)

    def add_worker(self, memory_limit: str = "1GiB", nthreads: int = 1,
                   env=None) -> subprocess.Popen:
        env = env or dict(os.environ, PYTHONPATH=str(REPO))
        p = subprocess.Popen(
            _dask_cmd() + ["worker", self.address, "--nthreads", str(nthreads), "--nworkers", "1",
                           "--memory-limit", memory_limit, "--no-dashboard",
                           "--host", "127.0.0.1", "--no-nanny"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        self.procs.append(p)
        return p

    def wait_for(self, n_workers: int, timeout: float = 60) -> None:
        from distributed import Client

        deadline = time.time() + timeout
        while True:
            try:
                with Client(self.address, timeout=5) as c:
                    c.wait_for_workers(n_workers, timeout=max(1, deadline - time.time()))
                    return
            except (OSError, TimeoutError):
                if time.time() > deadline:
                    raise

    def close(self) -> None:
        stop_cluster_processes(self.procs)


def stop_cluster_processes(procs: list[subprocess.Popen]) -> None:
    """Stop a scheduler (``procs[0]``) and its workers: the workers first, then the scheduler.
    A worker told to stop while its scheduler goes too spends ~8 s trying to reach it (0.5 s
    this way)."""
    for group in (procs[1:], procs[:1]):
        for p in group:
            p.terminate()
        for p in group:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture(scope="session")
def process_cluster():
    """Scheduler + 2 workers (1 thread, 1 GiB each) as separate processes, for the session."""
    cluster = ProcessCluster(n_workers=2)
    yield cluster
    cluster.close()


@pytest.fixture(scope="session")
def _session_client():
    """The LocalCluster behind ``local_client``, started once per session (each xdist worker
    has its own): starting one costs two worker processes and their imports and kernel loads,
    which 15 files paid each (356 CPU-s for those files, 241 with one cluster). Not the
    default client: a test that did not ask for the cluster trains as if it did not exist."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit="2GiB") as cluster:
        with Client(cluster, set_as_default=False) as client:
            yield client


@pytest.fixture
def local_client(_session_client):
    """A LocalCluster of 2 worker processes (1 thread each) and a Client on it, the current
    client while the test runs. The cluster is shared by the session: a test that changes it
    undoes it (scheduler plugins: tests/distributed/test_data_stays_on_workers.py
    ``result_sizes``; patched worker functions: test_state_shipping.py); one that breaks or
    restarts workers starts a cluster of its own."""
    with _session_client.as_current():
        yield _session_client
