"""Per-column statistics of row blocks: what feature scaling needs (:mod:`dsvm.features.scaling`),
gathered by a pass over the chunks or, for a dataset, while it is written (:class:`RunningStats`,
kept in the store: no pass at fit time).

The sums that depend on the order of addition are added in chunk order, so that the result is
the same bits however the chunks were grouped into tasks, and the same as the writer's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dsvm.data.blocks import Block, CSRBlock, float64_rows

# Where a dataset keeps its columns' statistics (datasets written before have none)
STATS_GROUP = "feature_stats"


@dataclass
class FeatureStats:
    """Per-column statistics of some chunks: the largest magnitudes (merged as they come: a
    maximum does not depend on the order), and per chunk the sums that do (dense columns'
    sums and sums of squares, the target's), added in chunk order by :meth:`totals`."""

    sparse: bool
    max_abs: np.ndarray
    y_max_abs: float = 0.0
    # chunk -> (rows, column sums or None (CSR), column sums of squares or None, y sum, y sum sq)
    sums: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    # CSR: per column, the count of stored values and the sum of their squares, merged as they
    # come (one array each, whatever the chunk count; the scale rounds away the order's last
    # bits: :func:`dsvm.features.scaling.choose_scaling`). None: not gathered (dense rows, or
    # a dataset written before they were kept).
    stored_count: np.ndarray | None = None
    stored_sum_sq: np.ndarray | None = None
    # CSR: per column, the sum of the stored values (the mean of a column stored in every row,
    # which is centred: dsvm.features.scaling). None: not gathered (a dataset written before).
    stored_sum: np.ndarray | None = None

    def __add__(self, other: FeatureStats) -> FeatureStats:
        return FeatureStats(sparse=self.sparse or other.sparse,
                            max_abs=np.maximum(self.max_abs, other.max_abs),
                            y_max_abs=max(self.y_max_abs, other.y_max_abs),
                            sums={**self.sums, **other.sums},
                            stored_count=_added(self.stored_count, other.stored_count),
                            stored_sum_sq=_added(self.stored_sum_sq, other.stored_sum_sq),
                            stored_sum=_added(self.stored_sum, other.stored_sum))

    def totals(self) -> tuple[int, Any, Any, float, float]:
        """(rows, column sums, column sums of squares, y sum, y sum of squares), added in chunk
        order: the same bits however the chunks were grouped into tasks."""
        rows, col, col_sq, y_sum, y_sq = 0, None, None, 0.0, 0.0
        for chunk in sorted(self.sums):
            n, s, sq, ys, ysq = self.sums[chunk]
            rows, y_sum, y_sq = rows + n, y_sum + ys, y_sq + ysq
            if s is not None:
                col = s.copy() if col is None else col + s
                col_sq = sq.copy() if col_sq is None else col_sq + sq
        return rows, col, col_sq, y_sum, y_sq


def _added(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """a + b, or None when either was not gathered."""
    return None if a is None or b is None else a + b


def block_stats(chunk: int, block: Block) -> FeatureStats:
    """The statistics of chunk ``chunk`` (float64 sums)."""
    y_max, y_sums = _target_stats(block)
    if isinstance(block, CSRBlock):
        # (imported here: reading a dataset's statistics, `dsvm info`, loads no numba)
        from dsvm.kernels.column_stats import add_column_stats

        d = block.n_features
        max_abs, count, sum_sq, total = np.zeros(d), np.zeros(d, np.int64), np.zeros(d), \
            np.zeros(d)
        add_column_stats(block.indices, block.data, max_abs, count, sum_sq, total)  # one pass
        return FeatureStats(sparse=True, max_abs=max_abs, y_max_abs=y_max, sums={
            chunk: (block.n_samples, None, None, *y_sums)},
            stored_count=count, stored_sum_sq=sum_sq, stored_sum=total)
    d = block.X.shape[1]
    max_abs, col, col_sq = np.zeros(d), np.zeros(d), np.zeros(d)
    for _, X in float64_rows(block.X):  # float64 sums, a slice of rows at a time
        if X.shape[0]:
            np.maximum(max_abs, np.abs(X).max(axis=0), out=max_abs)
            col += X.sum(axis=0)
            col_sq += np.einsum("ij,ij->j", X, X)
    return FeatureStats(sparse=False, max_abs=max_abs, y_max_abs=y_max, sums={
        chunk: (block.n_samples, col, col_sq, *y_sums)})


def _target_stats(block: Block) -> tuple[float, tuple[float, float]]:
    """(largest |y|, (sum y, sum y^2)) of a block, float64."""
    y = np.asarray(block.y, dtype=np.float64)
    return (float(np.abs(y).max()) if len(y) else 0.0), (float(y.sum()), float(np.dot(y, y)))


class StatsAdder:
    """Chunks' statistics added into one :class:`FeatureStats` (a task's chunks, a writer's):
    CSR chunks in place (:func:`dsvm.kernels.column_stats.add_chunk_column_stats`), the same
    bits as adding each chunk's :func:`block_stats` in turn, without the four arrays of the
    feature count each made and the sums of them (7 chunks of 58,000 rows x 8 Zipf ids over
    2^22 columns: 0.56 s that way, 0.11 s this way, benchmarks/bench_side_passes.py)."""

    def __init__(self) -> None:
        self.stats: FeatureStats | None = None
        self._scratch: tuple[np.ndarray, np.ndarray] | None = None

    def add(self, chunk: int, block: Block) -> None:
        stats = self.stats
        if (stats is None or not isinstance(block, CSRBlock) or stats.stored_count is None
                or stats.stored_sum_sq is None or stats.stored_sum is None
                or stats.max_abs.shape[0] != block.n_features):
            one = block_stats(chunk, block)
            self.stats = one if stats is None else stats + one
            return
        from dsvm.kernels.column_stats import add_chunk_column_stats

        if self._scratch is None:
            self._scratch = np.zeros(block.n_features), np.zeros(block.n_features)
        # (block_stats' arrays of the first chunk are this one's alone: written in place)
        add_chunk_column_stats(block.indices, block.data, stats.max_abs, stats.stored_count,
                               stats.stored_sum_sq, stats.stored_sum, *self._scratch)
        y_max, y_sums = _target_stats(block)
        stats.y_max_abs = max(stats.y_max_abs, y_max)
        stats.sums[chunk] = (block.n_samples, None, None, *y_sums)


def merge_stats(parts: list[FeatureStats | None]) -> FeatureStats | None:
    """The combine of :func:`block_stats` results."""
    total = None
    for part in parts:
        if part is not None:
            total = part if total is None else total + part
    return total


class RunningStats:
    """The statistics of the chunks a writer writes, in order (memory: a few arrays of the
    feature count, whatever the chunk count)."""

    def __init__(self, n_features: int, sparse: bool) -> None:
        self.sparse, self.max_abs, self.y_max_abs = sparse, np.zeros(n_features), 0.0
        self.rows, self.y_sum, self.y_sq = 0, 0.0, 0.0
        self.col: np.ndarray | None = None
        self.col_sq: np.ndarray | None = None
        self.stored_count: np.ndarray | None = None
        self.stored_sum_sq: np.ndarray | None = None
        self.stored_sum: np.ndarray | None = None
        self.n_chunks = 0
        self._adder = StatsAdder()

    def add(self, chunk: int, block: Block) -> None:
        """Chunk ``chunk``'s block (chunks in order), added as :meth:`FeatureStats.totals`
        adds them."""
        if isinstance(block, CSRBlock) and (self.n_chunks == 0 or self.stored_count is not None):
            self._add_csr(chunk, block)
            return
        one = block_stats(chunk, block)
        self.max_abs = np.maximum(self.max_abs, one.max_abs)
        self.y_max_abs = max(self.y_max_abs, one.y_max_abs)
        n, s, sq, ys, ysq = one.sums[chunk]
        self.rows, self.y_sum, self.y_sq = self.rows + n, self.y_sum + ys, self.y_sq + ysq
        if s is not None:
            self.col = s.copy() if self.col is None else self.col + s
            self.col_sq = sq.copy() if self.col_sq is None else self.col_sq + sq
        first = self.n_chunks == 0  # (then None for good once a chunk had none)
        self.stored_count = (one.stored_count if first
                             else _added(self.stored_count, one.stored_count))
        self.stored_sum_sq = (one.stored_sum_sq if first
                              else _added(self.stored_sum_sq, one.stored_sum_sq))
        self.stored_sum = one.stored_sum if first else _added(self.stored_sum, one.stored_sum)
        self.n_chunks += 1

    def _add_csr(self, chunk: int, block: CSRBlock) -> None:
        """A CSR chunk, its column sums added in place (:class:`StatsAdder`)."""
        self._adder.add(chunk, block)
        one = self._adder.stats
        assert one is not None
        n, _, _, ys, ysq = one.sums.pop(chunk)  # (the sums of every chunk are not kept)
        self.rows, self.y_sum, self.y_sq = self.rows + n, self.y_sum + ys, self.y_sq + ysq
        self.max_abs, self.y_max_abs = one.max_abs, one.y_max_abs
        self.stored_count, self.stored_sum_sq = one.stored_count, one.stored_sum_sq
        self.stored_sum = one.stored_sum
        self.n_chunks += 1

    def arrays(self) -> dict[str, np.ndarray]:
        """What a store keeps: named float64 arrays (scalars as arrays of one)."""
        out = {"max_abs": self.max_abs, "y_max_abs": np.float64(self.y_max_abs),
               "rows": np.float64(self.rows), "y_sum": np.float64(self.y_sum),
               "y_sum_sq": np.float64(self.y_sq), "sparse": np.float64(self.sparse)}
        if self.col is not None and self.col_sq is not None:
            out["sum"], out["sum_sq"] = self.col, self.col_sq
        if self.stored_count is not None and self.stored_sum_sq is not None:
            out["stored_count"], out["stored_sum_sq"] = self.stored_count, self.stored_sum_sq
        if self.stored_sum is not None:
            out["stored_sum"] = self.stored_sum
        return {k: np.atleast_1d(np.asarray(v, dtype=np.float64)) for k, v in out.items()}


def stats_from_arrays(arrays: dict[str, np.ndarray]) -> FeatureStats:
    """The :class:`FeatureStats` a store keeps (:meth:`RunningStats.arrays`)."""
    def scalar(name: str) -> float:
        return float(np.asarray(arrays[name]).reshape(-1)[0])

    sums = (int(scalar("rows")), arrays.get("sum"), arrays.get("sum_sq"), scalar("y_sum"),
            scalar("y_sum_sq"))
    count, sum_sq, total = (arrays.get(k) for k in ("stored_count", "stored_sum_sq",
                                                    "stored_sum"))
    return FeatureStats(sparse=bool(scalar("sparse")), max_abs=np.asarray(arrays["max_abs"]),
                        y_max_abs=scalar("y_max_abs"), sums={0: sums},
                        stored_count=None if count is None else np.asarray(count),
                        stored_sum_sq=None if sum_sq is None else np.asarray(sum_sq),
                        stored_sum=None if total is None else np.asarray(total))
