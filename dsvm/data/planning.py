"""Conversion planning shared by every converter: storage layout, rows per chunk, option
checks, and the write of a stream of blocks into a new dataset.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from dsvm.data.attrs import DEFAULT_CODEC, DTYPES
from dsvm.data.blocks import Block, CSRBlock
from dsvm.data.dataset import Dataset
from dsvm.data.label_names import LabelNames
from dsvm.data.read_ahead import read_ahead
from dsvm.data.writer import DatasetWriter
from dsvm.exceptions import DataFormatError, warn

logger = logging.getLogger(__name__)

TARGET_CHUNK_BYTES = 32 << 20
MIN_CHUNK_ROWS = 1024
DENSE_DENSITY = 0.25


def default_workers() -> int:
    """The worker count a LocalCluster gets by default (as dsvm.distributed.client's
    ``default_n_workers``: one per CPU; repeated here because data sits below distributed)."""
    return max(1, os.cpu_count() or 1)


def row_bytes(layout: str, n_features: int, dtype: Any, nnz_per_row: float | None) -> float:
    """Uncompressed bytes stored per row: X values (and for CSR the int32 index of each
    stored value and the int64 row pointer) plus the float64 label."""
    item = np.dtype(dtype).itemsize
    if layout == "dense":
        return float(n_features * item + 8)
    return (nnz_per_row or 0.0) * (item + 4) + 16


def chunk_plan(
    layout: str, n_features: int, dtype: Any, *, nnz_per_row: float | None = None,
    n_samples: int | None = None, workers: int | None = None,
) -> tuple[int, str]:
    """Rows per chunk and the reason, from the bytes actually stored per row.

    A chunk holds about 32 MiB uncompressed (at least 1024 rows). When the row count is known
    the dataset also gets at least 2 chunks per default worker (``workers``, default one per
    CPU) as long as chunks keep >= 1024 rows, so that small real sets (a9a, w8a) still give
    every worker's stream something to read; and no chunk is longer than the dataset.
    """
    per_row = row_bytes(layout, n_features, dtype, nnz_per_row)
    by_bytes = max(MIN_CHUNK_ROWS, int(TARGET_CHUNK_BYTES // max(per_row, 1.0)))
    rows = by_bytes
    reason = (f"about {TARGET_CHUNK_BYTES >> 20} MiB per chunk at {per_row:.0f} stored bytes "
              f"per row ({layout})")
    if by_bytes == MIN_CHUNK_ROWS and per_row * MIN_CHUNK_ROWS > TARGET_CHUNK_BYTES:
        reason = f"the minimum of {MIN_CHUNK_ROWS} rows ({per_row:.0f} stored bytes per row)"
    if n_samples is not None:
        w = workers or default_workers()
        split = max(MIN_CHUNK_ROWS, -(-n_samples // (2 * w)))
        if split < rows:
            rows = split
            reason = (f"{n_samples} rows in at least 2 chunks per worker for {w} default "
                      f"workers (chunks of >= {MIN_CHUNK_ROWS} rows; {per_row:.0f} stored "
                      "bytes per row)")
        if n_samples <= rows:
            rows, reason = max(1, n_samples), f"all {n_samples} rows in one chunk ({reason})"
    return rows, reason


def split_counted(n_samples: int, workers: int | None = None) -> tuple[int, str]:
    """Rows per chunk for ``n_samples`` rows counted only once read, all within one chunk
    of the size planned without the count: at least 2 chunks per default worker (chunks of
    >= 1024 rows), as ``chunk_plan`` gives when the count is known beforehand."""
    w = workers or default_workers()
    rows = min(n_samples, max(MIN_CHUNK_ROWS, -(-n_samples // (2 * w))))
    if rows == n_samples:
        return rows, f"all {n_samples} rows in one chunk (chunks of >= {MIN_CHUNK_ROWS} rows)"
    return rows, (f"{n_samples} rows in at least 2 chunks per worker for {w} default workers "
                  f"(chunks of >= {MIN_CHUNK_ROWS} rows; counted while converting)")


def auto_chunk_rows(
    layout: str, n_features: int, dtype: Any, *, nnz_per_row: float | None = None,
    n_samples: int | None = None,
) -> int:
    """Rows per chunk of ``chunk_plan`` (without its reason)."""
    return chunk_plan(layout, n_features, dtype, nnz_per_row=nnz_per_row,
                      n_samples=n_samples)[0]


def choose_layout(layout: str, *, sparse_input: bool, density: float | None) -> str:
    """Resolve ``layout="auto"``: dense input stays dense; sparse input becomes dense when at
    least 25% of its entries are stored (then dense rows are smaller and faster)."""
    if layout not in ("auto", "dense", "sparse"):
        raise ValueError(f"layout must be 'auto', 'dense' or 'sparse'; got {layout!r}")
    if layout != "auto":
        return layout
    if not sparse_input:
        return "dense"
    return "dense" if density is not None and density >= DENSE_DENSITY else "sparse"


def _check_dtype(dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if dt.name not in DTYPES:
        raise ValueError(f"dtype must be 'float32' or 'float64'; got {dt.name!r}")
    return dt


def _check_positive_int(name: str, value: Any, *, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive int or None; got {value!r}")
    return int(value)


def _check_labels(writer: DatasetWriter, name: str) -> None:
    """A conversion needs rows. One label throughout is allowed (a test shard, or the
    positives of a day, can be one class: it is evaluated or predicted, or joins others), but
    said, since as training data alone it is more often a wrong label_column= or labels file."""
    if writer.n_samples == 0:
        raise DataFormatError(f"{name}: no samples found (the input is empty or only comments)")
    counts = writer.label_counts
    if counts is not None and len(counts) == 1:
        (value,) = counts
        names = writer.label_names
        shown = f"{value:g}" if names is None else repr(names.sorted()[0][0])
        warn(
            f"{name}: all {writer.n_samples} samples have the label {shown}: converted (a "
            "test shard can be one class), but a classifier trained on it alone needs a second "
            "class (check label_column= or the labels file if it should have one)",
            UserWarning)


def _peek(blocks: Iterable[Block]) -> tuple[Block | None, Iterator[Block]]:
    """The first block and an iterator that still yields it."""
    it = iter(blocks)
    first = next(it, None)
    return first, (it if first is None else itertools.chain([first], it))


def _nnz_per_row(block: Block | None) -> float:
    if block is None or block.n_samples == 0:
        return 0.0
    if isinstance(block, CSRBlock):
        return float(block.indptr[-1]) / block.n_samples
    return float(np.count_nonzero(block.X)) / block.n_samples


def _write(
    blocks: Iterable[Block], dst: str | os.PathLike[str], *, name: str, n_features: int,
    layout: str, dtype: np.dtype, chunk_rows: int, overwrite: bool, provenance: dict,
    storage_options: dict | None, attrs: dict | None = None, labeled: bool = True,
    codec: str = DEFAULT_CODEC, feature_order: str = "given",
    label_names: LabelNames | None = None,
) -> Dataset:
    """Append every block to a new dataset; on any error nothing is left at ``dst``.

    The next block is read while the current one is written (:func:`read_ahead`).
    ``attrs["chunk_reason"]``: how ``chunk_rows`` was chosen ("given" when absent).
    ``label_names``: the blocks' labels are codes of these text labels (the source's).
    """
    chunk_reason = (attrs or {}).get("chunk_reason")
    ahead = read_ahead(blocks)
    # chunk_rows chosen here (not given): a source whose rows were not counted (CSV, Criteo,
    # svmlight read once) may turn out to fit in one chunk; the writer then splits it
    planned = not (chunk_reason or "given").startswith("given")
    try:
        with DatasetWriter(dst, n_features=n_features, layout=layout, dtype=dtype,
                           chunk_rows=chunk_rows, provenance=provenance, overwrite=overwrite,
                           storage_options=storage_options, source_name=name,
                           labeled=labeled, codec=codec, feature_order=feature_order,
                           plan_small=split_counted if planned else None) as writer:
            if label_names is not None:
                writer.name_labels(label_names)
            for block in ahead:
                writer.append(block)
            _check_labels(writer, name)
            writer.update_attrs({**(attrs or {}), "chunk_reason": chunk_reason or "given"})
    finally:
        ahead.close()  # waits for a read in flight before the blocks' own cleanup below
        close = getattr(blocks, "close", None)
        if close is not None:
            close()  # a generator's cleanup (temporary shuffle buckets, open files) runs now
    assert writer.dataset is not None
    return writer.dataset
