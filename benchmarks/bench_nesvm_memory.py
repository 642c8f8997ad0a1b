"""NESVM's memory per worker: passes over a dense dataset larger than a worker's memory limit.

Two workers limited to ``--memory-limit`` each run ``--passes`` NESVM iterations (exact
gradient passes) over a generated float32 dataset of ``--gib`` GiB. Checks, and writes to
RESULTS.md: the fit completes, no worker restarted or spilled, and each worker's peak RSS stays
under its limit although its half of the data is larger than the limit allows to hold.

    python -m benchmarks.bench_nesvm_memory [--gib 2.5] [--memory-limit 1GiB] [--passes 3]
"""

from __future__ import annotations

import argparse
import shutil
import time

from benchmarks._common import WORK, worker_peak_rss, worker_spilled, write_section


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=2.5, help="uncompressed size of X")
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--memory-limit", default="1GiB")
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()

    from distributed import Client, LocalCluster

    import dsvm

    n_rows = int(args.gib * 2**30 / (4 * args.features))
    path = WORK / f"nesvm_mem_{n_rows}x{args.features}.zarr"
    WORK.mkdir(parents=True, exist_ok=True)
    ds = (dsvm.open_dataset(path) if path.exists() else
          dsvm.write_synthetic(path, n_rows, args.features, dtype="float32", seed=0,
                               chunk_rows=65536))
    x_gib = ds.n_samples * ds.n_features * 4 / 2**30
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=args.memory_limit) as cluster, Client(cluster) as client:
        before = sorted(client.scheduler_info()["workers"])
        limits = {a: w["memory_limit"] for a, w in client.scheduler_info()["workers"].items()}
        clf = dsvm.SVMClassifier(solver="nesvm", alpha=1e-4, max_epochs=args.passes, tol=None,
                                 client=client)
        tic = time.perf_counter()
        clf.fit(ds)
        seconds = time.perf_counter() - tic
        restarted = before != sorted(client.scheduler_info()["workers"])
        peaks = worker_peak_rss(client)
        spilled = worker_spilled(client)
    ok = (not restarted and all(v == 0 for v in spilled.values())
          and all(peaks[a] < limits[a] for a in peaks))
    rows = [f"| {a} | {limits[a] / 2**30:.2f} | {peaks[a] / 2**30:.3f} | {spilled[a]} |"
            for a in sorted(peaks)]
    body = "\n".join([
        f"Dataset: {ds.n_samples:,} x {ds.n_features} float32 dense = **{x_gib:.2f} GiB** "
        f"uncompressed X, {ds.n_chunks} chunks. {args.passes} NESVM passes on a LocalCluster "
        f"of 2 workers (1 thread, {args.memory_limit} each): **{seconds:.1f} s** "
        f"(including worker warm-up); objective {clf.history_[-1]['objective']:.4f}.",
        "",
        "| worker | limit (GiB) | peak RSS (GiB) | bytes spilled |",
        "|---|---|---|---|",
        *rows,
        "",
        f"Workers restarted: **{'yes' if restarted else 'no'}**. Result: "
        f"**{'PASS' if ok else 'FAIL'}** (completes, no restart, no spill, peak RSS under the "
        "limit).",
    ])
    print(body)
    write_section("NESVM memory: 2 workers, exact gradient passes over a larger dataset", body,
                  "python -m benchmarks.bench_nesvm_memory")
    shutil.rmtree(path, ignore_errors=True)
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
