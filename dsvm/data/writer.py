"""Writing a dataset block by block (``DatasetWriter``); the format is described in
dsvm.data.dataset.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

import numpy as np
import zarr

from dsvm.data.attrs import (
    _MIN_NNZ_CHUNK,
    _RESERVED_ATTRS,
    DEFAULT_CODEC,
    DTYPES,
    FORMAT_VERSION,
    LAYOUTS,
    MAX_CLASSES,
    _jsonable,
    _provenance,
    check_codec,
    choose_codec,
    compressors,
)
from dsvm.data.block_ops import check_block_values, coerce_block, concat_blocks, slice_block
from dsvm.data.blocks import Block, CSRBlock, DenseBlock
from dsvm.data.dataset import Dataset, open_dataset
from dsvm.data.feature_layout import (
    LAYOUT_GROUP,
    FeatureLayout,
    check_feature_order,
    count_features,
    frequency_layout,
    renumbered,
)
from dsvm.data.label_names import LabelNames, recode_stored
from dsvm.data.location import _Location, _make_parents, _remove, check_destination
from dsvm.data.stats import STATS_GROUP, RunningStats
from dsvm.exceptions import DataLayoutError, warn

logger = logging.getLogger(__name__)


class _Appender1D:
    """Append to a growing 1-D zarr array in whole zarr chunks (no read-modify-write)."""

    def __init__(self, array: Any, initial: np.ndarray | None = None) -> None:
        self.array = array
        self.chunk = int(array.chunks[0])
        self.written = 0
        self.tail = np.zeros(0, dtype=array.dtype) if initial is None else initial

    def append(self, values: np.ndarray) -> None:
        values = np.asarray(values, dtype=self.tail.dtype)
        # no tail: the values themselves (concatenating copied every stored value once more)
        buf = np.concatenate([self.tail, values]) if self.tail.shape[0] else values
        k = (buf.shape[0] // self.chunk) * self.chunk
        if k:
            self._write(buf[:k])
        self.tail = buf[k:].copy()

    def finish(self) -> None:
        if self.tail.shape[0]:
            self._write(self.tail)
        self.tail = self.tail[:0]

    def _write(self, values: np.ndarray) -> None:
        self.array.resize((self.written + values.shape[0],))
        self.array[self.written:self.written + values.shape[0]] = values
        self.written += values.shape[0]


class DatasetWriter:
    """Write a dataset block by block; blocks of any size are re-chunked to ``chunk_rows``.

    Use as a context manager. On success ``close()`` writes the attributes, then
    ``complete=True``, and returns the opened ``Dataset``. On an exception inside the ``with``
    block everything written is removed. Local paths are written into a sibling directory
    ``<dst>.tmp-<random>`` that is renamed onto ``dst`` at the end; on other fsspec stores the
    group is written in place and deleted on failure (``complete`` stays false until the end,
    so ``open_dataset`` never accepts a half-written group).

    ``codec``: how every array is compressed, one of ``dsvm.data.attrs.CODECS`` (zarr stores
    it in the arrays' metadata; reading needs no option). "auto" (the default) picks Blosc LZ4
    where it shrinks the first chunk's values at least 1.5x, else no compression; the choice
    is the attribute ``codec``.

    ``feature_order="frequency"`` (sparse only): the nonzeros of each feature are counted as
    the chunks are written, and at close the stored indices are rewritten once, chunk by
    chunk, into ids ranked by descending count (:mod:`dsvm.data.feature_layout`; one more
    read and write of the CSR arrays). A :class:`FeatureLayout` instead: the rows appended
    are already in it (a rewrite of a renumbered dataset, e.g. ``shuffle_dataset``); it is
    kept with them.

    Text labels: the rows' ``y`` hold provisional codes of a :class:`LabelNames`
    (:meth:`name_labels`); at close ``y`` is rewritten into the names' sorted order and the
    names are stored as the attribute ``label_names`` (see dsvm.data.label_names).

    Memory: at most one chunk of pending rows plus the block being appended.
    """

    def __init__(
        self,
        dst: str | os.PathLike[str],
        *,
        n_features: int,
        layout: str,
        dtype: str | np.dtype | type,
        chunk_rows: int,
        provenance: dict | None = None,
        overwrite: bool = False,
        storage_options: dict | None = None,
        source_name: str | None = None,
        labeled: bool = True,
        codec: str = DEFAULT_CODEC,
        inputs: Sequence[Any] = (),
        plan_small: Callable[[int], tuple[int, str]] | None = None,
        feature_order: str | FeatureLayout = "given",
    ) -> None:
        self.dtype = _check_writer_args(layout, dtype, n_features, chunk_rows)
        self._layout, self._counts = _check_layout_args(feature_order, layout, n_features)
        self.codec = check_codec(codec)  # "auto" is resolved at the first chunk
        self._compressors: tuple[Any, ...] = ()
        self.labeled = bool(labeled)
        self.n_features, self.layout, self.chunk_rows = int(n_features), layout, int(chunk_rows)
        self._loc = _Location(dst, storage_options)
        self.url = self._loc.url
        self._source_name = source_name or self.url
        self._overwrite = overwrite
        self._plan_small = plan_small
        # before anything is removed: an input is never the output, a non-dataset never replaced
        check_destination(self._loc, overwrite=overwrite, inputs=inputs)
        self._provenance = _provenance(provenance)
        self._extra_attrs: dict[str, Any] = {"shuffled": False, "shuffle_seed": None}
        self._write_url = (
            f"{self.url}.tmp-{secrets.token_hex(4)}" if self._loc.is_local else self.url
        )
        self._made_dirs: list[str] = []
        self._state = "open"
        if self._loc.is_local:
            self._made_dirs = _make_parents(self.url)
            _mention_leftovers(self.url)
        elif self._loc.exists():
            _remove(self._loc)  # overwrite=True was checked above
        try:
            self._group = zarr.open_group(
                self._loc.store(url=self._write_url, read_only=False), mode="w")
            self._group.attrs.update({"dsvm_format": FORMAT_VERSION, "complete": False})
        except BaseException:
            self.abort()
            raise
        self._pending: list[Block] = []
        self._pending_rows = 0
        self._n_written = 0
        self._nnz = 0
        self._chunk_starts = [0]
        self._nnz_starts = [0]
        self._arrays: dict[str, Any] | None = None
        self._appenders: dict[str, _Appender1D] = {}
        self._label_counts: dict[float, int] | None = {} if self.labeled else None
        # each chunk's class counts (dsvm.data.spread): how the fit deals chunks to streams
        self._chunk_labels: list[dict[float, int]] = []
        self.label_names: LabelNames | None = None
        self._has_sw: bool | None = None
        self._stats = RunningStats(self.n_features, sparse=layout == "sparse")
        self.dataset: Dataset | None = None

    # ---- public --------------------------------------------------------------------------
    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False

    @property
    def n_samples(self) -> int:
        """Rows appended so far."""
        return self._n_written + self._pending_rows

    @property
    def label_counts(self) -> dict[float, int] | None:
        """Distinct labels appended so far with their counts; None beyond 1000 distinct values."""
        return None if self._label_counts is None else dict(self._label_counts)

    def update_attrs(self, attrs: dict[str, Any]) -> None:
        """Extra JSON attributes to store at close (e.g. ``shuffled``, ``generator``)."""
        clash = _RESERVED_ATTRS.intersection(attrs)
        if clash:
            raise ValueError(f"attributes {sorted(clash)} are managed by the writer")
        self._extra_attrs.update(attrs)

    def name_labels(self, names: LabelNames) -> None:
        """The labels appended are codes of ``names`` (text labels), sorted at close."""
        if not self.labeled:
            raise ValueError(f"DatasetWriter for {self.url}: an unlabeled dataset has no "
                             "label names")
        self.label_names = names

    def append(self, block: Block) -> None:
        """Append rows; any number per call (the writer re-chunks them)."""
        self._require_open()
        self._check_shapes(block)
        self._count_labels(block.y)
        n = block.n_samples
        pos = 0
        while pos < n:
            take = min(n - pos, self.chunk_rows - self._pending_rows)
            piece = block if (pos == 0 and take == n) else slice_block(block, pos, pos + take)
            self._pending.append(piece)
            self._pending_rows += take
            pos += take
            if self._pending_rows == self.chunk_rows:
                self._flush()

    def close(self) -> Dataset:
        """Write the last chunk and the attributes, set ``complete=True``; return the Dataset."""
        if self._state == "closed":
            assert self.dataset is not None
            return self.dataset
        self._require_open()
        try:
            if self._arrays is None and self._plan_small is not None and self._pending_rows:
                self._split_small()
            self._flush()
            if self._arrays is None:
                self._create_arrays(None)
            self._finish()
        except BaseException:
            self.abort()
            raise
        self._state = "closed"
        self.dataset = open_dataset(self.url, storage_options=self._loc.storage_options)
        logger.debug("wrote %r", self.dataset)
        return self.dataset

    def abort(self) -> None:
        """Remove everything written so far (called automatically on errors)."""
        if self._state == "open":
            self._state = "aborted"
            try:
                _remove(self._loc, self._write_url)
                for path in self._made_dirs:  # deepest first; only the ones we created
                    os.rmdir(path)
            except OSError as exc:  # pragma: no cover - cleanup is best effort
                logger.warning("could not remove partial dataset %s: %s", self._write_url, exc)

    # ---- internals -----------------------------------------------------------------------
    def _require_open(self) -> None:
        if self._state != "open":
            raise ValueError(f"DatasetWriter for {self.url} is {self._state}")

    def _check_shapes(self, block: Block) -> None:
        where = f"{self._source_name}, rows from {self.n_samples}"
        has_sw = _check_block_shape(block, self.n_features, where)
        if block.n_samples == 0:
            return
        if self._has_sw is None:
            self._has_sw = has_sw
        elif self._has_sw != has_sw:
            raise DataLayoutError(
                f"{where}: some blocks have sample_weight and some do not; give it for all rows"
            )

    def _split_small(self) -> None:
        """Every row fits in the first chunk, so their number is known only now (a CSV or
        Criteo file is not counted before it is read): cut them into the chunks that
        ``plan_small(n)`` plans for n rows (at least two per worker), not one chunk."""
        assert self._plan_small is not None
        n = self._pending_rows
        rows, reason = self._plan_small(n)
        if rows >= n:
            return
        rows_block = concat_blocks([coerce_block(p, self.layout, self.dtype)
                                    for p in self._pending])
        self.chunk_rows = rows
        self._extra_attrs["chunk_reason"] = reason
        for start in range(0, n, rows):
            self._pending = [slice_block(rows_block, start, min(n, start + rows))]
            self._pending_rows = min(n, start + rows) - start
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        pieces = [coerce_block(p, self.layout, self.dtype) for p in self._pending]
        chunk = concat_blocks(pieces)
        self._pending, self._pending_rows = [], 0
        check_block_values(chunk, self._source_name, self._n_written, labeled=self.labeled)
        if self._arrays is None:
            self._create_arrays(chunk)
        self._write_chunk(chunk)

    def _create_arrays(self, first: Block | None) -> None:
        # A dataset smaller than one chunk gets a single chunk of exactly n rows (and an empty
        # one a nominal chunk of 1 row), so chunk_rows never exceeds n_samples.
        if first is None:
            self.chunk_rows = 1
        elif first.n_samples < self.chunk_rows:
            self.chunk_rows = first.n_samples
        nnz_first = int(first.indptr[-1]) if isinstance(first, CSRBlock) else 0
        values = [] if first is None else [first.data, first.indices] \
            if isinstance(first, CSRBlock) else [first.X]
        self.codec = choose_codec(self.codec, values)
        self._compressors = compressors(self.codec)
        self._arrays = _create_arrays(self._group, self.layout, self.chunk_rows, self.n_features,
                                      self.dtype, bool(self._has_sw), nnz_first,
                                      labeled=self.labeled, codecs=self._compressors)
        if self.layout == "sparse":
            self._appenders = {
                "indptr": _Appender1D(self._arrays["X/indptr"], np.zeros(1, np.int64)),
                "indices": _Appender1D(self._arrays["X/indices"]),
                "data": _Appender1D(self._arrays["X/data"]),
            }

    def _write_chunk(self, chunk: Block) -> None:
        assert self._arrays is not None
        n = chunk.n_samples
        if self.labeled:
            self._arrays["y"].append(chunk.y)
        if self._has_sw:
            self._arrays["sample_weight"].append(chunk.sample_weight)
        if isinstance(chunk, DenseBlock):
            self._arrays["X"].append(chunk.X)
        else:
            self._appenders["indptr"].append(chunk.indptr[1:] + self._nnz)
            self._appenders["indices"].append(chunk.indices)
            if self._counts is not None:
                self._counts += count_features(chunk.indices, self.n_features)
            self._appenders["data"].append(chunk.data)
            self._nnz += int(chunk.indptr[-1])
        self._stats.add(len(self._chunk_starts) - 1, chunk)  # (as stored: coerced)
        if self._label_counts is not None:
            values, counts = np.unique(chunk.y, return_counts=True)
            self._chunk_labels.append(dict(zip(values.tolist(), counts.tolist())))
        self._n_written += n
        self._chunk_starts.append(self._n_written)
        self._nnz_starts.append(self._nnz)

    def _count_labels(self, y: np.ndarray) -> None:
        if self._label_counts is None:
            return
        values, counts = np.unique(y, return_counts=True)
        for v, c in zip(values.tolist(), counts.tolist()):
            self._label_counts[v] = self._label_counts.get(v, 0) + c
        if len(self._label_counts) > MAX_CLASSES:
            self._label_counts = None  # a regression target: stop counting

    def _finish(self) -> None:
        assert self._arrays is not None
        g = self._group
        for app in self._appenders.values():
            app.finish()
        kw: dict[str, Any] = {"compressors": self._compressors, "fill_value": 0}
        renumbered_here = self._counts is not None
        if self._counts is not None:
            self._layout = frequency_layout(self._counts)
            _renumber_stored(self._arrays, self._chunk_starts, self._nnz_starts,
                             self.n_features, self._layout.rank)
        starts = np.asarray(self._chunk_starts, dtype=np.int64)
        g.create_array("chunk_starts", shape=starts.shape, chunks=starts.shape, dtype="int64",
                       **kw)[:] = starts
        if self.layout == "sparse":
            nnz_starts = np.asarray(self._nnz_starts, dtype=np.int64)
            x_group = cast(zarr.Group, g["X"])  # the sparse layout's X is a group
            x_group.create_array("chunk_nnz_starts", shape=nnz_starts.shape,
                                 chunks=nnz_starts.shape, dtype="int64", **kw)[:] = nnz_starts
        # the columns' statistics, kept for feature scaling (no pass at fit time)
        stats = g.create_group(STATS_GROUP)
        for name, value in self._stats.arrays().items():
            if renumbered_here and self._layout is not None and value.shape == (self.n_features,):
                value = value[self._layout.order]  # kept in stored ids, as the rows are
            stats.create_array(name, shape=value.shape, chunks=_column_chunks(value.shape),
                               dtype="float64", **kw)[...] = value
        labels = self._label_counts
        table: np.ndarray | None = None  # text labels: provisional code -> sorted code
        if self.label_names is not None and labels is not None:
            names, table = self.label_names.sorted()
            recode_stored(self._arrays["y"], self._chunk_starts, table)
            labels = {float(table[int(c)]): n for c, n in labels.items()}
            self._extra_attrs["label_names"] = names
        classes = None if labels is None else sorted(labels)
        if classes:
            _write_chunk_class_counts(g, self._chunk_labels, classes, table, kw)
        attrs: dict[str, Any] = {
            "n_samples": self._n_written,
            "n_features": self.n_features,
            "n_chunks": len(self._chunk_starts) - 1,
            "chunk_rows": self.chunk_rows,
            "layout": self.layout,
            "dtype": self.dtype.name,
            "classes": classes,
            "class_counts": None if labels is None else [labels[c] for c in classes or []],
            "has_sample_weight": bool(self._has_sw),
            "labeled": self.labeled,
            "provenance": self._provenance,
            "codec": self.codec,
            **_jsonable(self._extra_attrs),
        }
        if self.layout == "sparse":
            attrs["nnz"] = self._nnz
        if self._layout is not None:
            attrs["feature_order"] = self._layout.kind
            _write_layout(g, self._layout, kw)
        g.attrs.update(attrs)
        g.attrs["complete"] = True  # last: only now may open_dataset accept the group
        if self._loc.is_local:
            _move_into_place(self._loc, self._write_url, overwrite=self._overwrite)



# The per-chunk class counts are kept while they stay small (a few MB): beyond, the fit deals
# chunks without them (dsvm.training.streams), as for a dataset written before they were kept.
MAX_CHUNK_CLASS_COUNTS = 1 << 20


def _write_chunk_class_counts(g: Any, per_chunk: list[dict[float, int]], classes: list[float],
                              table: np.ndarray | None, kw: dict[str, Any]) -> None:
    """``chunk_class_counts`` (n_chunks, n_classes) int64: chunk c's rows of ``classes[k]``
    (text labels: their provisional codes mapped through ``table``, as ``y`` was)."""
    if len(per_chunk) * len(classes) > MAX_CHUNK_CLASS_COUNTS:
        return
    column = {c: k for k, c in enumerate(classes)}
    counts = np.zeros((len(per_chunk), len(classes)), dtype=np.int64)
    for c, chunk in enumerate(per_chunk):
        for value, n in chunk.items():
            counts[c, column[float(table[int(value)]) if table is not None else value]] += n
    g.create_array("chunk_class_counts", shape=counts.shape, chunks=counts.shape,
                   dtype="int64", **kw)[...] = counts


def _renumber_stored(arrays: dict[str, Any], chunk_starts: list[int], nnz_starts: list[int],
                     n_features: int, table: np.ndarray) -> None:
    """Rewrite a sparse store's written indices (and data, each row re-sorted) chunk by chunk,
    column ``j`` renamed ``table[j]`` (:func:`dsvm.data.feature_layout.renumbered`)."""
    indptr, indices, data = (arrays[f"X/{n}"] for n in ("indptr", "indices", "data"))
    for c in range(len(chunk_starts) - 1):
        start, stop = chunk_starts[c], chunk_starts[c + 1]
        n0, n1 = nnz_starts[c], nnz_starts[c + 1]
        if n1 == n0:
            continue
        rows = np.asarray(indptr[start:stop + 1], dtype=np.int64) - n0
        block = renumbered(CSRBlock(indptr=rows, indices=np.asarray(indices[n0:n1]),
                                    data=np.asarray(data[n0:n1]), y=np.zeros(stop - start),
                                    n_features=n_features), table)
        indices[n0:n1] = block.indices
        data[n0:n1] = block.data


def _check_layout_args(feature_order: str | FeatureLayout, layout: str, n_features: int
                       ) -> tuple[FeatureLayout | None, np.ndarray | None]:
    """(the layout the rows come in, the counts to keep): ``feature_order`` checked."""
    given = feature_order if isinstance(feature_order, FeatureLayout) else None
    if given is None and check_feature_order(feature_order) == "given":
        return None, None
    if layout != "sparse":
        kind = "a renumbered dataset's layout" if given else f"feature_order={feature_order!r}"
        raise ValueError(f"{kind} renumbers the features of sparse data; this dataset is "
                         "stored dense (write it with layout='sparse' to renumber it)")
    if given is not None:
        if given.n_features != n_features:
            raise ValueError(f"feature_order: a layout of {given.n_features} features for a "
                             f"dataset of n_features={n_features}")
        return given, None
    return None, np.zeros(n_features, dtype=np.int64)


# Per-column arrays (statistics) are stored in zarr chunks of this many columns, so that a fit
# of a renumbered store's used features reads their prefix only (Dataset.feature_stats(width)):
# whole, one array of 2^22 float64 columns is 32 MB, and reading the statistics was 0.15 s of a
# 0.6 s fit of hashed SST-2, whose 13,754 used columns sit in the first chunk.
COLUMN_CHUNK = 1 << 18


def _column_chunks(shape: tuple[int, ...]) -> tuple[int, ...]:
    return (max(1, min(shape[0], COLUMN_CHUNK)),) + tuple(shape[1:]) if shape else shape


def _write_layout(group: Any, layout: FeatureLayout, kw: dict[str, Any]) -> None:
    """The map of a renumbered dataset (see dsvm.data.dataset): ``order`` and ``counts``."""
    g = group.create_group(LAYOUT_GROUP)
    counts = layout.counts if layout.counts is not None else np.zeros(layout.n_features,
                                                                       np.int64)
    for name, value, dtype in (("order", layout.order, "int32"), ("counts", counts, "int64")):
        g.create_array(name, shape=value.shape, chunks=value.shape, dtype=dtype,
                       **kw)[...] = value
    g.attrs["n_used"] = layout.n_used  # (what a fit reads instead of the counts)


def _mention_leftovers(url: str) -> None:
    """Warn about ``<dst>.tmp-*`` folders a killed conversion left (a kill leaves no chance to
    clean up); they are not removed, as another conversion to ``dst`` may still be writing one."""
    import glob

    leftovers = sorted(glob.glob(glob.escape(url.rstrip("/")) + ".tmp-*"))
    if leftovers:
        size = sum(os.path.getsize(os.path.join(root, f))
                   for d in leftovers for root, _, files in os.walk(d) for f in files)
        warn(
            f"{len(leftovers)} unfinished conversion(s) to {url} left behind "
            f"({size / 2**20:,.1f} MiB): {', '.join(leftovers)}; an interrupted convert leaves "
            "these, and they can be deleted once no other conversion to this path is running.",
            UserWarning)


def _check_writer_args(layout: str, dtype: Any, n_features: Any, chunk_rows: Any) -> np.dtype:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}; got {layout!r}")
    dt = np.dtype(dtype)
    if dt.name not in DTYPES:
        raise ValueError(f"dtype must be float32 or float64; got {dt.name}")
    if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) \
            or not 1 <= n_features < 2**31:
        raise ValueError(f"n_features must be an int in [1, 2**31); got {n_features!r}")
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
            or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a positive int; got {chunk_rows!r}")
    return dt


def _check_block_shape(block: Block, n_features: int, where: str) -> bool:
    """Raise for a block that does not fit the dataset; return whether it has sample_weight."""
    if not isinstance(block, (DenseBlock, CSRBlock)):
        raise TypeError(f"append() takes a DenseBlock or CSRBlock; got {type(block).__name__}")
    n = block.n_samples
    if isinstance(block, DenseBlock) and block.X.ndim != 2:
        raise DataLayoutError(f"{where}: X must be 2-D; got shape {block.X.shape}")
    if block.n_features != n_features:
        raise DataLayoutError(
            f"{where}: the block has {block.n_features} features but the dataset has "
            f"{n_features}"
        )
    if block.y.ndim != 1 or block.y.shape[0] != n:
        raise DataLayoutError(f"{where}: X has {n} rows but y has shape {block.y.shape}")
    sw = block.sample_weight
    if sw is not None and sw.shape != (n,):
        raise DataLayoutError(f"{where}: X has {n} rows but sample_weight has shape {sw.shape}")
    return sw is not None


def _create_arrays(group: Any, layout: str, rows: int, n_features: int, dtype: np.dtype,
                   has_sw: bool, nnz_first: int, *, labeled: bool = True,
                   codecs: tuple[Any, ...]) -> dict[str, Any]:
    """The empty, growable zarr arrays of a dataset with ``rows`` rows per chunk.

    For CSR, data/indices get zarr chunks of a quarter of the first row chunk's nnz (at least
    1024 values), so that reading a row chunk touches about five zarr chunks.
    """
    arrays: dict[str, Any] = {}
    kw = {"compressors": codecs, "fill_value": 0}
    if labeled:
        arrays["y"] = group.create_array("y", shape=(0,), chunks=(rows,), dtype="float64", **kw)
    if has_sw:
        arrays["sample_weight"] = group.create_array(
            "sample_weight", shape=(0,), chunks=(rows,), dtype="float64", **kw)
    if layout == "dense":
        arrays["X"] = group.create_array("X", shape=(0, n_features), chunks=(rows, n_features),
                                         dtype=dtype, **kw)
        return arrays
    xg = group.create_group("X")
    nnz_chunk = max(_MIN_NNZ_CHUNK, -(-nnz_first // 4))
    nnz_chunk = -(-nnz_chunk // 1024) * 1024
    arrays["X/indptr"] = xg.create_array("indptr", shape=(0,), chunks=(rows,), dtype="int64",
                                         **kw)
    arrays["X/indices"] = xg.create_array("indices", shape=(0,), chunks=(nnz_chunk,),
                                          dtype="int32", **kw)
    arrays["X/data"] = xg.create_array("data", shape=(0,), chunks=(nnz_chunk,), dtype=dtype,
                                       **kw)
    return arrays


def _move_into_place(loc: _Location, write_url: str, *, overwrite: bool) -> None:
    """Rename the finished temporary directory onto the destination (local paths)."""
    old = None
    if os.path.lexists(loc.url):
        if not overwrite:
            raise FileExistsError(
                f"{loc.url} appeared while it was being written; pass overwrite=True"
            )
        old = f"{loc.url}.old-{secrets.token_hex(4)}"
        os.rename(loc.url, old)
    os.makedirs(os.path.dirname(loc.url) or ".", exist_ok=True)
    os.rename(write_url, loc.url)
    if old is not None:
        _remove(loc, old)
