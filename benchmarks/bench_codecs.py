"""Codecs and the read path (#12 item 5): which compressor a dataset should be written with, what
zarr costs per chunk, and whether reading hides behind training.

For every dataset and codec (``none``, ``blosc-lz4`` — the default until this measurement —
and ``zstd`` level 1), all measured side by side in one run, page cache warm:

* size: bytes on disk, and the ratio uncompressed / on disk;
* read: every chunk read with ``Dataset.read_chunk`` one after the other in this process (no
  prefetch), best of 3 passes: uncompressed MB per second of wall time, and per CPU second of
  the process (all its threads: zarr hands file reads and decoding to worker threads), i.e.
  per core;
* per-chunk overhead: a tiny chunk (16 rows) read by ``read_chunk`` (the chunk's arrays in one
  trip to zarr's event loop), by one synchronous zarr read per array (dsvm before), and as the
  raw chunk files only (open + read, no decode), median of 300;
* cluster (the generated dense set): on a LocalCluster of 2 worker processes x 1 thread, a
  pegasos epoch (median of epochs 2-5) against the same workers only reading the same chunks
  with the same streams and prefetch (``bench_speed``'s read-only epoch, median of 4); the
  issue's target is >= 0.85x;
* overlap (generated sets): one stream in this process run as a worker runs it
  (``StreamPass``, pegasos, the next chunk read by the prefetch thread) against reading only and
  the pass only (chunks already in memory): with a free second core, full overlap costs
  max(read, pass), none read + pass.

Data: a9a (sparse, and forced dense), w8a (sparse), ijcnn1 (dense), reuters (sparse tf-idf) from
../shared/data, converted with default chunking; generated: 2,000,000 x 100 float32 standard
normals (65,536-row chunks) and 200,000 x 2^20 CSR with 40 signed-one values per row (hashed
features; 20,000-row chunks).

    python -m benchmarks.bench_codecs [--quick] [--no-write]
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import WORK, write_section
from benchmarks.bench_accuracy import DATA
from benchmarks.bench_speed import _read_stream

CODECS = ("none", "blosc-lz4", "zstd")  # "auto" (the default) writes one of the first two
# label -> (file under shared/data, n_features, layout)
REAL = {
    "a9a": ("a9a/a9a.xz", 123, "sparse"),
    "a9a (dense)": ("a9a/a9a.xz", 123, "dense"),
    "w8a": ("w8a/w8a.xz", 300, "sparse"),
    "ijcnn1": ("ijcnn1/ijcnn1.tr.xz", 22, "auto"),
    "reuters": ("reuters_lasvm/reuters.trn.bz2", 8315, "sparse"),
}


def disk_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def read_rates(ds: Any, repeat: int = 3) -> tuple[float, float]:
    """(MB/s of wall time, MB per CPU second) reading every chunk in turn; best of ``repeat``."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(ds.n_chunks):
            ds.read_chunk(i)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    mb = ds.nbytes / 1e6
    return mb / min(walls), mb / max(min(cpus), 1e-9)


def write_generated(tmp: Path, codec: str, quick: bool) -> dict[str, Any]:
    import scipy.sparse as sp

    import dsvm

    n_dense = 200_000 if quick else 2_000_000  # bench_speed's size
    dense = dsvm.write_synthetic(tmp / f"gen-dense-{codec}.zarr", n_dense, 100, seed=0,
                                 chunk_rows=65536, codec=codec)
    n, d, k = (40_000 if quick else 200_000), 2**20, 40
    rng = np.random.default_rng(0)
    indices = np.sort(rng.integers(0, d, size=(n, k), dtype=np.int64), axis=1)
    data = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=n * k)
    X = sp.csr_matrix((data, indices.ravel(), np.arange(0, n * k + 1, k)), shape=(n, d))
    y = np.where(X @ rng.standard_normal(d) > 0, 1.0, -1.0)
    sparse = dsvm.write_arrays(tmp / f"gen-sparse-{codec}.zarr", X, y, layout="sparse",
                               chunk_rows=20_000, codec=codec)
    return {f"generated {n_dense:,} x 100 dense": dense,
            f"generated {n:,} x 2^20 sparse": sparse}


def write_all(tmp: Path, quick: bool) -> dict[str, dict[str, Any]]:
    """label -> codec -> Dataset, for the real and generated sets."""
    import dsvm

    out: dict[str, dict[str, Any]] = {}
    for codec in CODECS:
        for label, (rel, d, layout) in REAL.items():
            name = label.replace(" ", "").replace("(", "-").replace(")", "")
            out.setdefault(label, {})[codec] = dsvm.convert(
                DATA / rel, tmp / f"{name}-{codec}.zarr", n_features=d, layout=layout,
                codec=codec)
        for label, ds in write_generated(tmp, codec, quick).items():
            out.setdefault(label, {})[codec] = ds
    return out


def auto_pick(ds: Any) -> str:
    """What ``codec="auto"`` (the default) writes this data with (from its first chunk)."""
    from dsvm.data.attrs import choose_codec

    first = ds.read_chunk(0)
    return choose_codec("auto", [first.data, first.indices] if ds.layout == "sparse"
                        else [first.X])


def size_and_read(stores: dict[str, dict[str, Any]]) -> list[str]:
    rows = []
    for label, by_codec in stores.items():
        picked = auto_pick(by_codec["none"])
        for codec, ds in by_codec.items():
            disk = disk_bytes(Path(ds.url))
            wall, cpu = read_rates(ds)
            rows.append(f"| {label} | {ds.layout} | {ds.n_chunks} | {codec} | "
                        f"{ds.nbytes / 1e6:,.1f} | {disk / 1e6:,.1f} | {ds.nbytes / disk:.2f} | "
                        f"{wall:,.0f} | {cpu:,.0f} | {'auto' if codec == picked else ''} |")
            print(rows[-1], flush=True)
    return rows


def _median_us(fn: Any, n: int = 300) -> float:
    times = []
    for _ in range(n):
        tic = time.perf_counter()
        fn()
        times.append(time.perf_counter() - tic)
    return 1e6 * statistics.median(times)


def _raw_files(ds: Any, names: list[str], chunk: int) -> list[str]:
    """The files of zarr chunk ``chunk`` of each 1-D/row-chunked array (tiny sets: all of a
    sparse chunk's values sit in zarr chunk 0 of data/indices)."""
    root = Path(ds.url)
    out = []
    for name in names:
        key = {"X": f"c/{chunk}/0", "X/indices": "c/0", "X/data": "c/0"}.get(name, f"c/{chunk}")
        out.append(str(root / name / key))
    return out


def chunk_overhead(tmp: Path) -> list[str]:
    """Per-chunk cost on 16-row chunks: read_chunk, one zarr read per array, raw files."""
    import scipy.sparse as sp

    import dsvm

    rng = np.random.default_rng(1)
    X = rng.standard_normal((64, 2)).astype(np.float32)
    Xs = sp.random(64, 1000, density=0.003, format="csr", random_state=1, dtype=np.float32)
    y = np.where(rng.random(64) < 0.5, 1.0, -1.0)
    rows = []
    for layout, data in (("dense", X), ("sparse", Xs)):
        for codec in CODECS:
            ds = dsvm.write_arrays(tmp / f"tiny-{layout}-{codec}.zarr", data, y, chunk_rows=16,
                                   layout=layout, codec=codec)
            h = ds._open()
            names = ["y", "X"] if layout == "dense" else ["y", "X/indptr", "X/indices", "X/data"]
            sels = {"y": slice(16, 32), "X": slice(16, 32), "X/indptr": slice(16, 32),
                    "X/indices": slice(*ds.chunk_nnz_starts[1:3]) if layout == "sparse" else None,
                    "X/data": slice(*ds.chunk_nnz_starts[1:3]) if layout == "sparse" else None}
            files = _raw_files(ds, names, 1)

            def raw(files: list[str] = files) -> None:
                for f in files:
                    with open(f, "rb") as fh:
                        fh.read()

            def one_by_one(h: Any = h, names: list[str] = names, sels: dict = sels) -> None:
                for name in names:
                    np.asarray(h[name][sels[name]])

            ds.read_chunk(1)
            t_new = _median_us(lambda ds=ds: ds.read_chunk(1))
            t_old, t_raw = _median_us(one_by_one), _median_us(raw)
            rows.append(f"| {layout} | {codec} | {len(names)} | {t_new:,.0f} | {t_old:,.0f} | "
                        f"{t_raw:,.0f} |")
            print(rows[-1], flush=True)
    return rows


def _fit_rate(client: Any, ds: Any, epochs: int = 5) -> float:
    import dsvm

    clf = dsvm.SVMClassifier(alpha=1e-5, max_epochs=epochs, tol=None, random_state=0,
                             client=client).fit(ds)
    return float(np.median([h["rows_per_s"] for h in clf.history_[1:]]))


def _read_rate(client: Any, ds: Any, n_streams: int, epochs: int = 4) -> float:
    from dsvm.data.order import deal_chunks, epoch_chunk_order

    rates = []
    for epoch in range(epochs + 1):
        streams = deal_chunks(epoch_chunk_order(0, epoch, ds.n_chunks), n_streams)
        tic = time.perf_counter()
        futs = [client.submit(_read_stream, ds, s, pure=False) for s in streams]
        assert sum(client.gather(futs)) == ds.n_samples
        rates.append(ds.n_samples / (time.perf_counter() - tic))
    return float(np.median(rates[1:]))  # the first warms the workers' handles and page cache


def cluster(stores: dict[str, dict[str, Any]], labels: list[str], n_workers: int,
            rounds: int) -> dict[tuple[str, str], tuple[list[float], list[float]]]:
    """(label, codec) -> (epoch rows/s per round, read-only rows/s per round), the codecs
    alternated within each round on the same workers."""
    from distributed import Client, LocalCluster

    out: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit="4GiB") as lc, Client(lc) as client:
        _fit_rate(client, stores[labels[0]][CODECS[0]], epochs=2)  # the workers compile
        tiny = stores["tiny"]["none"]  # 2 chunks of 1,000 rows: an epoch's fixed cost
        out[("tiny", "none")] = ([_fit_rate(client, tiny, epochs=6)], [_read_rate(client, tiny, 2)])
        for _ in range(rounds):
            for label in labels:
                for codec in CODECS:
                    ds = stores[label][codec]
                    fits, reads = out.setdefault((label, codec), ([], []))
                    fits.append(_fit_rate(client, ds))
                    reads.append(_read_rate(client, ds, n_workers))
                    print(f"{n_workers} worker(s) {label} {codec}: epoch {fits[-1]:,.0f} rows/s, "
                          f"read-only {reads[-1]:,.0f} rows/s", flush=True)
    return out


class _InMemory:
    """A source whose chunks are already in memory: the pass without any reading."""

    def __init__(self, ds: Any) -> None:
        self.blocks = [ds.read_chunk(i) for i in range(ds.n_chunks)]
        self.n_features = ds.n_features

    def read_chunk(self, i: int) -> Any:
        return self.blocks[i]

    def describe(self) -> str:
        return "in memory"


def overlap(ds: Any, repeat: int = 5) -> tuple[float, ...]:
    """Seconds (best of ``repeat``) of one stream over every chunk in this process, as a worker
    runs it (``StreamPass``: pegasos, the next chunk read by the prefetch thread): reading only,
    the pass only (chunks already in memory), and both. With a free second core, full overlap
    gives max(read, pass), none read + pass."""
    from dsvm.combine import combiner_for
    from dsvm.data.sources import DatasetSource
    from dsvm.engine.tasks import EpochStart, StreamPass, iter_chunks
    from dsvm.solvers.registry import make_solver
    from dsvm.training.window import dataset_window

    solver = make_solver("pegasos", alpha=1e-5)
    start = EpochStart(solver.init_state(ds.n_features, 1, ds.dtype), None, "iterate")
    stream = StreamPass(solver, combiner_for(solver), np.array([-1.0, 1.0]), epoch=0, seed=0)

    def task(source: Any, chunk_ids: list[int], stream: Any = stream) -> Any:
        return stream(source, chunk_ids, start)
    ids = list(range(ds.n_chunks))
    memory = _InMemory(ds)
    task(memory, ids[:1])  # compiles

    def timed(fn: Any) -> float:
        return min(_seconds(fn) for _ in range(repeat))

    read = timed(lambda: sum(1 for _ in iter_chunks(ds, ids)))
    alone = timed(lambda: task(memory, ids))
    both = timed(lambda: task(DatasetSource(ds), ids))
    # the default shuffle window (a fit's default): k chunks' rows interleaved, k read ahead
    k = dataset_window(ds).chunks
    windowed = functools.partial(task, stream=dataclasses.replace(stream, window=k))
    windowed(memory, ids[:1])
    w_alone = timed(lambda: windowed(memory, ids))
    w_both = timed(lambda: windowed(DatasetSource(ds), ids))
    return read, alone, both, float(k), w_alone, w_both


def _seconds(fn: Any) -> float:
    tic = time.perf_counter()
    fn()
    return time.perf_counter() - tic


def cluster_rows(two: dict, n_rows: dict[str, int]) -> tuple[list[str], list[str]]:
    rows, verdicts = [], []
    for (label, codec), (fits, reads) in two.items():
        ratio = float(np.median(np.array(fits) / np.array(reads)))
        fit, read = float(np.median(fits)), float(np.median(reads))
        n = n_rows[label]
        rows.append(f"| {label} | {codec} | {fit / 1e6:.2f} | {read / 1e6:.2f} | **{ratio:.2f}** | "
                    f"{n / fit:.3f} | {n / read:.3f} | {n / fit - n / read:.3f} |")
        if label == "tiny":
            continue
        verdicts.append(f"{label}, {codec}: epoch / read-only on 2 workers = {ratio:.2f} "
                        f"({'met' if ratio >= 0.85 else 'not met'}: target >= 0.85)")
    return rows, verdicts


def overlap_rows(results: dict[tuple[str, str], tuple[float, ...]]) -> list[str]:
    rows = []
    for (label, codec), (read, alone, both, k, w_alone, w_both) in results.items():
        hidden = (read + alone - both) / min(read, alone)
        rows.append(f"| {label} | {codec} | {read:.3f} | {alone:.3f} | {both:.3f} | "
                    f"{max(read, alone):.3f} | {read + alone:.3f} | {hidden:.0%} | {k:.0f} | "
                    f"{w_alone:.3f} | {w_both:.3f} |")
        print(rows[-1], flush=True)
    return rows


def render(size_rows: list[str], overhead_rows: list[str], c_rows: list[str],
           o_rows: list[str], verdicts: list[str], rounds: int) -> str:
    intro = __doc__.split("\n\n")
    return "\n".join([
        " ".join(intro[0].split()), "", intro[1], "", intro[2], "",
        "| data | layout | chunks | codec | MB uncompressed | MB on disk | ratio | "
        "read MB/s (wall) | read MB per CPU s | default (auto) picks |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *size_rows,
        "",
        "Per-chunk overhead, 16-row chunks (microseconds, median of 300):",
        "",
        "| layout | codec | arrays | read_chunk (gathered) | one zarr read per array | "
        "raw files only |",
        "|---|---|---|---|---|---|",
        *overhead_rows,
        "",
        f"Cluster, 2 workers (M rows/s and seconds per epoch; medians over {rounds} side-by-side "
        "rounds; 'tiny': 2 chunks of 1,000 rows, one round, the fixed cost of an epoch):",
        "",
        "| data | codec | epoch | read-only | epoch / read-only | s/epoch | s/read-only epoch | "
        "difference |",
        "|---|---|---|---|---|---|---|---|",
        *c_rows,
        "",
        "Overlap, one stream in this process (seconds, best of 5; 'hidden': (read + pass - "
        "both) / min(read, pass), 100% = the shorter one entirely hidden):",
        "",
        "| data | codec | read only | pass only | read + pass (prefetch) | max | sum | hidden | "
        "default window k | pass only, window k | read + pass, window k |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *o_rows,
        "",
        *[f"- {v}" for v in verdicts],
    ])


def main(argv: list[str]) -> None:
    import dsvm

    quick = "--quick" in argv
    rounds = 1 if quick else 2
    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=WORK) as tmp_name:
        tmp = Path(tmp_name)
        stores = write_all(tmp, quick)
        size_rows = size_and_read(stores)
        overhead_rows = chunk_overhead(tmp)
        generated = [label for label in stores if label.startswith("generated") and
                     label.endswith("dense")]
        stores["tiny"] = {"none": dsvm.write_synthetic(tmp / "tiny.zarr", 2000, 100,
                                                       chunk_rows=1000, codec="none")}
        two = cluster(stores, generated, 2, rounds)
        del stores["tiny"]
        o_rows = overlap_rows({(label, codec): overlap(ds) for label, by_codec in stores.items()
                               if label.startswith("generated") for codec, ds in by_codec.items()})
        n_rows = {label: stores[label]["none"].n_samples for label in generated} | {"tiny": 2000}
    c_rows, verdicts = cluster_rows(two, n_rows)
    body = render(size_rows, overhead_rows, c_rows, o_rows, verdicts, rounds)
    print(body)
    if "--no-write" not in argv:
        write_section("Codecs and the read path (#12 item 5)", body,
                      "python -m benchmarks.bench_codecs" + (" --quick" if quick else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
