"""Per-epoch overhead of a cluster fit (issue #12, items 3 and 4): measured, not subtracted.

Item 3, large models: an epoch of ``solver="sgd"`` on a LocalCluster of 2 worker processes
(1 thread each, 2 streams) over generated sparse data (rows of 40 uniform random columns out
of d, float32 values, 50,000-row chunks), d = 2^20, 2^22, 2^24 and K = 1 or 10 outputs. The
epoch's wall time is the client's, from one epoch's summary to the next (the next epoch is
submitted while one runs); the time inside the passes is the longest pass task's compute time
in dask's task stream (the two run side by side). The overhead is their difference: shipping
the state, the combine (transfers and adds), the finalize and the summary. Epochs 2 and 3 of
a 3-epoch fit (the first compiles); a fresh cluster per case, so that the workers' peak RSS
(VmHWM) belongs to that case.

Item 4, many streams (``--only scaling``): the engine's cost per epoch as the stream count
grows, on 8 worker processes with 1-8 threads each (8-64 streams), with a pass that reads
nothing (each stream copies the state and returns its partial), so that what is timed is
the driver, the scheduler and the combine: tasks, submission time, combine depth and time,
the scheduler's CPU seconds and the client's Python allocations (tracemalloc peak) per epoch,
for 1,000-20,000 chunks dealt to the streams.

    python -m benchmarks.bench_overhead [--rows 1000000] [--only ...]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from benchmarks._common import WORK, worker_peak_rss, write_section

CHUNK_ROWS = 50_000
NNZ = 40


def sparse_dataset(path: Path, n: int, d: int, n_classes: int, seed: int = 0) -> Any:
    """``n`` rows of ``NNZ`` uniform random columns out of ``d``; random labels (the timing
    does not depend on what is learnt), written in ``CHUNK_ROWS``-row chunks."""
    import dsvm

    rng = np.random.default_rng(seed)
    indices = np.sort(rng.integers(0, d, size=(n, NNZ), dtype=np.int32), axis=1).ravel()
    X = sp.csr_matrix((rng.random(n * NNZ, dtype=np.float32), indices,
                       np.arange(0, n * NNZ + 1, NNZ, dtype=np.int64)), shape=(n, d))
    X.sum_duplicates()
    y = rng.integers(0, n_classes, size=n)
    return dsvm.write_arrays(path, X, y, chunk_rows=CHUNK_ROWS)


def epoch_phases(client: Any, fit: Any) -> list[dict[str, float]]:
    """Run ``fit()`` and return, per epoch: its wall seconds, the longest pass task's compute
    seconds, the time before the first pass started and after the last one ended, and the
    combine tasks' compute and the transfers' seconds (summed). An epoch's span runs from the
    previous epoch's summary reaching the client (the first: its submission) to its own, as
    the fit's history counts it: the next epoch is submitted while one runs, so its passes
    may start before the span does (a negative *before*)."""
    from distributed import get_task_stream

    from dsvm.training import loop

    marks: list[float] = []
    submit, record = loop.submit_epoch, loop.epoch_record

    def submitted(*args: Any, **kwargs: Any) -> Any:
        if not marks:
            marks.append(time.time())
        return submit(*args, **kwargs)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        marks.append(time.time())
        return record(*args, **kwargs)

    loop.submit_epoch, loop.epoch_record = submitted, recorded
    try:
        with get_task_stream(client) as ts:
            fit()
    finally:
        loop.submit_epoch, loop.epoch_record = submit, record
    spans = list(zip(marks[:-1], marks[1:]))
    calls: dict[int, dict[str, list]] = {}
    for rec in ts.data:
        parts = str(rec["key"]).split("-")
        if parts[0] != "dsvm" or parts[1] not in ("pass", "combine"):
            continue
        per = calls.setdefault(int(parts[2]), {"pass": [], "combine": [], "transfer": []})
        for ss in rec["startstops"]:
            kind = "transfer" if ss["action"] == "transfer" else parts[1]
            if ss["action"] in ("compute", "transfer"):
                per[kind].append((ss["start"], ss["stop"]))
    out = []
    for (t0, t1), call in zip(spans, sorted(c for c in calls if calls[c]["pass"])):
        per = calls[call]
        passes = per["pass"]
        out.append({
            "epoch": t1 - t0,
            "pass": max(b - a for a, b in passes),
            "before": min(a for a, _ in passes) - t0,
            "after": t1 - max(b for _, b in passes),
            "combine": sum(b - a for a, b in per["combine"]),
            "transfer": sum(b - a for a, b in per["transfer"]),
        })
    return out


def large_d_case(tmp: Path, n: int, d: int, K: int) -> tuple[list[dict[str, float]], int, int]:
    """(phases of epochs 2-3, peak RSS of the larger worker, bytes of the solver state)."""
    from distributed import Client, LocalCluster

    import dsvm
    from dsvm.solvers.registry import make_solver

    ds = sparse_dataset(tmp / f"d{d}-k{K}.zarr", n, d, 2 if K == 1 else K)
    state = make_solver("sgd", alpha=1e-6).init_state(d, K, np.float32)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                      memory_limit="8GiB") as cluster, Client(cluster) as client:
        phases = epoch_phases(client, lambda: dsvm.SVMClassifier(
            client=client, solver="sgd", alpha=1e-6, max_epochs=3, tol=None, n_streams=2,
            random_state=0).fit(ds))
        peak = max(worker_peak_rss(client).values())
    return phases[1:], peak, int(state.nbytes)


def large_d_section(n: int, cases: list[tuple[int, int]]) -> tuple[str, dict[str, float]]:
    """The table of item 3, and the phases of the d = 2^20, K = 1 epoch (the reference of
    item 4's target)."""
    lines = [f"{n:,} rows, {NNZ} nnz/row CSR float32 ({CHUNK_ROWS:,}-row chunks), solver=sgd "
             "(averaged: the state is the float32 iterate and its float64 average), 2 worker "
             "processes x 1 thread, 2 streams. Seconds per epoch (epochs 2 and 3, the worse of "
             "the two); *epoch* = from the previous epoch's summary reaching the client to "
             "this one's (the next epoch is submitted while one runs, training.loop.RUN_AHEAD); "
             "*pass* = the longer pass task's compute time; *overhead* = epoch - pass; "
             "*before* = epoch start to the first pass start (the start's transfer to the "
             "other worker; negative: the pass began before the client had the previous "
             "summary), *after* = last pass end to epoch end (combine, transfers, finalize, "
             "summary).", "",
             "| d | K | state MB | epoch s | pass s | overhead s | overhead / epoch | before s "
             "| after s | combine task s | transfers s | peak RSS/worker MiB | "
             "0.5 GiB + 3 x state MiB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    verdicts, ref = [], {}
    WORK.mkdir(exist_ok=True)
    for d, K in cases:
        with tempfile.TemporaryDirectory(dir=WORK) as tmp:
            phases, peak, nbytes = large_d_case(Path(tmp), n, d, K)
        worst = max(phases, key=lambda p: (p["epoch"] - p["pass"]) / p["epoch"])
        share = (worst["epoch"] - worst["pass"]) / worst["epoch"]
        if (d, K) == (2 ** 20, 1):
            ref = worst
        bound = 0.5 * 2 ** 30 + 3 * nbytes
        lines.append(
            f"| 2^{int(np.log2(d))} | {K} | {nbytes / 1e6:.0f} | {worst['epoch']:.2f} | "
            f"{worst['pass']:.2f} | {worst['epoch'] - worst['pass']:.3f} | {share:.1%} | "
            f"{worst['before']:.3f} | {worst['after']:.3f} | {worst['combine']:.3f} | "
            f"{worst['transfer']:.3f} | {peak / 2**20:.0f} | {bound / 2**20:.0f} |")
        print(lines[-1], flush=True)
        verdicts.append(f"d = 2^{int(np.log2(d))}, K = {K}: overhead {share:.1%} of the epoch "
                        f"(target < 10%: {'met' if share < 0.10 else 'NOT met'})")
        if d == 2 ** 22 and K == 1:
            verdicts.append(f"d = 2^22, K = 1: peak RSS per worker {peak / 2**20:.0f} MiB "
                            f"against 0.5 GiB + 3 x state = {bound / 2**20:.0f} MiB "
                            f"({'met' if peak < bound else 'NOT met'})")
    return "\n".join(lines + [""] + [f"- {v}" for v in verdicts] + ["", SHIPPING]), ref


SHIPPING = (
    "How the state travels (counted by tests/distributed/test_state_shipping.py, which wraps "
    "distributed's pickle in each worker and in the client): the model stays on the cluster "
    "between epochs. The task at the root of the combine tree finalizes the next state where "
    "the partials meet and keeps it (dsvm.training.epoch); the next epoch's tasks take its "
    "future, so the worker that holds it reads nothing and each other worker reads the "
    "epoch's start once; only the epoch's summary (statistics, objective) goes to the "
    "client, and the model only for validation, early stopping, checkpoints, hooks, every "
    "8th epoch (which bounds the replay after a lost worker) and at the end. With more "
    "streams than workers the streams are dealt to the workers and combined there, so a "
    "worker sends at most one model-sized partial per epoch. The root makes the next state "
    "from the streams' states in one pass per array (dsvm.kernels.combine), with no float64 "
    "sums in between: its task took 0.046 s at 2^22 and 1.14 s at 2^24 when it made them "
    "with NumPy (run of 03:23). Before: the client gathered the "
    "combined float64 sums (16 bytes per feature and output), finalized them and scattered "
    "the next state to every worker each epoch.")



@dataclass(frozen=True)
class NullPass:
    """A stream that reads nothing: it copies the state (as a pass does) and returns its
    partial, so that an epoch of it costs only what the engine adds."""

    state: Any
    combiner: Any

    @property
    def nbytes(self) -> int:
        return int(self.state.nbytes)

    def __call__(self, source: Any, chunk_ids: list[int]) -> Any:
        from dsvm.solvers.base import PassStats

        n = len(chunk_ids)
        return self.combiner.chunk(self.state.copy(), PassStats(n_rows=n, weight_sum=n))


@dataclass(frozen=True)
class NoData:
    """The source of a :class:`NullPass` epoch: only its chunk count matters."""

    n_chunks: int
    n_samples: int = 1_000_000  # (what the probes' stride is set from)

    def describe(self) -> str:
        return f"{self.n_chunks} empty chunks"


class CountingClient:
    """A Client whose submit, map and scatter calls are timed and whose tasks are counted
    (the driver's side)."""

    def __init__(self, client: Any) -> None:
        self._client, self.calls, self.seconds = client, 0, 0.0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name not in ("submit", "map", "scatter"):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            tic = time.perf_counter()
            out = attr(*args, **kwargs)
            self.seconds += time.perf_counter() - tic
            self.calls += {"submit": 1, "map": len(out) if name == "map" else 0}.get(name, 0)
            return out

        return timed


def null_epoch(engine: Any, counting: CountingClient, task: NullPass, n_chunks: int,
               n_streams: int, epoch: int) -> dict[str, float]:
    """One engine epoch of ``task``; what the driver, the scheduler and the combine cost."""
    import tracemalloc

    from dsvm.data.order import deal_chunks, epoch_chunk_order

    def sched_cpu() -> float:
        import psutil

        t = psutil.Process().cpu_times()
        return t.user + t.system

    counting.calls, counting.seconds = 0, 0.0
    cpu0 = counting.run_on_scheduler(sched_cpu)
    traced = epoch == 0  # tracemalloc slows the client: the allocations of one epoch only
    if traced:
        tracemalloc.start()
    t0 = time.time()
    groups = deal_chunks(epoch_chunk_order(0, epoch, n_chunks), n_streams)
    engine.reduce(task, NoData(n_chunks), groups, task.combiner.combine, name="pass",
                  combine_name="combine")
    t1 = time.time()
    peak = tracemalloc.get_traced_memory()[1] if traced else float("nan")
    if traced:
        tracemalloc.stop()
    return {"epoch": t1 - t0, "tasks": counting.calls, "submit": counting.seconds,
            "scheduler_cpu": counting.run_on_scheduler(sched_cpu) - cpu0,
            "client_mb": peak / 1e6, "t0": t0, "t1": t1, "call": engine._calls}



def scaling_runs(n_streams: int, sizes: tuple[int, ...], chunk_counts: tuple[int, ...],
                 repeat: int) -> list[dict[str, float]]:
    """The median epoch of ``repeat`` (after a warm-up) per (d, chunks), on 8 worker
    processes with ``n_streams / 8`` threads each."""
    from distributed import Client, LocalCluster, get_task_stream

    from dsvm.combine.averaging import ParameterAveraging
    from dsvm.distributed.engine import DaskEngine
    from dsvm.solvers.registry import make_solver

    rows = []
    with LocalCluster(n_workers=8, threads_per_worker=max(1, n_streams // 8),
                      dashboard_address=None, memory_limit="1GiB") as cluster, \
            Client(cluster) as client:
        counting = CountingClient(client)
        engine = DaskEngine(counting)
        for d in sizes:
            state = make_solver("sgd", alpha=1e-6).init_state(d, 1, np.float32)
            task = NullPass(state, ParameterAveraging())
            for n_chunks in chunk_counts:
                null_epoch(engine, counting, task, n_chunks, n_streams, 1)  # warm-up
                with get_task_stream(client) as ts:
                    runs = [null_epoch(engine, counting, task, n_chunks, n_streams, e)
                            for e in range(repeat)]
                rows.append({"streams": n_streams, "d": d, "chunks": n_chunks,
                             **median_run(runs, ts.data)})
                print(rows[-1], flush=True)
    return rows


def median_run(runs: list[dict[str, float]], stream: list[dict]) -> dict[str, float]:
    """Per-epoch medians, with the combine's depth and the time from the last pass task's end
    to the epoch's end (the combine, its transfers and the gather) from the task stream."""
    for run in runs:
        passes, levels = [], set()
        for rec in stream:
            parts = str(rec["key"]).split("-")
            compute = [ss for ss in rec["startstops"] if ss["action"] == "compute"]
            if not compute or parts[0] != "dsvm" or parts[2] != str(run["call"]):
                continue
            if parts[1] == "pass":
                passes.append(compute[0])
            elif parts[1] == "combine":
                levels.add(parts[3])
        run["depth"] = len(levels)
        run["pass"] = max(ss["stop"] - ss["start"] for ss in passes)
        run["before"] = min(ss["start"] for ss in passes) - run["t0"]
        run["after"] = run["t1"] - max(ss["stop"] for ss in passes)
    keys = ("epoch", "tasks", "submit", "scheduler_cpu", "depth", "pass", "before", "after")
    out = {k: float(np.median([r[k] for r in runs])) for k in keys}
    out["client_mb"] = runs[0]["client_mb"]
    return out



def tree_tasks(n_workers: int, split_every: int = 4) -> tuple[int, int]:
    """(tasks, combine depth) of an epoch with one stream per worker."""
    tasks, level = n_workers, n_workers
    depth = 0
    while level > 1:
        level = -(-level // split_every)
        tasks, depth = tasks + level, depth + 1
    return tasks, depth


@dataclass(frozen=True)
class SleepPass:
    """Stands in for :class:`dsvm.engine.tasks.StreamPass` in a fit's epochs: it copies
    the epoch's start, sleeps for ``seconds`` (a pass's compute, without taking one of this
    machine's 2 cores from the scheduler) and returns the copy as its partial."""

    seconds: float
    combiner: Any

    def __call__(self, source: Any, chunk_ids: list[int], start: Any) -> Any:
        from dsvm.solvers.base import PassStats

        state = start.shipped.copy()  # (a pass works on a copy: made first, as there)
        time.sleep(self.seconds)
        n = len(chunk_ids)
        return self.combiner.chunk(state, PassStats(n_rows=n, weight_sum=n))


def chained_runs(n_streams: int, d: int, chunk_counts: tuple[int, ...], pass_s: float,
                 n_epochs: int) -> list[dict[str, float]]:
    """Epochs as a fit runs them (:func:`dsvm.training.loop.run_epochs`: the state held on
    the cluster, the next epoch submitted while one runs, or not), with passes of
    ``pass_s`` seconds: the median epoch after the first, per (chunks, run ahead)."""
    from distributed import Client, LocalCluster

    from dsvm.combine.averaging import ParameterAveraging
    from dsvm.distributed.engine import DaskEngine
    from dsvm.solvers.registry import make_solver
    from dsvm.training import loop

    solver, combiner = make_solver("sgd", alpha=1e-6), ParameterAveraging()
    rows = []
    stream_pass, run_ahead = loop.StreamPass, loop.RUN_AHEAD
    loop.StreamPass = lambda *args: SleepPass(pass_s, combiner)  # type: ignore[assignment]
    try:
        with LocalCluster(n_workers=8, threads_per_worker=max(1, n_streams // 8),
                          dashboard_address=None, memory_limit="1GiB") as cluster, \
                Client(cluster) as client:
            for n_chunks in chunk_counts:
                for ahead in (False, True):
                    loop.RUN_AHEAD = ahead
                    result = loop.run_epochs(
                        engine=DaskEngine(client), solver=solver, combiner=combiner,
                        source=NoData(n_chunks), classes=None,
                        state=solver.init_state(d, 1, np.float32),
                        plan=loop.FitPlan(seed=0, n_streams=n_streams), first_epoch=0,
                        n_epochs=n_epochs)
                    epoch = float(np.median([h["seconds"] for h in result.history[1:]]))
                    rows.append({"streams": n_streams, "d": d, "chunks": n_chunks,
                                 "ahead": ahead, "epoch": epoch, "overhead": epoch - pass_s})
                    print(rows[-1], flush=True)
    finally:
        loop.StreamPass, loop.RUN_AHEAD = stream_pass, run_ahead
    return rows


def chained_section(rows: list[dict[str, float]], pass_s: float, n_ref: int) -> str:
    """The table of epochs chained as a fit runs them, and the target of item 4."""
    lines = ["", f"Epochs as a fit runs them (dsvm.training.loop.run_epochs: the model held on "
             "the workers, the combine's root making the next state, the real Prepare, Finish "
             f"and summary tasks), the same 8 worker processes, each stream's pass a "
             f"{pass_s:.2f} s sleep (the 2-stream pass of the d = 2^20 reference above, "
             "without taking a core from the scheduler: the passes of a real cluster run on "
             "other machines). *ahead*: the next epoch submitted while one runs (the "
             "default, training.loop.RUN_AHEAD), or only once its summary is back. Median of "
             "the epochs after the first (their history seconds).", "",
             "| streams | d | chunks | run ahead | epoch s | overhead s | overhead / pass |",
             "|" + "---|" * 7]
    for r in rows:
        lines.append(f"| {r['streams']:.0f} | 2^{int(np.log2(r['d']))} | {r['chunks']:,.0f} "
                     f"| {'yes' if r['ahead'] else 'no'} | {r['epoch']:.3f} | "
                     f"{r['overhead']:.3f} | {r['overhead'] / pass_s:.1%} |")
    at64 = [r for r in rows if r["streams"] == 64 and r["ahead"]]
    if at64:
        worst = max(r["overhead"] for r in at64)
        lines += ["", f"Target: per-epoch overhead at 64 streams under 10% of a {n_ref:,}-row "
                  f"epoch's pass time ({pass_s:.2f} s), as a fit runs its epochs: worst "
                  f"{worst:.3f} s = {worst / pass_s:.1%} "
                  f"({'met' if worst / pass_s < 0.10 else 'NOT met'})."]
    return "\n".join(lines)


def scaling_section(rows: list[dict[str, float]], ref: dict[str, float], n_ref: int) -> str:
    """The table, the fits, and the extrapolation to 1,000 workers and 10 TB."""
    lines = ["8 worker processes x 1-8 threads (8-64 streams) on this 2-core machine, a pass "
             "that reads nothing (copies the state, returns its partial; the real combine, "
             "``ParameterAveraging``), sgd state of d features (K = 1). Median of "
             "3 epochs after a warm-up. *submit* = the client's time in submit/scatter "
             "calls; *sched CPU* = the scheduler process's CPU seconds in the epoch; *after* = "
             "last pass end to the result on the client (combine, transfers, gather); "
             "*overhead* = epoch - longest pass task; *client MB* = the client's Python "
             "allocation peak in an epoch (tracemalloc).", "",
             "| streams | d | chunks | tasks | depth | submit s | sched CPU s | before s | "
             "after s | epoch s | overhead s | client MB |", "|" + "---|" * 12]
    for r in rows:
        lines.append(
            f"| {r['streams']:.0f} | 2^{int(np.log2(r['d']))} | {r['chunks']:,.0f} | "
            f"{r['tasks']:.0f} | {r['depth']:.0f} | {r['submit']:.3f} | "
            f"{r['scheduler_cpu']:.2f} | {r['before']:.3f} | {r['after']:.3f} | "
            f"{r['epoch']:.3f} | {r['epoch'] - r['pass']:.3f} | {r['client_mb']:.1f} |")
    # per-task costs from the smallest model (its scatter and copies are negligible); the
    # model-sized costs (broadcast, combine) are extrapolated from bytes and bandwidth below
    small = [r for r in rows if r["d"] == min(x["d"] for x in rows)]
    tasks = np.array([r["tasks"] for r in small])
    fits = {k: np.maximum(np.polyfit(tasks, [r[k] for r in small], 1), 0.0)
            for k in ("submit", "scheduler_cpu", "client_mb")}
    lines += ["", f"Least-squares fits over the d = 2^{int(np.log2(small[0]['d']))} rows "
              "(x = tasks per epoch; negative coefficients clipped to 0; the chunk count does "
              "not enter: a task carries its chunk ids, a few bytes each):", ""]
    lines += [f"- {k}: {b * 1e3:.2f} ms per task + {a * 1e3:.0f} ms" if k != "client_mb"
              else f"- client MB: {b * 1e3:.1f} kB per task + {a:.1f} MB"
              for k, (b, a) in fits.items()]
    at64 = [r for r in rows if r["streams"] == 64]
    worst = max(r["epoch"] - r["pass"] for r in at64)
    share = worst / ref["pass"]
    lines += ["", f"Engine epochs alone (each submitted once the last is back, the state "
              f"inside the tasks) at 64 streams: worst overhead {worst:.3f} s = {share:.1%} of "
              f"a {n_ref:,}-row epoch's pass time ({ref['pass']:.2f} s on 2 streams, d = 2^20, "
              "K = 1, measured in the same run). The target is taken on epochs as a fit runs "
              "them, below."]
    return "\n".join(lines + extrapolation(fits, ref, n_ref))



LINK_BYTES_PER_S = 1.25e9  # a 10 Gb/s network, for the extrapolation
ROW_BYTES = NNZ * 8 + 16  # a CSR row: values and indices (4 + 4 bytes each), indptr and y


def extrapolation(fits: dict[str, np.ndarray], ref: dict[str, float],
                  n_ref: int) -> list[str]:
    """On paper: 1,000 workers, one stream each, 10 TB of such rows, d = 2^24, K = 1 and 10."""
    n_workers, data = 1000, 10e12
    tasks, depth = tree_tasks(n_workers)
    rate = n_ref / 2 / ref["pass"]  # rows per second per stream, measured
    rows_per_worker = data / ROW_BYTES / n_workers
    pass_s = rows_per_worker / rate
    driver = float(np.polyval(fits["submit"], tasks))
    sched = float(np.polyval(fits["scheduler_cpu"], tasks))
    client_mb = float(np.polyval(fits["client_mb"], tasks))
    out = ["", f"Extrapolation to {n_workers:,} workers (one stream each) and 10 TB "
           f"({data / ROW_BYTES:.2g} rows of {NNZ} nnz, {rows_per_worker:.2g} per worker; at "
           f"the measured {rate:,.0f} rows/s per stream a pass takes {pass_s:,.0f} s): "
           f"{tasks:,} tasks and {depth} combine levels per epoch (split_every 4); the chunk "
           "count (10 TB / 64 MB = 156,000) only lengthens each task's list of chunk ids "
           "(156 per task) and the driver's order array (1.2 MB).", "",
           "| d, K | state MB | partial MB | submit s | sched CPU s | broadcast s | "
           "combine s | client in+out s | overhead s | / pass |", "|" + "---|" * 10]
    for d, K in ((2 ** 20, 1), (2 ** 24, 1), (2 ** 24, 10)):
        state = 12.0 * d * K  # float32 iterate + float64 average
        partial = 16.0 * d * K  # their float64 sums
        # dask replicates a scattered key in rounds that double its holders: log2(W) sends
        broadcast = np.ceil(np.log2(n_workers)) * state / LINK_BYTES_PER_S
        # per level: split_every partials into one worker, and their sums (~2 GB/s per add)
        combine = depth * (4 * partial / LINK_BYTES_PER_S + 3 * partial / 2e9)
        client = (state + partial) / LINK_BYTES_PER_S
        total = driver + sched + broadcast + combine + client
        out.append(f"| 2^{int(np.log2(d))}, {K} | {state / 1e6:,.0f} | {partial / 1e6:,.0f} | "
                   f"{driver:.2f} | {sched:.2f} | {broadcast:.2f} | {combine:.2f} | "
                   f"{client:.2f} | {total:.2f} | {total / pass_s:.1%} |")
    out += ["", f"Client memory at {tasks:,} tasks: {client_mb:.0f} MB of Python allocations "
            "per epoch (fit), plus the state and the final partial it holds (the rows above). "
            "Assumptions: submission and the scheduler's work are counted in full although "
            "they overlap the passes; bandwidth 10 Gb/s per link, adds at 2 GB/s. The "
            "combine's cost per level measured here (d = 2^20 rows, depth 2-3, loopback, 2 "
            "shared cores) does not separate from the noise and is not used; the network "
            "model is."]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--only", choices=("large-d", "scaling"), default=None)
    ap.add_argument("--chunks", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-write", action="store_true", help="print only (trial runs)")
    args = ap.parse_args()
    cmd = "python -m benchmarks.bench_overhead" + (f" --only {args.only}" if args.only else "")
    cases = [(2 ** 20, 1), (2 ** 22, 1), (2 ** 24, 1), (2 ** 20, 10), (2 ** 22, 10)]
    if args.only == "scaling":
        cases = [(2 ** 20, 1)]  # the reference pass time only
    body, ref = large_d_section(args.rows, cases)
    print(body, flush=True)
    if args.only != "scaling" and not args.no_write:
        write_section("Overhead: per-epoch broadcast and combine for large d", body, cmd)
    if args.only == "large-d":
        return
    rows = []
    for n_streams in (8, 16, 32, 64):
        rows += scaling_runs(n_streams, (2 ** 10, 2 ** 20), tuple(args.chunks), args.repeat)
    chained = []
    for n_streams in (8, 64):
        for d in (2 ** 10, 2 ** 20):
            chained += chained_runs(n_streams, d, (min(args.chunks), max(args.chunks)),
                                    ref["pass"], args.repeat + 2)
    body = scaling_section(rows, ref, args.rows) + "\n" + chained_section(
        chained, ref["pass"], args.rows)
    print(body, flush=True)
    if not args.no_write:
        write_section("Overhead: driver and scheduler cost as the cluster grows", body, cmd)


if __name__ == "__main__":
    main()
