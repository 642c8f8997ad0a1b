"""The passes around the epochs, side by side with the way they worked before (#25, #28).

A fit reads its data for more than its epochs: column statistics for the scaling (in-memory
rows and Dask inputs; a dataset keeps them), and an evaluation pass for the model it
publishes. Each of these had a cost that grew with the feature count per chunk, and Dask
arrays held by the cluster cost a scheduler round trip per chunk. Every row times the way
it is done now against the way it was done before, in one run, the older way still callable:

* column statistics of CSR chunks: each chunk's :func:`dsvm.data.stats.block_stats` (four
  arrays of the feature count) merged in turn, against :class:`dsvm.data.stats.StatsAdder`
  (in place; the same bits, checked here);
* an evaluation block's decision values: one product for the loss and one for the accuracy,
  the touched columns found by ``np.unique``, against one product and the columns marked;
* a window of 8 chunks of a persisted dask array read in a task: one compute and gather per
  chunk against one for the window (a LocalCluster of 2 worker processes).

    python -m benchmarks.bench_side_passes [--repeat 5] [--no-write]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from benchmarks._common import best_of, write_section

D = 2 ** 22


def zipf_chunk(rows: int, per_row: int, rng: np.random.Generator) -> sp.csr_matrix:
    """Rows of ``per_row`` Zipf(1.3) feature ids over 2^22 columns (a skewed, hashed shape)."""
    n = rows * per_row
    idx = np.sort((rng.zipf(1.3, n) % D).reshape(rows, per_row), axis=1)
    return sp.csr_matrix((rng.standard_normal(n).astype(np.float32),
                          idx.ravel().astype(np.int32), np.arange(0, n + 1, per_row)),
                         shape=(rows, D))


def column_stats_rows(repeat: int) -> list[str]:
    from dsvm.data.blocks import block_from_arrays
    from dsvm.data.stats import StatsAdder, block_stats, merge_stats

    rng = np.random.default_rng(0)
    blocks = [block_from_arrays(zipf_chunk(58_000, 8, rng), rng.integers(0, 2, 58_000))
              for _ in range(7)]

    def before() -> Any:
        return merge_stats([block_stats(i, b) for i, b in enumerate(blocks)])

    def now() -> Any:
        adder = StatsAdder()
        for i, b in enumerate(blocks):
            adder.add(i, b)
        return adder.stats

    old, new = before(), now()
    same = all(np.array_equal(getattr(old, f), getattr(new, f))
               for f in ("max_abs", "stored_count", "stored_sum_sq", "stored_sum"))
    t_old, t_new = best_of(before, repeat), best_of(now, repeat)
    return [f"| column statistics, 7 CSR chunks of 58,000 rows x 8 Zipf ids, 2^22 columns | "
            f"{t_old:.3f} | {t_new:.3f} | {t_old / t_new:.1f}x | "
            f"{'bit for bit' if same else 'DIFFERENT'} |"]


def evaluation_rows(repeat: int) -> list[str]:
    from dsvm.data.blocks import block_from_arrays
    from dsvm.solvers.objective import accuracy_counts, loss_block

    rng = np.random.default_rng(1)
    X = zipf_chunk(65_536, 8, rng)
    codes = rng.integers(0, 2, X.shape[0])
    block = block_from_arrays(X, codes.astype(np.float64))
    coef = rng.standard_normal((1, D)).astype(np.float32)
    b = np.zeros(1)

    def decisions_by_sort() -> np.ndarray:  # the cut before: the columns from a sort
        cols, inverse = np.unique(X.indices, return_inverse=True)
        cut = sp.csr_matrix((X.data, inverse.reshape(-1), X.indptr), shape=(X.shape[0], cols.size))
        return np.asarray(cut @ coef[:, cols].astype(np.float64).T) + b

    def before() -> Any:  # two products, each cut by a sort
        return (loss_block(coef, b, block, codes, "hinge", decisions=decisions_by_sort()),
                accuracy_counts(coef, b, block, codes, decisions=decisions_by_sort()))

    def now() -> Any:
        from dsvm.solvers.objective import decision_block

        P = decision_block(coef, b, block)
        return (loss_block(coef, b, block, codes, "hinge", decisions=P),
                accuracy_counts(coef, b, block, codes, decisions=P))

    same = before() == now()
    t_old, t_new = best_of(before, repeat), best_of(now, repeat)
    return [f"| evaluation of a block of 65,536 rows x 8 Zipf ids, 2^22 columns (loss and "
            f"accuracy) | {t_old:.3f} | {t_new:.3f} | {t_old / t_new:.1f}x | "
            f"{'the same sums' if same else 'DIFFERENT'} |"]


def _per_chunk(source: Any, ids: list[int]) -> float:
    tic = time.perf_counter()
    for i in ids:
        source.read_chunks([i])
    return time.perf_counter() - tic


def _window(source: Any, ids: list[int]) -> float:
    tic = time.perf_counter()
    source.read_chunks(ids)
    return time.perf_counter() - tic


def dask_window_rows(repeat: int) -> list[str]:
    import dask.array as da
    from distributed import Client, LocalCluster

    from dsvm.distributed.dask_source import DaskSource

    rng = np.random.default_rng(2)
    X = rng.standard_normal((8 * 4096, 100)).astype(np.float32)
    y = rng.integers(0, 2, X.shape[0]).astype(np.float64)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                      processes=True) as cluster, Client(cluster) as client:
        Xd, yd = client.persist([da.from_array(X, chunks=(4096, -1)),
                                 da.from_array(y, chunks=4096)])
        source = DaskSource(Xd, yd)
        ids = list(range(8))
        t_old = min(client.submit(_per_chunk, source, ids, pure=False).result()
                    for _ in range(repeat))
        t_new = min(client.submit(_window, source, ids, pure=False).result()
                    for _ in range(repeat))
    return [f"| 8 chunks of 4,096 rows x 100 (float32) of a persisted dask array, read in a "
            f"task on a LocalCluster of 2 | {t_old:.3f} | {t_new:.3f} | {t_old / t_new:.1f}x "
            f"| the same blocks (tests/distributed/test_dask_source_reads.py) |"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="best of this many")
    parser.add_argument("--no-write", action="store_true", help="print, do not write RESULTS.md")
    args = parser.parse_args()
    rows = ["| what | before s | now s | before / now | result |", "|---|---|---|---|---|"]
    rows += column_stats_rows(args.repeat)
    rows += evaluation_rows(args.repeat)
    rows += dask_window_rows(args.repeat)
    body = ("Seconds, the best of " + str(args.repeat) + " runs of each, both ways in this one "
            "run (the way before still callable: see the module docstring).\n\n"
            + "\n".join(rows))
    print(body)
    if not args.no_write:
        write_section("The passes around the epochs, before and now (#25, #28)", body,
                      "python -m benchmarks.bench_side_passes")


if __name__ == "__main__":
    main()
