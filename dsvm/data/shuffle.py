"""External (out-of-core) row shuffle in bounded memory.

Algorithm (a "scatter, then shuffle each bucket" external shuffle): every row draws a bucket
uniformly at random and is appended to that bucket's temporary file; then the buckets are read
back one at a time, each permuted uniformly in memory and emitted in bucket order. Because the
bucket draws are independent and uniform and each bucket is permuted uniformly, the output order
is a uniformly random permutation of the input. Memory: one bucket (about two chunks) twice.

Determinism: one ``numpy.random.Generator(seed)`` draws one double per row (in input order) for
the buckets and then one permutation per bucket, so the result depends only on the input rows,
``seed`` and ``n_buckets``, not on how the input happened to be split into blocks.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Generator, Iterable, Iterator
from typing import IO, Any

import numpy as np

from dsvm.data.block_ops import coerce_block, concat_blocks, take_rows
from dsvm.data.blocks import Block, CSRBlock, DenseBlock
from dsvm.data.dataset import Dataset, open_dataset
from dsvm.data.label_names import LabelNames
from dsvm.data.writer import DatasetWriter

logger = logging.getLogger(__name__)

MAX_BUCKETS = 4096
BUCKET_CHUNKS = 2  # rows per bucket, in chunks: memory while emitting is ~2 x this


def n_buckets_for(n_samples: int, chunk_rows: int) -> int:
    """Buckets of about ``BUCKET_CHUNKS`` chunks each (1 to MAX_BUCKETS)."""
    return int(min(MAX_BUCKETS, max(1, -(-n_samples // (BUCKET_CHUNKS * max(1, chunk_rows))))))


def shuffle_tmp_dir(dst: str | os.PathLike[str]) -> str | None:
    """Where bucket files go: beside a local ``dst`` (same disk), else the system temp dir."""
    raw = os.fspath(dst)
    if "://" in raw and not raw.startswith("file://"):
        return None
    local = raw[len("file://"):] if raw.startswith("file://") else raw
    parent = os.path.dirname(os.path.abspath(local))
    return parent if os.path.isdir(parent) else None


def shuffle_blocks(
    blocks: Iterable[Block],
    *,
    seed: int,
    n_buckets: int,
    layout: str,
    dtype: Any,
    tmp_dir: str | None = None,
) -> Generator[Block, None, None]:
    """Yield the rows of ``blocks`` in a uniformly random order (see the module docstring).

    Blocks are converted to ``layout``/``dtype`` first. Bucket files live in a temporary
    directory under ``tmp_dir`` that is removed when the generator finishes or is closed.
    """
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix=".dsvm-shuffle-", dir=tmp_dir) as tmp:
        paths = [os.path.join(tmp, f"bucket-{b:05d}.bin") for b in range(n_buckets)]
        n_features = None
        for block in blocks:
            block = coerce_block(block, layout, dt)
            n_features = block.n_features
            _scatter(block, rng, paths)
        logger.debug("shuffle: scattered rows into %d buckets under %s", n_buckets, tmp)
        for path in paths:
            if not os.path.exists(path):
                continue
            assert n_features is not None
            with open(path, "rb") as f:
                bucket = concat_blocks(list(_read_records(f, layout, dt, n_features)))
            os.remove(path)
            yield take_rows(bucket, rng.permutation(bucket.n_samples))


def _scatter(block: Block, rng: np.random.Generator, paths: list[str]) -> None:
    """Append each row of ``block`` to a uniformly drawn bucket file (input order kept)."""
    n = block.n_samples
    if n == 0:
        return
    # One double per row whatever the block sizes, so the draws depend only on the row index.
    bucket = (rng.random(n) * len(paths)).astype(np.int64)
    order = np.argsort(bucket, kind="stable")
    bounds = np.searchsorted(bucket[order], np.arange(len(paths) + 1))
    for b in np.flatnonzero(np.diff(bounds)).tolist():
        part = take_rows(block, order[bounds[b]:bounds[b + 1]])
        with open(paths[b], "ab") as f:
            _write_record(f, part)


def _write_record(f: IO[bytes], block: Block) -> None:
    has_sw = block.sample_weight is not None
    if isinstance(block, DenseBlock):
        header = [block.n_samples, -1, int(has_sw)]
    else:
        header = [block.n_samples, int(block.indptr[-1]), int(has_sw)]
    np.asarray(header, dtype=np.int64).tofile(f)
    np.ascontiguousarray(block.y, dtype=np.float64).tofile(f)
    if has_sw:
        np.ascontiguousarray(block.sample_weight, dtype=np.float64).tofile(f)
    if isinstance(block, DenseBlock):
        np.ascontiguousarray(block.X).tofile(f)
    else:
        np.diff(block.indptr).astype(np.int64).tofile(f)
        np.ascontiguousarray(block.indices, dtype=np.int32).tofile(f)
        np.ascontiguousarray(block.data).tofile(f)


def _read_records(f: IO[bytes], layout: str, dtype: np.dtype, n_features: int) -> Iterator[Block]:
    while True:
        header = np.fromfile(f, dtype=np.int64, count=3)
        if header.shape[0] == 0:
            return
        n, nnz, has_sw = (int(v) for v in header)
        y = np.fromfile(f, dtype=np.float64, count=n)
        sw = np.fromfile(f, dtype=np.float64, count=n) if has_sw else None
        if layout == "dense":
            X = np.fromfile(f, dtype=dtype, count=n * n_features).reshape(n, n_features)
            yield DenseBlock(X=X, y=y, sample_weight=sw)
        else:
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.fromfile(f, dtype=np.int64, count=n), out=indptr[1:])
            indices = np.fromfile(f, dtype=np.int32, count=nnz)
            data = np.fromfile(f, dtype=dtype, count=nnz)
            yield CSRBlock(indptr=indptr, indices=indices, data=data, y=y,
                           n_features=n_features, sample_weight=sw)


def shuffle_dataset(
    src: Dataset | str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    seed: int = 0,
    chunk_rows: int | None = None,
    overwrite: bool = False,
    storage_options: dict | None = None,
) -> Dataset:
    """Rewrite a dataset with its rows shuffled (same layout and dtype; bounded memory)."""
    ds = src if isinstance(src, Dataset) else open_dataset(src, storage_options=storage_options)
    rows = int(chunk_rows or ds.attrs.get("chunk_rows") or 1)
    provenance = dict(ds.attrs.get("provenance") or {})
    provenance.update({"shuffled_from": ds.url, "converter": "dsvm.data.shuffle_dataset"})
    n_buckets = n_buckets_for(ds.n_samples, rows)
    blocks = shuffle_blocks(ds.iter_chunks(), seed=seed, n_buckets=n_buckets,
                            layout=ds.layout, dtype=ds.dtype, tmp_dir=shuffle_tmp_dir(dst))
    try:
        with DatasetWriter(dst, n_features=ds.n_features, layout=ds.layout, dtype=ds.dtype,
                           chunk_rows=rows, provenance=provenance, overwrite=overwrite,
                           storage_options=storage_options, labeled=ds.labeled,
                           inputs=(ds.url,),
                           # the rows keep the ids they are stored in, and so their map
                           feature_order=ds.feature_layout() or "given") as writer:
            if ds.label_names is not None:  # the codes are kept: so are their names
                writer.name_labels(LabelNames.known(ds.label_names, ds.url))
            for block in blocks:
                writer.append(block)
            writer.update_attrs({"shuffled": True, "shuffle_seed": int(seed)})
    finally:
        blocks.close()
    assert writer.dataset is not None
    return writer.dataset
