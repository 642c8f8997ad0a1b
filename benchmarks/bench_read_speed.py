"""A cluster epoch against reading the same chunks (#28 item 3), per codec, side by side.

On a LocalCluster of 2 worker processes x 1 thread (the allocator tuned as on dsvm's own
clusters, ``TuneMalloc``), for a dense set (N x 100 float32 standard normals, 65,536-row
chunks) and a sparse one (1,000,000 x 2^20 CSR, 40 signed-one values per row, 50,000-row
chunks), each written with every codec dsvm writes (``none``, ``blosc-lz4``, ``zstd``):

* **epoch**: ``SVMClassifier(solver=...)`` fitted from the zarr store, epochs after the first
  (the first loads the workers' kernels); the epoch's seconds as the fit's history counts them
  (from one epoch's summary reaching the client to the next's), and from dask's task stream
  the longest stream task's compute time (*stream task*): the rest of the epoch is the
  per-epoch overhead (state to the other worker, combine, finalize, summary);
* **read-only**: the same workers reading and decoding the same chunks as those epochs'
  streams (the same chunks per worker, in the same windows, with the same read-ahead:
  :func:`dsvm.engine.tasks.iter_chunks` with ``ahead`` = the fit's shuffle window, the
  stream pinned to the worker the fit deals it to), and nothing else; wall time from submit to
  gather;
* **pass-only**: the same stream task (:class:`dsvm.engine.tasks.StreamPass`, same solver,
  window and chunks) on each worker over those chunks already in its memory (read beforehand,
  untimed): the pass without reading; the longer stream counts.

All cases are interleaved within each round (page cache warm) and the least time of each
over the rounds is kept. With one core per worker, an epoch costs at least read + pass (the
read-ahead thread and the pass share the core); with a spare core per worker the read-ahead
thread hides the shorter of the two and an epoch costs max(read, pass). The target: epoch at
most 1.1x the read-only time.

The dask-ml ``Incremental(SGDClassifier(loss='hinge'))`` comparison runs on the dense
uncompressed set (one fit, its wall time over its one pass), beside the bound that reading
sets on 2 workers (the read-only epoch).

    python -m benchmarks.bench_read_speed [--dense-rows 3000000] [--rounds 3] [--quick]
        [--solvers sgd pegasos] [--parts epoch model] [--no-write] [--skip-dask-ml]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import WORK, write_section

CODECS = ("none", "blosc-lz4", "zstd")
DENSE_CHUNK_ROWS = 65_536
SPARSE_CHUNK_ROWS = 50_000
SPARSE_NNZ = 40
TARGET = 1.1


# -- data ------------------------------------------------------------------------------------
def dense_set(path: Path, n: int, codec: str) -> Any:
    import dsvm

    return dsvm.write_synthetic(path, n, 100, seed=0, chunk_rows=DENSE_CHUNK_ROWS, codec=codec)


def sparse_set(path: Path, n: int, codec: str, d: int = 2 ** 20) -> Any:
    """``n`` rows of ``SPARSE_NNZ`` signed ones at uniform random columns out of ``d`` (hashed
    features), labelled by a random hyperplane."""
    import scipy.sparse as sp

    import dsvm

    rng = np.random.default_rng(0)
    indices = np.sort(rng.integers(0, d, size=(n, SPARSE_NNZ), dtype=np.int32), axis=1)
    data = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=n * SPARSE_NNZ)
    X = sp.csr_matrix((data, indices.ravel(), np.arange(0, n * SPARSE_NNZ + 1, SPARSE_NNZ)),
                      shape=(n, d))
    X.sum_duplicates()
    y = np.where(X @ rng.standard_normal(d) > 0, 1.0, -1.0)
    return dsvm.write_arrays(path, X, y, layout="sparse", chunk_rows=SPARSE_CHUNK_ROWS,
                             codec=codec)


# -- what runs on the workers ----------------------------------------------------------------
def process_cpu() -> float:
    """CPU seconds of this process, all its threads (read-ahead, zarr's) together."""
    return time.process_time()


def workers_cpu(client: Any) -> float:
    """CPU seconds of all the workers' processes so far."""
    return float(sum(client.run(process_cpu).values()))


def read_stream(source: Any, chunk_ids: list[int], window: int) -> tuple[int, float]:
    """Read a stream's chunks exactly as its training task does (same windows, same
    read-ahead), and do nothing else: (rows, seconds)."""
    from dsvm.engine.tasks import iter_chunks

    tic = time.perf_counter()
    rows = sum(block.n_samples for _, block in iter_chunks(source, chunk_ids, ahead=window))
    return rows, time.perf_counter() - tic


class _HeldWindows:
    """A source over chunks already read into this worker's memory, window by window as
    the stream's read-ahead reads them (``read_chunks``: views of one buffer), so that the
    pass sees the very blocks it sees from zarr."""

    def __init__(self, source: Any, chunk_ids: list[int], window: int) -> None:
        self.n_features = source.n_features
        self.windows: dict[tuple[int, ...], list[Any]] = {}
        for k in range(0, len(chunk_ids), window):
            ids = tuple(chunk_ids[k:k + window])
            self.windows[ids] = list(source.read_chunks(list(ids)))
        self.chunks = {i: b for ids, blocks in self.windows.items() for i, b in zip(ids, blocks)}

    def read_chunk(self, i: int) -> Any:
        return self.chunks[i]

    def read_chunks(self, ids: list[int]) -> list[Any]:
        return self.windows[tuple(ids)]

    def describe(self) -> str:
        return "held in memory"


@dataclass(frozen=True)
class PassOnly:
    """The stream task of an epoch over chunks held in memory: seconds of the pass alone."""

    task: Any  # a StreamPass
    start: Any  # its EpochStart

    def __call__(self, source: Any, chunk_ids: list[int]) -> tuple[float, float]:
        """(wall seconds, CPU seconds of this process) of the pass alone."""
        held = _HeldWindows(source, chunk_ids, self.task.window)
        tic, cpu = time.perf_counter(), process_cpu()
        self.task(held, chunk_ids, self.start)
        return time.perf_counter() - tic, process_cpu() - cpu


# -- one case --------------------------------------------------------------------------------
@dataclass
class Case:
    label: str
    codec: str
    solver: str
    ds: Any
    epochs: list[float]
    pass_tasks: list[float]
    reads: list[float]
    passes: list[float]
    # CPU seconds of both workers per epoch: robust to the other load of a shared machine
    phases: list[dict[str, float]] = field(default_factory=list)  # (bench_overhead's)
    epoch_cpu: list[float] = field(default_factory=list)
    read_cpu: list[float] = field(default_factory=list)
    pass_cpu: list[float] = field(default_factory=list)


def fit_epochs(client: Any, case: Case, n_epochs: int
               ) -> tuple[Any, list[dict[str, float]], list[float]]:
    """Fit from zarr: the phases of the epochs after the first (bench_overhead's), and the
    workers' CPU seconds in each of those epochs (sampled as each epoch's summary reaches
    the client; the next epoch is already running then)."""
    import dsvm
    from benchmarks.bench_overhead import epoch_phases
    from dsvm.training import loop

    holder: dict[str, Any] = {}
    samples: list[float] = []
    record = loop.epoch_record

    def recorded(*args: Any, **kwargs: Any) -> Any:
        samples.append(workers_cpu(client))
        return record(*args, **kwargs)

    def fit() -> None:
        holder["clf"] = dsvm.SVMClassifier(solver=case.solver, alpha=1e-6, max_epochs=n_epochs,
                                           tol=None, random_state=0, client=client).fit(case.ds)
    loop.epoch_record = recorded  # type: ignore[assignment]
    try:
        phases = epoch_phases(client, fit)
    finally:
        loop.epoch_record = record  # type: ignore[assignment]
    return holder["clf"], phases[1:], list(np.diff(samples))


def streams_of(clf: Any, ds: Any, epoch: int) -> list[list[int]]:
    """The chunks of each stream in epoch ``epoch`` of ``clf``'s fit (training.loop)."""
    from dsvm.data.order import deal_chunks, epoch_chunk_order

    order = epoch_chunk_order(clf.seed_, epoch, ds.n_chunks)
    return deal_chunks(order, clf.n_streams_)


def window_of_fit(client: Any, ds: Any, clf: Any) -> int:
    """The window the fit's epochs used: the default, capped by the workers' memory limit
    beside the fit's state (:func:`dsvm.training.memory.memory_window`), so that the
    read-only and pass-only epochs hold what the fit held."""
    from dsvm.data.sources import DatasetSource
    from dsvm.distributed.engine import DaskEngine
    from dsvm.training.memory import memory_window

    return memory_window(None, DatasetSource(ds), DaskEngine(client),
                         state_bytes=clf.state_.nbytes, n_streams=clf.n_streams_).chunks


def read_epoch(client: Any, ds: Any, streams: list[list[int]], window: int
               ) -> tuple[float, float]:
    """(wall seconds, workers' CPU seconds) of an epoch that only reads."""
    from dsvm.data.sources import DatasetSource

    workers = sorted(client.nthreads())
    source = DatasetSource(ds)
    cpu = workers_cpu(client)
    tic = time.perf_counter()
    futs = [client.submit(read_stream, source, ids, window, workers=[workers[i % len(workers)]],
                          pure=False) for i, ids in enumerate(streams)]
    rows = sum(r for r, _ in client.gather(futs))
    assert rows == ds.n_samples, (rows, ds.n_samples)
    wall = time.perf_counter() - tic
    return wall, workers_cpu(client) - cpu


def pass_epoch(client: Any, case: Case, clf: Any, streams: list[list[int]], window: int,
               epoch: int) -> tuple[float, float]:
    """The longest stream's pass over its chunks held in memory, started from the fitted
    state (the pass's cost does not depend on where it starts)."""
    from dsvm.combine import combiner_for
    from dsvm.data.sources import DatasetSource
    from dsvm.engine.tasks import EpochStart, StreamPass
    from dsvm.solvers.registry import make_solver

    solver = make_solver(case.solver, alpha=1e-6)
    state = clf.state_
    task = StreamPass(solver, combiner_for(solver), clf.classes_, epoch, clf.seed_,
                      window=window)
    start = EpochStart(state, None, "iterate")
    workers = sorted(client.nthreads())
    source = DatasetSource(case.ds)
    futs = [client.submit(PassOnly(task, start), source, ids, workers=[workers[i % len(workers)]],
                          pure=False) for i, ids in enumerate(streams)]
    out = client.gather(futs)
    return max(w for w, _ in out), sum(c for _, c in out)


def run_case(client: Any, case: Case, n_epochs: int) -> None:
    """One round of a case: a fit of ``n_epochs``, then the read-only and pass-only epochs
    of the same streams as its epochs after the first."""
    clf, phases, cpus = fit_epochs(client, case, n_epochs)
    case.epoch_cpu += cpus
    window = window_of_fit(client, case.ds, clf)
    case.epochs += [p["epoch"] for p in phases]
    case.pass_tasks += [p["pass"] for p in phases]
    case.phases += phases
    for epoch in range(1, n_epochs):
        streams = streams_of(clf, case.ds, epoch)
        wall, cpu = read_epoch(client, case.ds, streams, window)
        case.reads.append(wall)
        case.read_cpu.append(cpu)
        wall, cpu = pass_epoch(client, case, clf, streams, window, epoch)
        case.passes.append(wall)
        case.pass_cpu.append(cpu)
    print(f"{case.label} {case.codec} {case.solver}: epoch {min(case.epochs):.3f} s "
          f"(stream task {min(case.pass_tasks):.3f}), read-only {min(case.reads):.3f} s, "
          f"pass-only {min(case.passes):.3f} s, window {window}; CPU s: epoch "
          f"{min(case.epoch_cpu):.3f}, read {min(case.read_cpu):.3f}, "
          f"pass {min(case.pass_cpu):.3f}; phases of the last: "
          + ", ".join(f"{k} {v:.3f}" for k, v in case.phases[-1].items()), flush=True)


def dask_ml_epoch(client: Any, ds: Any) -> tuple[float | None, str]:
    """Seconds of dask-ml Incremental(SGDClassifier(loss='hinge')) over ``ds`` (one pass over
    its blocks), or None with the reason it did not run."""
    try:
        from dask_ml.wrappers import Incremental
        from sklearn.linear_model import SGDClassifier
    except ImportError as exc:
        return None, f"dask-ml not importable: {exc}"
    Xd, yd = ds.to_dask()
    inc = Incremental(SGDClassifier(loss="hinge", alpha=1e-6, tol=None, random_state=0),
                      scoring=None, shuffle_blocks=True, random_state=0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tic = time.perf_counter()
            inc.fit(Xd, yd, classes=[-1.0, 1.0])
            return time.perf_counter() - tic, "ran"
    except Exception as exc:  # noqa: BLE001 - reported, not raised: a peer's failure
        return None, f"{type(exc).__name__}: {exc}"


# -- report ----------------------------------------------------------------------------------
def table(cases: list[Case]) -> tuple[list[str], list[str]]:
    rows, verdicts = [], []
    for c in cases:
        epoch, task, read, pas = (min(c.epochs), min(c.pass_tasks), min(c.reads),
                                  min(c.passes))
        e_cpu, r_cpu, p_cpu = min(c.epoch_cpu), min(c.read_cpu), min(c.pass_cpu)
        ratio = epoch / read
        rows.append(f"| {c.label} | {c.codec} | {c.solver} | {read:.3f} | {pas:.3f} | "
                    f"{epoch:.3f} | **{ratio:.2f}** | {task:.3f} | {epoch - task:.3f} | "
                    f"{read + pas:.3f} | {max(read, pas):.3f} | {r_cpu:.2f} | {p_cpu:.2f} | "
                    f"{e_cpu:.2f} | **{e_cpu / r_cpu:.2f}** | {e_cpu / (r_cpu + p_cpu):.2f} |")
        verdicts.append(f"{c.label}, {c.codec}, {c.solver}: epoch / read-only = {ratio:.2f} "
                        f"wall, {e_cpu / r_cpu:.2f} in CPU seconds "
                        f"({'met' if ratio <= TARGET else 'NOT met'}: target <= {TARGET}); "
                        f"pass-only / read-only = {pas / read:.2f}")
    return rows, verdicts


def render(cases: list[Case], rounds: int, n_epochs: int, inc: tuple[float | None, str],
           dense_none: Case | None) -> str:
    rows, verdicts = table(cases)
    intro = __doc__.split("\n\n")
    lines = [" ".join(intro[0].split()), "", "\n\n".join(intro[1:-1]), "",
             f"Wall seconds, least over {rounds} rounds x {n_epochs - 1} epochs; *stream "
             "task* = the longest stream task's compute inside the epoch; *overhead* = epoch - "
             "stream task; *no overlap* = read-only + pass-only; *full overlap* = max of the "
             "two. CPU seconds: both workers' processes (all threads) per epoch, least over "
             "the rounds (the epoch's: between two epochs' summaries reaching the client, "
             "the combine, finalize and summary included).",
             "",
             "| data | codec | solver | read-only s | pass-only s | epoch s | epoch / read-only "
             "| stream task s | overhead s | no overlap s | full overlap s | read CPU s | pass "
             "CPU s | epoch CPU s | epoch / read CPU | epoch / (read + pass) CPU |",
             "|" + "---|" * 16, *rows, "", *[f"- {v}" for v in verdicts]]
    if dense_none is not None:
        seconds, why = inc
        read = min(dense_none.reads)
        epoch = min(dense_none.epochs)
        if seconds is None:
            lines += ["", f"- dask-ml Incremental: did not run ({why})."]
        else:
            lines += ["", f"- dask-ml Incremental(SGDClassifier(loss='hinge')) on "
                      f"{dense_none.label}, none: {seconds:.2f} s for its pass; dsvm's epoch "
                      f"{epoch:.3f} s = **{seconds / epoch:.1f}x** faster; the bound that "
                      f"reading sets on these 2 workers (read-only {read:.3f} s) is "
                      f"{seconds / read:.1f}x."]
    return "\n".join(lines)


# -- the model's broadcast and combine at 2^22, and at 64 streams (#28 item 3) ---------------
def worker_addresses(client: Any) -> set[str]:
    return set(client.scheduler_info(n_workers=-1)["workers"])


def large_model_case(ds: Any, memory_limit: str) -> dict[str, Any]:
    """A 3-epoch ``sgd`` fit over ``ds`` on 2 workers with ``memory_limit``:
    the phases of its epochs after the first (the state's transfers to the other worker and
    back, the combine and finalize at the root), the workers' peak RSS, and whether a worker
    was restarted (killed by its nanny) or the fit failed."""
    from distributed import Client, LocalCluster

    import dsvm
    from benchmarks._common import worker_peak_rss
    from benchmarks.bench_overhead import epoch_phases
    from dsvm.solvers.registry import make_solver

    d = ds.n_features
    nbytes = make_solver("sgd", alpha=1e-6).init_state(d, 1, np.float32).nbytes
    out: dict[str, Any] = {"d": d, "limit": memory_limit, "state": nbytes, "error": None}
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                      memory_limit=memory_limit) as cluster, Client(cluster) as client:
        before = worker_addresses(client)
        try:
            out["phases"] = epoch_phases(client, lambda: dsvm.SVMClassifier(
                client=client, solver="sgd", alpha=1e-6, max_epochs=3, tol=None, n_streams=2,
                random_state=0).fit(ds))[1:]
        except Exception as exc:  # noqa: BLE001 - what a too small worker does is the result
            out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        out["restarted"] = len(before - worker_addresses(client))
        out["peak"] = max(worker_peak_rss(client).values())
    return out


def large_model_rows(cases: list[dict[str, Any]]) -> list[str]:
    lines = ["| d | state MB | worker memory limit | epoch s | stream task s | before s | "
             "after s | combine tasks s | transfers s | peak RSS/worker MiB | 0.49 GiB + 4 "
             "states MiB | workers restarted | fit |", "|" + "---|" * 13]
    for c in cases:
        bound = (0.49 * 2 ** 30 + 4 * c["state"]) / 2 ** 20
        if c["error"] is None:
            p = max(c["phases"], key=lambda q: q["epoch"] - q["pass"])
            timing = (f"{p['epoch']:.2f} | {p['pass']:.2f} | {p['before']:.3f} | "
                      f"{p['after']:.3f} | {p['combine']:.3f} | {p['transfer']:.3f}")
        else:
            timing = " | ".join(["-"] * 6)
        lines.append(f"| 2^{int(np.log2(c['d']))} | {c['state'] / 1e6:.0f} | {c['limit']} | "
                     f"{timing} | {c['peak'] / 2 ** 20:.0f} | {bound:.0f} | {c['restarted']} | "
                     f"{'completed' if c['error'] is None else c['error']} |")
    return lines


def streams_epochs(n_streams: int, d: int, pass_s: float, n_epochs: int,
                   memory_limit: str) -> dict[str, Any]:
    """Epochs as a fit runs them (:func:`dsvm.training.loop.run_epochs`: the model held on
    the workers, the next epoch submitted while one runs) with ``n_streams`` streams on 8
    worker processes, each stream's pass a sleep of ``pass_s`` (bench_overhead's SleepPass:
    it copies the epoch's start, so the state crosses to every worker as in a fit): the
    median epoch after the first, and what the memory limit did."""
    from distributed import Client, LocalCluster

    from benchmarks._common import worker_peak_rss
    from benchmarks.bench_overhead import NoData, SleepPass
    from dsvm.combine.averaging import ParameterAveraging
    from dsvm.distributed.engine import DaskEngine
    from dsvm.solvers.registry import make_solver
    from dsvm.training import loop

    solver, combiner = make_solver("sgd", alpha=1e-6), ParameterAveraging()
    out: dict[str, Any] = {"streams": n_streams, "d": d, "limit": memory_limit, "error": None,
                           "epoch": float("nan")}
    stream_pass = loop.StreamPass
    loop.StreamPass = lambda *args: SleepPass(pass_s, combiner)  # type: ignore[assignment]
    try:
        with LocalCluster(n_workers=8, threads_per_worker=max(1, n_streams // 8),
                          dashboard_address=None, memory_limit=memory_limit) as cluster, \
                Client(cluster) as client:
            before = worker_addresses(client)
            try:
                result = loop.run_epochs(
                    engine=DaskEngine(client), solver=solver, combiner=combiner,
                    source=NoData(1000), classes=None,
                    state=solver.init_state(d, 1, np.float32),
                    plan=loop.FitPlan(seed=0, n_streams=n_streams), first_epoch=0,
                    n_epochs=n_epochs)
                out["epoch"] = float(np.median([h["seconds"] for h in result.history[1:]]))
            except Exception as exc:  # noqa: BLE001 - reported
                out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
            out["restarted"] = len(before - worker_addresses(client))
            out["peak"] = max(worker_peak_rss(client).values())
    finally:
        loop.StreamPass = stream_pass  # type: ignore[assignment]
    print(out, flush=True)
    return out


def model_section(cases: list[dict[str, Any]], streams: list[dict[str, Any]],
                  pass_s: float) -> str:
    lines = ["A 3-epoch `sgd` fit (float32 iterate + float64 average: 12 bytes a feature) on "
             "2 worker processes x 1 thread with the memory limit given, rows of 40 random "
             "features out of d (bench_overhead's data); the epoch (epochs 2-3, the one with "
             "the larger overhead) split as bench_overhead splits it: *before* = epoch start "
             "to the first pass start (the start's transfer to the worker that does not hold "
             "it), *after* = last pass end to epoch end (the other worker's partial crossing, "
             "the root's combine and finalize, the summary). The process alone is about 0.49 "
             "GiB (RESULTS, 'Overhead: what the measurements ... call for'); dask's nanny kills "
             "a worker above 95% of its limit.", "", *large_model_rows(cases)]
    if not streams:
        return "\n".join(lines)
    lines += ["", f"The same held-state epochs with more streams (training.loop.run_epochs, each "
              f"stream's pass a {pass_s:.1f} s sleep that copies the epoch's start, as a pass "
              "does; 8 worker processes x streams/8 threads on this 2-core machine, 1,000 "
              "chunks; median of the epochs after the first): what the state's copies, "
              "transfers and the combine tree add per epoch at d = 2^10 (scheduling only) and "
              "d = 2^22.", "",
              "| streams | d | worker memory limit | epoch s | overhead s | overhead / pass | "
              "peak RSS/worker MiB | workers restarted | run |", "|" + "---|" * 9]
    for r in streams:
        over = r["epoch"] - pass_s
        lines.append(f"| {r['streams']} | 2^{int(np.log2(r['d']))} | {r['limit']} | "
                     f"{r['epoch']:.3f} | {over:.3f} | {over / pass_s:.1%} | "
                     f"{r['peak'] / 2 ** 20:.0f} | {r['restarted']} | "
                     f"{'completed' if r['error'] is None else r['error']} |")
    return "\n".join(lines)


def extrapolation(dense_none: Case, inc_s: float, streams: list[dict[str, Any]],
                  pass_s: float) -> list[str]:
    """dsvm's epoch and dask-ml's Incremental at W workers: Incremental trains one block at a
    time (a chain of partial_fit calls), so its time stays; dsvm's streams each read 2/W of
    the rows, plus the per-epoch overhead measured at W streams (d = 2^10, the scheduling;
    the dense model has 100 features)."""
    epoch, read, base = min(dense_none.epochs), min(dense_none.reads), min(dense_none.pass_tasks)
    over2 = epoch - base
    out = ["", f"Extrapolated to more workers ({dense_none.label}, none, sgd): dask-ml's "
           f"Incremental is a chain of partial_fit calls, one block at a time, so its "
           f"{inc_s:.2f} s stay; each of dsvm's W streams reads and trains on 2/W of the "
           f"rows measured on 2 workers (stream task {base:.3f} s, read-only {read:.3f} s), "
           "plus the per-epoch overhead measured above at W streams with the 2^10 model "
           f"(2 workers: {over2:.3f} s measured in the fit). Storage is assumed to serve W "
           "workers at the rate it serves 2.", "",
           "| workers | dsvm epoch s | read-only bound s | Incremental / dsvm | "
           "Incremental / read-only bound |", "|---|---|---|---|---|",
           f"| 2 (measured) | {epoch:.3f} | {read:.3f} | {inc_s / epoch:.1f}x | "
           f"{inc_s / read:.1f}x |"]
    for r in streams:
        if r["d"] != 2 ** 10 or r["error"] is not None:
            continue
        w = r["streams"]
        over = max(0.0, r["epoch"] - pass_s)
        ours, bound = base * 2 / w + over, read * 2 / w + over
        out.append(f"| {w} | {ours:.3f} | {bound:.3f} | {inc_s / ours:.0f}x | "
                   f"{inc_s / bound:.0f}x |")
    return out


def main(argv: list[str]) -> None:
    from distributed import Client, LocalCluster

    from dsvm.distributed.malloc import TuneMalloc

    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", nargs="+", choices=("epoch", "model"),
                    default=["epoch", "model"])
    ap.add_argument("--dense-rows", type=int, default=3_000_000)
    ap.add_argument("--sparse-rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--solvers", nargs="+", default=["sgd", "pegasos"])
    ap.add_argument("--codecs", nargs="+", default=list(CODECS))
    ap.add_argument("--model-rows", type=int, default=400_000)
    ap.add_argument("--model-limits", nargs="+", default=["1GiB", "0.75GiB"])
    ap.add_argument("--streams", type=int, nargs="*", default=[16, 64],
                    help="streams of the scaling simulation (none: the 2^22 model case only)")
    ap.add_argument("--sleep-pass", type=float, default=1.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-dask-ml", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.dense_rows, args.sparse_rows, args.rounds = 400_000, 200_000, 1
        args.model_rows = 100_000
    cmd = " ".join(["python -m benchmarks.bench_read_speed", *argv])
    WORK.mkdir(parents=True, exist_ok=True)
    streams: list[dict[str, Any]] = []
    if "model" in args.parts:
        from benchmarks.bench_overhead import sparse_dataset

        with tempfile.TemporaryDirectory(dir=WORK) as tmp_name:
            ds = sparse_dataset(Path(tmp_name) / "model.zarr", args.model_rows, 2 ** 22, 2)
            model = [large_model_case(ds, limit) for limit in args.model_limits]
        streams = [streams_epochs(n, d, args.sleep_pass, 4, "2GiB")
                   for n in args.streams for d in (2 ** 10, 2 ** 22)]
        body = model_section(model, streams, args.sleep_pass)
        print(body, flush=True)
        if not args.no_write:
            write_section("#28 item 3: the model's broadcast and combine at 2^22 features, "
                          "and at 64 streams", body, cmd)
    if "epoch" not in args.parts:
        return
    with tempfile.TemporaryDirectory(dir=WORK) as tmp_name:
        tmp = Path(tmp_name)
        cases = []
        for codec in args.codecs:
            dense = dense_set(tmp / f"dense-{codec}.zarr", args.dense_rows, codec)
            sparse = sparse_set(tmp / f"sparse-{codec}.zarr", args.sparse_rows, codec)
            for solver in args.solvers:
                cases.append(Case(f"dense {args.dense_rows:,} x 100", codec, solver, dense,
                                  [], [], [], []))
                cases.append(Case(f"sparse {args.sparse_rows:,} x 2^20", codec, solver, sparse,
                                  [], [], [], []))
        cases.sort(key=lambda c: (c.label, c.solver))
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None, memory_limit="4GiB") as lc, \
                Client(lc) as client:
            client.register_plugin(TuneMalloc())
            for case in {(c.label, c.solver): c for c in cases}.values():  # workers compile
                fit_epochs(client, case, 2)
            for _ in range(args.rounds):
                for case in cases:
                    run_case(client, case, args.epochs)
            dense_none = next((c for c in cases if c.label.startswith("dense")
                               and c.codec == "none" and c.solver == "sgd"), None)
            inc: tuple[float | None, str] = (None, "skipped (--skip-dask-ml)")
            if dense_none is not None and not args.skip_dask_ml:
                inc = dask_ml_epoch(client, dense_none.ds)
    body = render(cases, args.rounds, args.epochs, inc, dense_none)
    if dense_none is not None and inc[0] is not None and streams:
        body += "\n" + "\n".join(extrapolation(dense_none, inc[0], streams, args.sleep_pass))
    print(body)
    if not args.no_write:
        write_section("A cluster epoch at the speed of reading (#28 item 3)", body, cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
