"""Order-robust streaming (#13 item 1): data stored sorted by label or by time, trained with
default settings, against the same rows stored shuffled and against one chunk at a time.

Every fit: ``SVMClassifier(solver="pegasos")``, otherwise default settings (hinge,
alpha=1e-4, the default ``shuffle_window``) on a 2-worker LocalCluster (2 streams, or 1 where
a class sits in too few chunks for 2: ``dsvm.training.streams``), 10 epochs (``tol=None`` so
every fit runs all 10), seeds 0 and 1; test accuracy on the held-out file.
The solver is named because the default (``"auto"``) picks CoCoA+ for these fits, whose
rounds do not visit rows in the window order that this benchmark is about.

* a9a sorted by label (all -1 rows, then all +1), converted without shuffle into 2,000-row
  chunks; the shuffled conversion of the same file (``shuffle=True``); the sorted store with
  ``shuffle_window=1`` (each chunk on its own, dsvm before 0.2).
* w8a as distributed (its positives sit together: 1,260 in the first 2,000-row chunk, 219 in
  the second, so the default fit takes one stream) in 2,000-row chunks, against its shuffled
  conversion and ``shuffle_window=1``.
* skin as distributed: UCI's skin segmentation file (B, G, R in 0-255, labels 1 = skin and
  2 = not; its rows sorted by label), 80% of its rows in their stored order converted with the
  converter's default chunks (4, the skin class all in the first), against the shuffled
  conversion; the other 20% (a seeded draw) are the test set. Default streams: the fit trains
  this store on one stream (``dsvm.training.streams``), and on 2 with ``n_streams=2``.
* drift: a generated time-ordered stream (60,000 rows, 20 standard-normal features, labels
  sign(x . w(t) + 0.3 e) where w(t) turns by 90 degrees over the rows, and a class share drifting
  from 25% to 75% positives through the intercept); test set: 20,000 rows with t uniform over
  the whole period. Stored in time order in 2,000-row chunks, against its shuffled conversion.
* large chunks: a generated dense set (2,097,152 x 20 float32, labels sign(x . w / sqrt(20)
  + 0.5 e - 0.7), about 27% positives), sorted by label and stored in 262,144-row chunks, so
  that a window's runs are 512 rows (2,000-row chunks keep them at 4: every chunk keeps
  ``MIN_CHUNK_RUNS`` runs); test set: 200,000 rows of the same law. Its positives fill about 2
  of the 8 chunks, so the default fit takes one stream. Against its shuffled
  conversion and ``shuffle_window=1``.
* cost: a dense synthetic dataset (1,000,000 x 50 float32, 50,000-row chunks, 200 MB), 5 epochs
  with the default window and with ``shuffle_window=1``, alternated over 7 rounds on fresh workers;
  a fit's epoch rate is the median of its epochs after the first (which compiles). Peak RSS
  per worker (VmHWM, which only grows) after the first fit one chunk at a time, then after the
  first fit with the default window.

    python -m benchmarks.bench_order
"""

from __future__ import annotations

import lzma
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import WORK, worker_peak_rss, write_section
from benchmarks.bench_accuracy import DATA, SETS

EPOCHS = 10
SEEDS = (0, 1)
CHUNK_ROWS = 2000
LARGE_ROWS = 1 << 21
LARGE_CHUNK_ROWS = 262_144
ROUNDS = 7  # side-by-side rounds of the cost measurement (3 moved by +-15% between runs)


def load_file(rel: str, n_features: int):
    from sklearn.datasets import load_svmlight_file

    with lzma.open(DATA / rel) as f:
        return load_svmlight_file(f, n_features=n_features)


def label_sorted_file(name: str, tmp: Path) -> Path:
    """The training file of ``name`` with its rows sorted by label (stable: -1 rows first)."""
    from sklearn.datasets import dump_svmlight_file

    X, y = load_file(SETS[name][0], SETS[name][2])
    order = np.argsort(y, kind="stable")
    path = tmp / f"{name}-sorted.svm"
    dump_svmlight_file(X[order], y[order], str(path), zero_based=False)
    return path


def drift_rows(n: int, t: np.ndarray, seed: int, d: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Rows at times ``t`` in [0, 1]: the separating direction turns by 90 degrees from e0 to e1
    over the period, the intercept moves the positive share from about 25% to 75%."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    angle = 0.5 * np.pi * t
    score = np.cos(angle) * X[:, 0] + np.sin(angle) * X[:, 1] + 0.3 * X[:, 2:].mean(axis=1) \
        + 1.35 * (t - 0.5) + 0.3 * rng.standard_normal(n)
    return X, np.where(score > 0, 1.0, -1.0)


def accuracy_rows(client, label: str, stores: dict, test,
                  streams: dict | None = None) -> tuple[list[str], dict]:
    """One table row per (store, window); the mean test accuracy of each over the seeds
    (``streams``: the rows fitted with ``n_streams`` given, else the default)."""
    import dsvm

    rows, means = [], {}
    for what, (store, window) in stores.items():
        accs, secs = [], []
        for seed in SEEDS:
            clf = dsvm.SVMClassifier(client=client, solver="pegasos", max_epochs=EPOCHS,
                                     tol=None, random_state=seed, shuffle_window=window,
                                     n_streams=(streams or {}).get(what))
            tic = time.perf_counter()
            clf.fit(store)
            secs.append(time.perf_counter() - tic)
            accs.append(clf.score(*test))
        means[what] = float(np.mean(accs))
        rows.append(f"| {label} | {what} | {'default' if window is None else window} | "
                    + " / ".join(f"{a:.2%}" for a in accs) + f" | {means[what]:.2%} | "
                    f"{np.mean(secs):.1f} |")
        print(rows[-1], flush=True)
    return rows, means


def verdict(label: str, means: dict, robust: str, reference: str) -> str:
    gap = 100 * (means[reference] - means[robust])
    return (f"{label}: {robust} {means[robust]:.2%} vs {reference} {means[reference]:.2%}: gap "
            f"{gap:+.2f} points ({'met' if gap <= 0.5 else 'not met'}: within 0.5)")


def real_data(client, tmp: Path) -> tuple[list[str], list[str]]:
    import dsvm

    rows, verdicts = [], []
    for name, how in (("a9a", "sorted by label"), ("w8a", "as distributed")):
        src = label_sorted_file(name, tmp) if name == "a9a" else DATA / SETS[name][0]
        d = SETS[name][2]
        ordered = dsvm.convert(src, tmp / f"{name}.zarr", n_features=d, chunk_rows=CHUNK_ROWS)
        shuffled = dsvm.convert(src, tmp / f"{name}-shuffled.zarr", n_features=d,
                                chunk_rows=CHUNK_ROWS, shuffle=True, seed=0)
        test = load_file(SETS[name][1], d)
        stores = {how: (ordered, None), "shuffled conversion": (shuffled, None),
                  f"{how}, one chunk at a time": (ordered, 1)}
        r, means = accuracy_rows(client, name, stores, test)
        rows += r
        verdicts.append(verdict(name, means, how, "shuffled conversion"))
    return rows, verdicts


def skin_files(tmp: Path) -> tuple[Path, tuple[np.ndarray, np.ndarray]]:
    """The skin file's training rows (80%, in the file's order) as TSV, and the test rows."""
    with lzma.open(DATA / "skin_nonskin" / "Skin_NonSkin.txt.xz") as f:
        rows = np.loadtxt(f)
    test = np.random.default_rng(0).permutation(len(rows))[: len(rows) // 5]
    train = np.setdiff1d(np.arange(len(rows)), test)  # (sorted: the file's order)
    path = tmp / "skin-train.tsv"
    np.savetxt(path, rows[train], fmt="%d", delimiter="\t")
    return path, (rows[test, :3], rows[test, 3])


def skin(client, tmp: Path) -> tuple[list[str], list[str]]:
    import dsvm

    src, test = skin_files(tmp)
    kw = dict(format="csv", label_column=3)
    ordered = dsvm.convert(src, tmp / "skin.zarr", **kw)
    shuffled = dsvm.convert(src, tmp / "skin-shuffled.zarr", shuffle=True, seed=0, **kw)
    how = f"as distributed ({ordered.n_chunks} chunks)"
    stores = {how: (ordered, None), "shuffled conversion": (shuffled, None),
              f"{how}, n_streams=2": (ordered, None)}
    rows, means = accuracy_rows(client, "skin", stores, test,
                                streams={f"{how}, n_streams=2": 2})
    return rows, [verdict("skin", means, how, "shuffled conversion")]


def drift(client, tmp: Path) -> tuple[list[str], list[str]]:
    import dsvm

    n = 60_000
    X, y = drift_rows(n, np.linspace(0.0, 1.0, n), seed=0)
    np.savez(tmp / "drift.npz", X=X, y=y)
    ordered = dsvm.convert(tmp / "drift.npz", tmp / "drift.zarr", chunk_rows=CHUNK_ROWS)
    shuffled = dsvm.convert(tmp / "drift.npz", tmp / "drift-shuffled.zarr",
                            chunk_rows=CHUNK_ROWS, shuffle=True, seed=0)
    test = drift_rows(20_000, np.random.default_rng(2).uniform(size=20_000), seed=1)
    stores = {"time order": (ordered, None), "shuffled conversion": (shuffled, None),
              "time order, one chunk at a time": (ordered, 1)}
    rows, means = accuracy_rows(client, "drift", stores, test)
    return rows, [verdict("drift", means, "time order", "shuffled conversion")]


def large_rows(n: int, seed: int, d: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the large-chunk set: a fixed teacher (its own seed), noise and an offset that
    leaves about 27% positives."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    teacher = np.random.default_rng(99).standard_normal(d)
    score = X @ teacher / np.sqrt(d) + 0.5 * rng.standard_normal(n) - 0.7
    return X, np.where(score > 0, 1.0, -1.0)


def large_chunks(client, tmp: Path) -> tuple[list[str], list[str]]:
    """The large-chunk set sorted by label, so that its windows have runs of 512 rows."""
    import dsvm
    from dsvm.data.order import run_rows

    X, y = large_rows(LARGE_ROWS, seed=0)
    order = np.argsort(y, kind="stable")
    np.savez(tmp / "large.npz", X=X[order], y=y[order])
    ordered = dsvm.convert(tmp / "large.npz", tmp / "large.zarr", chunk_rows=LARGE_CHUNK_ROWS)
    shuffled = dsvm.convert(tmp / "large.npz", tmp / "large-shuffled.zarr",
                            chunk_rows=LARGE_CHUNK_ROWS, shuffle=True, seed=0)
    test = large_rows(200_000, seed=1)
    how = f"sorted by label, {LARGE_CHUNK_ROWS:,}-row chunks"
    stores = {how: (ordered, None), "shuffled conversion": (shuffled, None),
              f"{how}, one chunk at a time": (ordered, 1)}
    rows, means = accuracy_rows(client, "large", stores, test)
    window = min(8, ordered.n_chunks // 2)  # the default window of each of the 2 streams
    runs = run_rows(X.shape[1] * X.itemsize, [LARGE_CHUNK_ROWS] * window)
    return rows, [verdict("large", means, how, "shuffled conversion")
                  + f" (runs of {runs} stored rows)"]


def cost(tmp: Path, n_rows: int = 1_000_000, d: int = 50) -> tuple[list[str], list[str]]:
    """On fresh workers: one chunk at a time first, so that the peak RSS after the first fit
    with the default window shows what the window adds (VmHWM only grows)."""
    from distributed import Client, LocalCluster

    import dsvm
    from dsvm.training.window import dataset_window

    ds = dsvm.write_synthetic(tmp / "cost.zarr", n_rows, d, dtype="float32", seed=0,
                              chunk_rows=50_000)
    default = dataset_window(ds).chunks
    rates: dict[int, list[float]] = {default: [], 1: []}
    peaks: dict[int, int] = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                      memory_limit="3GiB") as cluster, Client(cluster) as client:
        for _ in range(ROUNDS):
            for window in (1, default):
                clf = dsvm.SVMClassifier(client=client, solver="pegasos", max_epochs=5,
                                         tol=None, random_state=0, shuffle_window=window).fit(ds)
                rates[window].append(
                    float(np.median([h["rows_per_s"] for h in clf.history_[1:]])))
                peaks.setdefault(window, max(worker_peak_rss(client).values()))
    # one ratio per round (the two fits side by side), the median over the rounds
    ratio = float(np.median(np.array(rates[default]) / np.array(rates[1])))
    rows = [f"| {w} ({'default' if w == default else 'one chunk at a time'}) | "
            + " / ".join(f"{r / 1e6:.2f}" for r in rates[w])
            + f" | {peaks[w] / 2**20:.0f} |" for w in (default, 1)]
    for r in rows:
        print(r, flush=True)
    return rows, [f"cost ({n_rows:,} x {d} float32, {ds.n_chunks} chunks of 50,000 rows, "
                  f"{ds.nbytes / 2**20:.0f} MB): the default window ({default} chunks) runs an "
                  f"epoch at {ratio:.2f}x the rate of one chunk at a time (median of {ROUNDS} "
                  f"side-by-side rounds; target: at most 5% slower: "
                  f"{'met' if ratio >= 0.95 else 'not met'}); peak RSS per worker "
                  f"{peaks[default] / 2**20:.0f} vs {peaks[1] / 2**20:.0f} MiB"]


def warm_up(client, tmp: Path) -> None:
    """One short fit, so that no timed fit pays the workers' kernel compilation."""
    import dsvm

    X, y = drift_rows(4000, np.linspace(0.0, 1.0, 4000), seed=3)
    dsvm.SVMClassifier(client=client, solver="pegasos", max_epochs=2, tol=None).fit(
        dsvm.write_arrays(tmp / "warm.zarr", X, y, chunk_rows=CHUNK_ROWS))


def main(argv: list[str]) -> None:
    from distributed import Client, LocalCluster

    WORK.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=WORK) as tmp, LocalCluster(
        n_workers=2, threads_per_worker=1, dashboard_address=None, memory_limit="3GiB"
    ) as cluster, Client(cluster) as client:
        tmp = Path(tmp)
        warm_up(client, tmp)
        acc_rows, verdicts = real_data(client, tmp)
        for part in (skin, drift, large_chunks):
            r, v = part(client, tmp)
            acc_rows += r
            verdicts += v
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        cost_rows, v = cost(Path(tmp))
        verdicts += v
    body = "\n".join([
        __doc__.split("\n\n")[1].replace("\n", " "),
        "",
        __doc__.split("\n\n")[2],
        "",
        "| data | stored | shuffle_window | test accuracy (seed 0 / 1) | mean | seconds per fit |",
        "|---|---|---|---|---|---|",
        *acc_rows,
        "",
        "| shuffle_window | epoch rate per round, M rows/s (median of epochs 2-5) | "
        "peak RSS per worker MiB |",
        "|---|---|---|",
        *cost_rows,
        "",
        *[f"- {v}" for v in verdicts],
    ])
    print(body)
    if "--no-write" not in argv:
        write_section("Order-robust streaming (#13 item 1)", body,
                      "python -m benchmarks.bench_order")


if __name__ == "__main__":
    main(sys.argv[1:])
