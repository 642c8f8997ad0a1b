"""CoCoA+ against pegasos, sgd and nesvm on a 2-worker cluster: epochs and seconds to within
0.1% of LIBLINEAR's optimum, the duality gap, and the memory per worker as n grows 10x.

C-SVM without intercept at lambda = 1/n (C = 1) on a9a and w8a (rows shuffled once, seed 0),
converted to zarr in 4,096-row chunks and trained on a LocalCluster of 2 worker processes
(1 thread each), 2 streams. After every epoch (one read of every row; NESVM: one pass) an epoch
hook takes the model and its exact hinge objective is computed afterwards on the client
(not timed); seconds are the fits' own epoch times. LIBLINEAR's optimum: the issue's values
(LinearSVC dual CD, tol 1e-6). Memory: peak RSS of each worker of a fresh cluster after a
3-epoch CoCoA+ fit on generated data of n and 10 n rows.

    python -m benchmarks.bench_cocoa [--epochs 10] [--local-iters 50]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import worker_peak_rss, write_section
from benchmarks.bench_nesvm import hinge_objective, load

OPTIMUM = {"a9a": 0.351150, "w8a": 0.132764}
PLOT = Path(__file__).with_name("cocoa_convergence.png")
TARGET = 1e-3


def cluster():
    from distributed import Client, LocalCluster

    lc = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit="3GiB")
    return lc, Client(lc)


def run(solver: str, url: str, client, alpha: float, epochs: int, **kw):
    """(cumulative seconds, models) after each epoch of one fit."""
    import dsvm
    from dsvm.engine.hooks import epoch_hook

    models: list[np.ndarray] = []

    def hook(spec, state, history, converged):
        models.append(np.array(state.model()[0], dtype=np.float64).ravel())

    clf = dsvm.SVMClassifier(solver=solver, alpha=alpha, fit_intercept=False, max_epochs=epochs,
                             tol=None, n_streams=2, random_state=0, client=client, **kw)
    with epoch_hook(hook):
        clf.fit(url)
    seconds = np.cumsum([h["seconds"] for h in clf.history_])
    return seconds, models, clf.history_


def first_within(subopt: np.ndarray, seconds: np.ndarray) -> tuple[str, str]:
    hit = np.flatnonzero(subopt <= TARGET)
    if not hit.size:
        return f"> {len(subopt)}", "-"
    return str(int(hit[0]) + 1), f"{seconds[hit[0]]:.1f}"


def memory_rows(rows: list[str], tmp: str, n: int) -> None:
    import dsvm

    for window in (None, 8):
        for size in (n, 10 * n):
            data = dsvm.write_synthetic(f"{tmp}/mem{size}.zarr", size, 50, chunk_rows=4096,
                                        seed=0, overwrite=True)
            lc, client = cluster()
            try:
                tic = time.perf_counter()
                dsvm.SVMClassifier(solver="cocoa", alpha=1e-4, max_epochs=3, tol=None,
                                   n_streams=2, random_state=0, client=client,
                                   shuffle_window=window).fit(data)
                seconds = time.perf_counter() - tic
                peak = max(worker_peak_rss(client).values()) / 2**20
            finally:
                client.close()
                lc.close()
            what = "default (a stream's chunks, <= 128 MB)" if window is None else window
            rows.append(f"| {size:,} x 50 dense ({data.nbytes / 2**20:.0f} MiB) | {what} | "
                        f"{peak:.0f} | {seconds:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--local-iters", type=float, default=50.0)
    parser.add_argument("--memory-rows", type=int, default=50_000)
    args = parser.parse_args()
    import dsvm

    table = ["| data | solver | epochs to 0.1% | seconds to 0.1% | best subopt. (epochs) | "
             "subopt. after 10 | last rel. duality gap |", "|---|---|---|---|---|---|---|"]
    curves: dict[str, dict[str, np.ndarray]] = {}
    solvers = {"cocoa": dict(local_iters=args.local_iters), "pegasos": {}, "sgd": {},
               "nesvm": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("a9a", "w8a"):
            X, y = load(name)
            n = X.shape[0]
            url = dsvm.write_arrays(f"{tmp}/{name}.zarr", X, y, chunk_rows=4096).url
            lc, client = cluster()
            curves[name] = {}
            try:
                for solver, kw in solvers.items():
                    seconds, models, history = run(solver, url, client, 1.0 / n, args.epochs,
                                                   **kw)
                    obj = np.array([hinge_objective(X, y, 1.0 / n, w) for w in models])
                    subopt = obj / OPTIMUM[name] - 1.0
                    curves[name][solver] = subopt
                    ep, sec = first_within(subopt, seconds)
                    gap = history[-1].get("relative_gap")
                    best = int(np.argmin(subopt))
                    table.append(
                        f"| {name} | {solver} | {ep} | {sec} | {subopt[best]:.2e} ({best + 1}) "
                        f"| {subopt[min(9, len(subopt) - 1)]:.2e} | "
                        f"{'-' if gap is None else f'{gap:.2e}'} |")
                    print(table[-1], flush=True)
            finally:
                client.close()
                lc.close()
        mem = ["| data | shuffle_window | peak RSS per worker (MiB) | seconds (3 epochs) |",
               "|---|---|---|---|"]
        memory_rows(mem, tmp, args.memory_rows)
    plot(curves)
    body = "\n".join(table) + "\n\n" + (
        f"CoCoA+ with local_iters={args.local_iters} (passes of dual steps over the rows of each "
        "window of chunks in memory, default shuffle_window: a stream's chunks of an epoch in "
        "one window here), sigma' = 2, one round per epoch. The relative duality gap is that "
        "of the model the last epoch started from. ![convergence](cocoa_convergence.png)"
        "\n\nMemory per worker, CoCoA+ (duals in the zarr dual store, not in memory; the "
        "window's rows are what grows with n, up to the 128 MB cap; with the window fixed, "
        "memory is flat in n):\n\n"
        + "\n".join(mem))
    write_section("CoCoA+ (cocoa) convergence on 2 workers", body,
                  f"python -m benchmarks.bench_cocoa --epochs {args.epochs} --local-iters "
                  f"{args.local_iters}")
    print("\n".join(mem))


def plot(curves: dict[str, dict[str, np.ndarray]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(11, 4))
    for ax, (name, by_solver) in zip(np.atleast_1d(axes), curves.items()):
        for solver, subopt in by_solver.items():
            ax.semilogy(np.arange(1, len(subopt) + 1), np.maximum(subopt, 1e-6), label=solver)
        ax.axhline(TARGET, color="grey", ls=":")
        ax.set(title=f"{name}, lambda = 1/n, 2 workers", xlabel="epochs (reads of the data)",
               ylabel="P(w) / P* - 1")
        ax.legend()
    fig.tight_layout()
    fig.savefig(PLOT, dpi=90)


if __name__ == "__main__":
    main()
