"""Resilience costs: a checkpoint per epoch, and one worker killed (SIGKILL) mid-epoch.

On a scheduler and 2 workers started as separate processes (cluster/local/start-cluster.sh),
measured side by side in one run:

* checkpoint cost: fits with and without ``checkpoint=`` (median epoch seconds), and the time of
  one checkpoint write itself (best of 5) as a share of the median epoch; also the write time
  for a wide model (10 classes x 1M features) to show how it scales with the state's size;
* worker kill: the same fit undisturbed and with one worker SIGKILLed 0.3 s into epoch 2 (the
  epochs after it run on the surviving worker); the models must be identical.

    python -m benchmarks.bench_resilience [--rows 2000000] [--features 50] [--epochs 5]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from benchmarks._common import WORK, write_section

REPO = Path(__file__).resolve().parents[1]


def _start_cluster(run_dir: Path) -> tuple[str, list[int]]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(["bash", str(REPO / "cluster/local/start-cluster.sh"), str(run_dir),
                           "2", "2GiB"], capture_output=True, text=True, env=env, check=True)
    pids = [int(p) for p in (run_dir / "pids").read_text().split()]
    return proc.stdout.strip().splitlines()[-1], pids


def _stop_cluster(run_dir: Path) -> None:
    subprocess.run(["bash", str(REPO / "cluster/local/stop-cluster.sh"), str(run_dir)],
                   check=False)


def _median_epoch(clf) -> float:
    return statistics.median(h["seconds"] for h in clf.history_[1:])  # epoch 1 warms caches


def _checkpoint_write_seconds(clf, n_chunks: int, path: str) -> tuple[float, int]:
    from dsvm.io.checkpoints import save_checkpoint
    from dsvm.training.checkpoints import checkpoint_of

    times = []
    for _ in range(5):
        tic = time.perf_counter()
        save_checkpoint(path, checkpoint_of(
            clf._spec(), clf.state_, history=clf.history_, converged=False,
            classes=clf.classes_, seed=clf.seed_, n_streams=clf.n_streams_,
            n_features=clf.n_features_in_, n_chunks=n_chunks, source=""))
        times.append(time.perf_counter() - tic)
    return min(times), os.path.getsize(path)


def _wide_write_seconds(path: str) -> tuple[float, int]:
    from dsvm.io.checkpoints import Checkpoint, save_checkpoint

    rng = np.random.default_rng(0)
    coef = rng.normal(size=(10, 1_000_000)).astype(np.float32)
    ckpt = Checkpoint(epoch=1, coef=coef, intercept=np.zeros(10, np.float32),
                      avg_coef=coef.astype(np.float64), avg_intercept=np.zeros(10),
                      t=1.0, n_avg=1.0, eta0=float("nan"), extra={},
                      classes=np.arange(10), seed=0, n_streams=2, n_features=1_000_000,
                      converged=False, params={})
    times = []
    for _ in range(3):
        tic = time.perf_counter()
        save_checkpoint(path, ckpt)
        times.append(time.perf_counter() - tic)
    return min(times), os.path.getsize(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--chunk-rows", type=int, default=20_000)
    ap.add_argument("--epochs", type=int, default=5)
    args = ap.parse_args()

    import dsvm
    from dsvm.engine.hooks import epoch_hook

    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"resilience_{args.rows}x{args.features}_{args.chunk_rows}.zarr"
    ds = (dsvm.open_dataset(path) if path.exists() else
          dsvm.write_synthetic(path, args.rows, args.features, chunk_rows=args.chunk_rows, seed=0))
    tmp = Path(tempfile.mkdtemp(prefix="dsvm-resilience-"))
    run_dir = tmp / "cluster"
    address, pids = _start_cluster(run_dir)
    try:
        def fit(**kw):
            params = dict(max_epochs=args.epochs, tol=None, random_state=0, n_streams=2,
                          client=address)
            return dsvm.SVMClassifier(**{**params, **kw}).fit(ds)

        fit(max_epochs=1)  # compile and warm the workers
        plain = fit()
        with_ckpt = fit(checkpoint=str(tmp / "fit.ckpt"))
        plain2 = fit()
        assert np.array_equal(plain.coef_, with_ckpt.coef_)
        epoch_plain = statistics.median([_median_epoch(plain), _median_epoch(plain2)])
        epoch_ckpt = _median_epoch(with_ckpt)
        write_s, size = _checkpoint_write_seconds(with_ckpt, ds.n_chunks, str(tmp / "w.ckpt"))
        wide_s, wide_size = _wide_write_seconds(str(tmp / "wide.ckpt"))

        killed: list[float] = []

        def hook(est, state, history, converged):
            if len(history) == 1:
                def kill():
                    os.kill(pids[1], signal.SIGKILL)
                    killed.append(time.perf_counter())
                threading.Timer(0.3, kill).start()

        tic = time.perf_counter()
        with epoch_hook(hook):
            survived = fit()
        total_kill = time.perf_counter() - tic
        assert killed, "the worker was not killed"
        same = bool(np.array_equal(survived.coef_, plain.coef_))
        total_plain = sum(h["seconds"] for h in plain.history_)
        killed_epoch = survived.history_[1]["seconds"]
        after = statistics.median(h["seconds"] for h in survived.history_[2:])
    finally:
        _stop_cluster(run_dir)

    ckpt_cost = f"{epoch_ckpt:.3f} s ({(epoch_ckpt / epoch_plain - 1) * 100:+.1f}%)"
    write_cost = f"{write_s * 1000:.1f} ms = {write_s / epoch_plain * 100:.2f}% of an epoch"
    body = f"""
Dataset: {ds.n_samples:,} x {ds.n_features} float32, {ds.n_chunks} chunks; scheduler + 2 worker
processes (1 thread, 2 GiB) from `cluster/local/start-cluster.sh`; {args.epochs} epochs, 2 streams.

| checkpoint cost | value |
|---|---|
| median epoch, no checkpoint | {epoch_plain:.3f} s |
| median epoch, checkpoint every epoch | {ckpt_cost} |
| one checkpoint write ({size / 1024:.1f} KiB) | {write_cost} |
| one checkpoint write, 10 classes x 1M features ({wide_size / 2**20:.0f} MiB) | {wide_s:.2f} s |

| one worker SIGKILLed 0.3 s into epoch 2 | value |
|---|---|
| epoch 2, undisturbed | {plain.history_[1]['seconds']:.3f} s |
| epoch 2, with the kill (lost tasks re-run on the survivor) | {killed_epoch:.3f} s |
| time lost in that epoch | {killed_epoch - plain.history_[1]['seconds']:.3f} s |
| later epochs on the one survivor (median) | {after:.3f} s |
| whole fit: undisturbed / with the kill | {total_plain:.2f} s / {total_kill:.2f} s |
| model identical to the undisturbed fit | {same} |

The checkpoint-every-epoch row compares two separate fits, so on this shared VM its difference is
within run-to-run noise; the direct write time is the figure to read.
"""
    print(body)
    write_section("resilience", body,
                  f"python -m benchmarks.bench_resilience --rows {args.rows} "
                  f"--features {args.features} --epochs {args.epochs}")


if __name__ == "__main__":
    main()
