"""Out of core: 2 workers limited to 1 GiB each train one epoch over a >= 4 GiB dense dataset.

Checks, and writes to RESULTS.md: the epoch completes, no worker was restarted (the same worker
processes before and after), none spilled to disk, and each worker's peak RSS stayed under its
limit. The dataset is generated chunk by chunk (bounded memory) into benchmarks/_work.

    python -m benchmarks.bench_out_of_core [--gib 4.2] [--features 100]
"""

from __future__ import annotations

import argparse
import shutil
import time

from benchmarks._common import WORK, worker_peak_rss, worker_spilled, write_section


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=4.2, help="uncompressed size of X")
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--memory-limit", default="1GiB")
    ap.add_argument("--keep", action="store_true", help="keep the generated dataset")
    args = ap.parse_args()

    from distributed import Client, LocalCluster

    import dsvm

    n_rows = int(args.gib * 2**30 / (4 * args.features))
    path = WORK / f"ooc_{n_rows}x{args.features}.zarr"
    WORK.mkdir(parents=True, exist_ok=True)
    tic = time.perf_counter()
    if path.exists():
        ds = dsvm.open_dataset(path)
    else:
        ds = dsvm.write_synthetic(path, n_rows, args.features, dtype="float32", seed=0,
                                  chunk_rows=65536)
    gen_s = time.perf_counter() - tic
    x_gib = ds.n_samples * ds.n_features * 4 / 2**30
    print(f"dataset {path}: {ds.n_samples:,} x {ds.n_features} float32 = {x_gib:.2f} GiB "
          f"in {ds.n_chunks} chunks ({gen_s:.0f}s to generate/open)")

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=args.memory_limit) as cluster, Client(cluster) as client:
        before = sorted(client.scheduler_info()["workers"])
        limits = {a: w["memory_limit"] for a, w in client.scheduler_info()["workers"].items()}
        clf = dsvm.SVMClassifier(alpha=1e-4, max_epochs=1, tol=None, random_state=0,
                                 client=client, verbose=1)
        tic = time.perf_counter()
        clf.fit(ds)
        epoch_s = time.perf_counter() - tic
        after = sorted(client.scheduler_info()["workers"])
        peaks = worker_peak_rss(client)
        spilled = worker_spilled(client)
    restarted = before != after
    rows = [f"| {a} | {limits[a] / 2**30:.2f} | {peaks[a] / 2**30:.3f} | {spilled[a]} |"
            for a in sorted(peaks)]
    ok = (not restarted and all(v == 0 for v in spilled.values())
          and all(peaks[a] < limits[a] for a in peaks))
    body = "\n".join([
        f"Dataset: {ds.n_samples:,} x {ds.n_features} float32 dense = **{x_gib:.2f} GiB** "
        f"uncompressed X, {ds.n_chunks} chunks of {ds.chunk_n_rows(0):,} rows.",
        f"One pegasos epoch on a LocalCluster of 2 workers (1 thread, {args.memory_limit} each): "
        f"**{epoch_s:.1f} s** ({ds.n_samples / epoch_s:,.0f} rows/s); "
        f"objective estimate {clf.history_[-1]['objective']:.4f}.",
        "",
        "| worker | limit (GiB) | peak RSS (GiB) | bytes spilled |",
        "|---|---|---|---|",
        *rows,
        "",
        f"Workers restarted: **{'yes' if restarted else 'no'}**. "
        f"Result: **{'PASS' if ok else 'FAIL'}** (completes, no restart, no spill, "
        "peak RSS under the limit).",
    ])
    print(body)
    write_section("Out of core: 2 workers x 1 GiB, one epoch over a >= 4 GiB dataset", body,
                  "python -m benchmarks.bench_out_of_core")
    if not args.keep:
        shutil.rmtree(path, ignore_errors=True)
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
