"""The on-disk dataset format: a zarr (v3) group of row chunks, dense or CSR.

Layout of a dataset group (local path or any fsspec URL)::

    zarr.json                 attributes, see below
    chunk_starts              int64 (n_chunks + 1,): row offset of each row chunk
    y                         float64 (n_samples,), zarr chunks (chunk_rows,)
    sample_weight             optional, like y
    X                         dense: (n_samples, n_features) float32/float64, chunks (chunk_rows, n_features)
    X/indptr                  sparse: int64 (n_samples + 1,), global offsets, chunks (chunk_rows,)
    X/indices                 sparse: int32 (nnz,), column of each stored value
    X/data                    sparse: float32/float64 (nnz,)
    X/chunk_nnz_starts        sparse: int64 (n_chunks + 1,): offset of each row chunk in data/indices

Row chunks are regular (``chunk_rows`` rows, except the last), so dense ``X``, ``y`` and
``sample_weight`` use plain zarr chunking and row chunk *c* is zarr chunk *c*. For CSR, row chunk
*c* is the slice ``chunk_nnz_starts[c]:chunk_nnz_starts[c + 1]`` of ``data``/``indices``; their zarr
chunk is a quarter of the first row chunk's nnz, so reading a row chunk touches about four or five
zarr chunks and reads at most ~25% more than it needs.

Attributes: ``dsvm_format`` (1), ``complete`` (written True last), ``n_samples``, ``n_features``,
``n_chunks``, ``chunk_rows`` (the nominal row count of a chunk; the offsets are the
``chunk_starts`` array), ``layout``, ``dtype``, ``classes`` (sorted distinct labels, or None
beyond 1000 distinct values), ``class_counts``, ``nnz`` (sparse), ``has_sample_weight``,
``provenance``, ``shuffled``, ``shuffle_seed`` and anything a writer adds (``generator``...).

This is the only module of dsvm that imports zarr.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import logging
import math
import os
import secrets
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import fsspec
import numpy as np
import zarr
from zarr.codecs import BloscCodec

from dsvm.data.blocks import Block, CSRBlock, DenseBlock
from dsvm.data.readers import check_block_values, coerce_block, concat_blocks, slice_block
from dsvm.exceptions import DataLayoutError

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MAX_CLASSES = 1000
LAYOUTS = ("dense", "sparse")
DTYPES = ("float32", "float64")
# Blosc with LZ4 and byte shuffle (zarr v2's long-time default): an epoch reads every chunk, so
# decode speed is what counts. Measured on 65,536 x 100 float32 normals, one thread: LZ4+shuffle
# decodes at 2.8 GB/s (ratio 1.07), zstd level 1 at 0.6 GB/s (ratio 1.08), which made reading,
# not training, the bottleneck of a cluster epoch. On 0/1 features LZ4 shrinks ~6x (zstd ~20x).
_COMPRESSORS = (BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"),)
_MIN_NNZ_CHUNK = 1024
_RESERVED_ATTRS = frozenset(
    {"dsvm_format", "complete", "n_samples", "n_features", "n_chunks", "chunk_rows", "layout",
     "dtype", "classes", "class_counts", "nnz", "has_sample_weight"}
)


# --------------------------------------------------------------------------------------------
# Locations: local paths versus fsspec URLs
# --------------------------------------------------------------------------------------------


class _Location:
    """Where a dataset lives: a local directory or a path on an fsspec filesystem."""

    def __init__(self, path_or_url: str | os.PathLike[str], storage_options: dict | None) -> None:
        raw = os.fspath(path_or_url)
        self.storage_options = dict(storage_options or {})
        if "://" not in raw or raw.startswith("file://"):
            local = raw[len("file://"):] if raw.startswith("file://") else raw
            self.is_local = True
            self.url = os.path.abspath(os.path.expanduser(local))
        else:
            self.is_local = False
            self.url = raw.rstrip("/")

    def fs(self) -> tuple[Any, str]:
        """The fsspec filesystem and the path on it."""
        fs, path = fsspec.core.url_to_fs(self.url, **self.storage_options)
        return fs, path

    def exists(self) -> bool:
        if self.is_local:
            return os.path.lexists(self.url)
        fs, path = self.fs()
        return bool(fs.exists(path))

    def store(self, *, url: str | None = None, read_only: bool) -> Any:
        target = url or self.url
        if self.is_local:
            return zarr.storage.LocalStore(target, read_only=read_only)
        return zarr.storage.FsspecStore.from_url(
            target, storage_options=self.storage_options or None, read_only=read_only
        )


def _is_zarr_store(loc: _Location) -> bool:
    if loc.is_local:
        return os.path.isfile(os.path.join(loc.url, "zarr.json"))
    fs, path = loc.fs()
    return bool(fs.exists(path.rstrip("/") + "/zarr.json"))


def _remove(loc: _Location, url: str | None = None) -> None:
    """Delete a dataset directory (best effort, used for cleanup and overwrite)."""
    target = url or loc.url
    if loc.is_local:
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target, ignore_errors=True)
        elif os.path.lexists(target):
            os.remove(target)
        return
    fs, path = fsspec.core.url_to_fs(target, **loc.storage_options)
    if fs.exists(path):
        fs.rm(path, recursive=True)


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


class Dataset:
    """A dsvm dataset on disk: metadata in memory, chunks read on demand.

    Cheap to pickle: it holds the URL, the attributes and the chunk table; zarr handles are
    opened lazily in each process and dropped when pickled. ``read_chunk(i)`` reads row chunk
    ``i`` only.
    """

    def __init__(
        self,
        url: str,
        storage_options: dict | None,
        attrs: dict,
        chunk_starts: np.ndarray,
        chunk_nnz_starts: np.ndarray | None = None,
    ) -> None:
        self.url = url
        self.storage_options = dict(storage_options or {})
        self.attrs = dict(attrs)
        self.chunk_starts = np.asarray(chunk_starts, dtype=np.int64)
        self.chunk_nnz_starts = (
            None if chunk_nnz_starts is None else np.asarray(chunk_nnz_starts, dtype=np.int64)
        )
        self._handles: dict[str, Any] | None = None

    # ---- metadata ------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        return int(self.attrs["n_samples"])

    @property
    def n_features(self) -> int:
        return int(self.attrs["n_features"])

    @property
    def n_chunks(self) -> int:
        return int(self.chunk_starts.shape[0] - 1)

    @property
    def layout(self) -> str:
        return str(self.attrs["layout"])

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.attrs["dtype"])

    @property
    def classes(self) -> np.ndarray | None:
        classes = self.attrs.get("classes")
        return None if classes is None else np.asarray(classes, dtype=np.float64)

    @property
    def has_sample_weight(self) -> bool:
        return bool(self.attrs.get("has_sample_weight", False))

    @property
    def nnz(self) -> int:
        """Stored values: nnz for sparse, n_samples * n_features for dense."""
        if self.layout == "sparse":
            return int(self.attrs["nnz"])
        return self.n_samples * self.n_features

    @property
    def nbytes(self) -> int:
        """Uncompressed bytes of X and y (and indptr/indices for sparse)."""
        n, item = self.n_samples, self.dtype.itemsize
        if self.layout == "dense":
            return n * self.n_features * item + 8 * n
        return self.nnz * (item + 4) + 8 * (n + 1) + 8 * n

    def chunk_n_rows(self, i: int) -> int:
        i = self._check_chunk_index(i)
        return int(self.chunk_starts[i + 1] - self.chunk_starts[i])

    # ---- reading -------------------------------------------------------------------------
    def _open(self) -> dict[str, Any]:
        if self._handles is None:
            names = ["y"] + (["sample_weight"] if self.has_sample_weight else [])
            names += ["X"] if self.layout == "dense" else ["X/indptr", "X/indices", "X/data"]
            # Every task ships its own unpickled copy of the Dataset: share the zarr handles
            # per process, keyed so that a dataset rewritten at the same URL is reopened.
            key = (self.url, json.dumps(self.storage_options, sort_keys=True, default=str),
                   str((self.attrs.get("provenance") or {}).get("date")), self.n_samples,
                   self.nnz, tuple(names))
            self._handles = _open_handles(key)
        return self._handles

    def _check_chunk_index(self, i: int) -> int:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"chunk index must be an int; got {type(i).__name__}")
        if not 0 <= i < self.n_chunks:
            raise IndexError(f"chunk {i} is out of range: {self.url} has {self.n_chunks} chunks")
        return int(i)

    def read_chunk(self, i: int) -> DenseBlock | CSRBlock:
        """Read row chunk ``i`` (and nothing else) as a block. Arrays may be read-only."""
        i = self._check_chunk_index(i)
        h = self._open()
        start, stop = int(self.chunk_starts[i]), int(self.chunk_starts[i + 1])
        y = np.asarray(h["y"][start:stop])
        sw = np.asarray(h["sample_weight"][start:stop]) if self.has_sample_weight else None
        if self.layout == "dense":
            X = np.asarray(h["X"][start:stop])
            self._check_lengths(i, X.shape[0], y, sw)
            return DenseBlock(X=X, y=y, sample_weight=sw)
        assert self.chunk_nnz_starts is not None
        n0, n1 = int(self.chunk_nnz_starts[i]), int(self.chunk_nnz_starts[i + 1])
        # indptr[start:stop] is exactly one zarr chunk; its closing offset comes from the table.
        head = np.asarray(h["X/indptr"][start:stop], dtype=np.int64)
        indptr = np.empty(head.shape[0] + 1, dtype=np.int64)
        indptr[:-1] = head - n0
        indptr[-1] = n1 - n0
        indices = np.asarray(h["X/indices"][n0:n1])
        data = np.asarray(h["X/data"][n0:n1])
        self._check_lengths(i, stop - start, y, sw, indptr=indptr, n_indices=indices.shape[0],
                            n_data=data.shape[0])
        return CSRBlock(indptr=indptr, indices=indices, data=data, y=y,
                        n_features=self.n_features, sample_weight=sw)

    def read_chunk_labels(self, i: int) -> tuple[np.ndarray, np.ndarray | None]:
        """``(y, sample_weight)`` of row chunk ``i`` without reading X."""
        i = self._check_chunk_index(i)
        h = self._open()
        start, stop = int(self.chunk_starts[i]), int(self.chunk_starts[i + 1])
        y = np.asarray(h["y"][start:stop])
        sw = np.asarray(h["sample_weight"][start:stop]) if self.has_sample_weight else None
        return y, sw

    def _check_lengths(
        self,
        i: int,
        n_rows: int,
        y: np.ndarray,
        sw: np.ndarray | None,
        *,
        indptr: np.ndarray | None = None,
        n_indices: int = 0,
        n_data: int = 0,
    ) -> None:
        expected = self.chunk_n_rows(i)
        where = f"{self.url}, chunk {i}"
        if indptr is not None and indptr.shape[0] - 1 != expected:
            raise DataLayoutError(
                f"{where}: X/indptr has {indptr.shape[0] - 1} rows but the chunk table says "
                f"{expected}; the dataset is damaged, convert it again"
            )
        if n_rows != y.shape[0]:
            raise DataLayoutError(
                f"{where}: X has {n_rows} rows but y has {y.shape[0]}; the dataset is damaged, "
                "convert it again"
            )
        if sw is not None and sw.shape[0] != n_rows:
            raise DataLayoutError(
                f"{where}: X has {n_rows} rows but sample_weight has {sw.shape[0]}"
            )
        if indptr is not None:
            nnz = int(indptr[-1])
            if n_indices != nnz or n_data != nnz or (indptr.shape[0] > 1 and indptr[0] != 0):
                raise DataLayoutError(
                    f"{where}: the chunk table gives {nnz} stored values but X/indices has "
                    f"{n_indices} and X/data has {n_data}; the dataset is damaged"
                )

    def iter_chunks(self) -> Iterator[DenseBlock | CSRBlock]:
        """Read the chunks one after the other (one chunk in memory at a time)."""
        for i in range(self.n_chunks):
            yield self.read_chunk(i)

    def to_dask(self) -> tuple[Any, Any]:
        """(X, y) as dask arrays with one dask chunk per row chunk (see dsvm.data.dask_io)."""
        from dsvm.data.dask_io import dataset_to_dask

        return dataset_to_dask(self)

    # ---- description ---------------------------------------------------------------------
    def _disk_bytes(self) -> int | None:
        loc = _Location(self.url, self.storage_options)
        if loc.is_local:
            total = 0
            for root, _dirs, files in os.walk(loc.url):
                total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
            return total
        if loc.url.startswith("memory://"):
            fs, path = loc.fs()
            return int(fs.du(path))
        return None  # listing a bucket is not cheap

    def info(self) -> dict[str, Any]:
        """JSON-serialisable summary (what ``dsvm info`` prints)."""
        sizes = np.diff(self.chunk_starts)
        out: dict[str, Any] = {
            "url": self.url,
            "layout": self.layout,
            "dtype": self.dtype.name,
            "n_samples": self.n_samples,
            "n_features": self.n_features,
            "n_chunks": self.n_chunks,
            "chunk_rows": int(self.attrs.get("chunk_rows", sizes.max() if sizes.size else 0)),
            "last_chunk_rows": int(sizes[-1]) if sizes.size else 0,
            "classes": self.attrs.get("classes"),
            "class_counts": self.attrs.get("class_counts"),
            "has_sample_weight": self.has_sample_weight,
            "nnz": self.nnz,
            "density": self.nnz / max(1, self.n_samples * self.n_features),
            "nbytes": self.nbytes,
            "nbytes_on_disk": self._disk_bytes(),
            "provenance": self.attrs.get("provenance"),
            "shuffled": bool(self.attrs.get("shuffled", False)),
            "shuffle_seed": self.attrs.get("shuffle_seed"),
        }
        return out

    def __repr__(self) -> str:
        return (
            f"Dataset({self.url!r}, layout={self.layout!r}, dtype={self.dtype.name}, "
            f"n_samples={self.n_samples}, n_features={self.n_features}, n_chunks={self.n_chunks})"
        )

    def __dask_tokenize__(self) -> tuple[Any, ...]:
        # The write date makes a rewritten dataset at the same URL a different token.
        prov = self.attrs.get("provenance") or {}
        return ("dsvm.Dataset", self.url, self.n_samples, self.n_features, self.layout,
                self.dtype.name, str(prov.get("date")))

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_handles"] = None  # zarr handles are reopened lazily in the receiving process
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


@functools.lru_cache(maxsize=32)
def _open_handles(key: tuple) -> dict[str, Any]:
    url, options, _date, _n, _nnz, names = key
    loc = _Location(url, json.loads(options))
    group = zarr.open_group(loc.store(read_only=True), mode="r")
    return {name: group[name] for name in names}


def open_dataset(
    path_or_url: str | os.PathLike[str], *, storage_options: dict | None = None
) -> Dataset:
    """Open a dsvm dataset written by ``convert``/``write_arrays``/``DatasetWriter``.

    Reads the attributes and the chunk table and checks that the arrays agree with them;
    raises ``FileNotFoundError`` when nothing is there and ``DataLayoutError`` for a group that
    is not a complete dsvm dataset.
    """
    loc = _Location(path_or_url, storage_options)
    if not loc.exists():
        raise FileNotFoundError(f"no dsvm dataset at {loc.url}: the path does not exist")
    try:
        group = zarr.open_group(loc.store(read_only=True), mode="r")
    except (FileNotFoundError, ValueError, KeyError) as exc:
        raise DataLayoutError(f"{loc.url} is not a zarr group, so not a dsvm dataset ({exc})") from exc
    attrs = dict(group.attrs)
    version = attrs.get("dsvm_format")
    if version is None:
        raise DataLayoutError(f"{loc.url} is not a dsvm dataset (no 'dsvm_format' attribute)")
    if version != FORMAT_VERSION:
        raise DataLayoutError(
            f"{loc.url} has dsvm_format={version!r}; this version of dsvm reads format "
            f"{FORMAT_VERSION}. Convert the source data again with this version"
        )
    if attrs.get("complete") is not True:
        raise DataLayoutError(
            f"{loc.url} is incomplete: the write did not finish (attribute 'complete' is not "
            "true). Delete it and convert again"
        )
    chunk_starts = np.asarray(group["chunk_starts"][:], dtype=np.int64)
    nnz_starts = None
    if attrs["layout"] == "sparse":
        nnz_starts = np.asarray(group["X/chunk_nnz_starts"][:], dtype=np.int64)
    _validate_layout(loc.url, group, attrs, chunk_starts, nnz_starts)
    return Dataset(loc.url, loc.storage_options, attrs, chunk_starts, nnz_starts)


def _validate_layout(
    url: str, group: Any, attrs: dict, chunk_starts: np.ndarray, nnz_starts: np.ndarray | None
) -> None:
    """Cheap metadata checks: every array's length agrees with the attributes."""
    n, f = int(attrs["n_samples"]), int(attrs["n_features"])
    if attrs.get("layout") not in LAYOUTS or attrs.get("dtype") not in DTYPES:
        raise DataLayoutError(
            f"{url}: unknown layout {attrs.get('layout')!r} or dtype {attrs.get('dtype')!r}"
        )
    if (chunk_starts.ndim != 1 or chunk_starts.shape[0] < 1 or chunk_starts[0] != 0
            or chunk_starts[-1] != n or np.any(np.diff(chunk_starts) < 0)):
        raise DataLayoutError(
            f"{url}: the chunk table chunk_starts does not cover rows 0..{n} in order"
        )
    expected = {"y": (n,)}
    if attrs.get("has_sample_weight"):
        expected["sample_weight"] = (n,)
    if attrs["layout"] == "dense":
        expected["X"] = (n, f)
    else:
        nnz = int(attrs["nnz"])
        expected.update({"X/indptr": (n + 1,), "X/indices": (nnz,), "X/data": (nnz,)})
        assert nnz_starts is not None
        if nnz_starts.shape != chunk_starts.shape or nnz_starts[0] != 0 or nnz_starts[-1] != nnz:
            raise DataLayoutError(
                f"{url}: X/chunk_nnz_starts has {nnz_starts.shape[0]} entries for "
                f"{chunk_starts.shape[0]} chunk offsets or does not end at nnz={nnz}"
            )
    for name, shape in expected.items():
        got = tuple(group[name].shape)
        if got != shape:
            raise DataLayoutError(
                f"{url}: {name} has shape {got} but the attributes say {shape} "
                f"(n_samples={n}); the dataset is damaged, convert it again"
            )


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


class _Appender1D:
    """Append to a growing 1-D zarr array in whole zarr chunks (no read-modify-write)."""

    def __init__(self, array: Any, initial: np.ndarray | None = None) -> None:
        self.array = array
        self.chunk = int(array.chunks[0])
        self.written = 0
        self.tail = np.zeros(0, dtype=array.dtype) if initial is None else initial

    def append(self, values: np.ndarray) -> None:
        buf = np.concatenate([self.tail, np.asarray(values, dtype=self.tail.dtype)])
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
    ) -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}; got {layout!r}")
        self.dtype = np.dtype(dtype)
        if self.dtype.name not in DTYPES:
            raise ValueError(f"dtype must be float32 or float64; got {self.dtype.name}")
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) \
                or not 1 <= n_features < 2**31:
            raise ValueError(f"n_features must be an int in [1, 2**31); got {n_features!r}")
        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
                or chunk_rows < 1:
            raise ValueError(f"chunk_rows must be a positive int; got {chunk_rows!r}")
        self.n_features, self.layout, self.chunk_rows = int(n_features), layout, int(chunk_rows)
        self._loc = _Location(dst, storage_options)
        self.url = self._loc.url
        self._source_name = source_name or self.url
        self._overwrite = overwrite
        check_destination(self._loc, overwrite=overwrite)
        self._provenance = _provenance(provenance)
        self._extra_attrs: dict[str, Any] = {"shuffled": False, "shuffle_seed": None}
        self._write_url = (
            f"{self.url}.tmp-{secrets.token_hex(4)}" if self._loc.is_local else self.url
        )
        self._made_dirs: list[str] = []
        self._state = "open"
        if self._loc.is_local:
            self._made_dirs = _make_parents(self.url)
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
        self._label_counts: dict[float, int] | None = {}
        self._has_sw: bool | None = None
        self.dataset: Dataset | None = None

    # ---- public --------------------------------------------------------------------------
    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
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
        if not isinstance(block, (DenseBlock, CSRBlock)):
            raise TypeError(f"append() takes a DenseBlock or CSRBlock; got {type(block).__name__}")
        n = block.n_samples
        if isinstance(block, DenseBlock) and block.X.ndim != 2:
            raise DataLayoutError(f"{where}: X must be 2-D; got shape {block.X.shape}")
        if block.n_features != self.n_features:
            raise DataLayoutError(
                f"{where}: the block has {block.n_features} features but the dataset has "
                f"{self.n_features}"
            )
        if block.y.ndim != 1 or block.y.shape[0] != n:
            raise DataLayoutError(f"{where}: X has {n} rows but y has shape {block.y.shape}")
        has_sw = block.sample_weight is not None
        if has_sw and block.sample_weight.shape != (n,):  # type: ignore[union-attr]
            raise DataLayoutError(
                f"{where}: X has {n} rows but sample_weight has shape "
                f"{block.sample_weight.shape}"  # type: ignore[union-attr]
            )
        if n == 0:
            return
        if self._has_sw is None:
            self._has_sw = has_sw
        elif self._has_sw != has_sw:
            raise DataLayoutError(
                f"{where}: some blocks have sample_weight and some do not; give it for all rows"
            )

    def _flush(self) -> None:
        if not self._pending:
            return
        pieces = [coerce_block(p, self.layout, self.dtype) for p in self._pending]
        chunk = concat_blocks(pieces)
        self._pending, self._pending_rows = [], 0
        check_block_values(chunk, self._source_name, self._n_written)
        if self._arrays is None:
            self._create_arrays(chunk)
        self._write_chunk(chunk)

    def _create_arrays(self, first: Block | None) -> None:
        g = self._group
        # A dataset smaller than one chunk gets a single chunk of exactly n rows (and an empty
        # one a nominal chunk of 1 row), so chunk_rows never exceeds n_samples.
        if first is None:
            self.chunk_rows = 1
        elif first.n_samples < self.chunk_rows:
            self.chunk_rows = first.n_samples
        rows = self.chunk_rows
        arrays: dict[str, Any] = {}
        kw = {"compressors": _COMPRESSORS, "fill_value": 0}
        arrays["y"] = g.create_array("y", shape=(0,), chunks=(rows,), dtype="float64", **kw)
        if self._has_sw:
            arrays["sample_weight"] = g.create_array(
                "sample_weight", shape=(0,), chunks=(rows,), dtype="float64", **kw)
        if self.layout == "dense":
            arrays["X"] = g.create_array("X", shape=(0, self.n_features),
                                         chunks=(rows, self.n_features), dtype=self.dtype, **kw)
        else:
            xg = g.create_group("X")
            nnz_first = 0 if first is None else int(first.indptr[-1])  # type: ignore[union-attr]
            nnz_chunk = max(_MIN_NNZ_CHUNK, -(-nnz_first // 4))
            nnz_chunk = -(-nnz_chunk // 1024) * 1024
            arrays["X/indptr"] = xg.create_array("indptr", shape=(0,), chunks=(rows,),
                                                 dtype="int64", **kw)
            arrays["X/indices"] = xg.create_array("indices", shape=(0,), chunks=(nnz_chunk,),
                                                  dtype="int32", **kw)
            arrays["X/data"] = xg.create_array("data", shape=(0,), chunks=(nnz_chunk,),
                                               dtype=self.dtype, **kw)
            self._appenders = {
                "indptr": _Appender1D(arrays["X/indptr"], np.zeros(1, np.int64)),
                "indices": _Appender1D(arrays["X/indices"]),
                "data": _Appender1D(arrays["X/data"]),
            }
        self._arrays = arrays

    def _write_chunk(self, chunk: Block) -> None:
        assert self._arrays is not None
        n = chunk.n_samples
        self._arrays["y"].append(chunk.y)
        if self._has_sw:
            self._arrays["sample_weight"].append(chunk.sample_weight)
        if isinstance(chunk, DenseBlock):
            self._arrays["X"].append(chunk.X)
        else:
            self._appenders["indptr"].append(chunk.indptr[1:] + self._nnz)
            self._appenders["indices"].append(chunk.indices)
            self._appenders["data"].append(chunk.data)
            self._nnz += int(chunk.indptr[-1])
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
        kw = {"compressors": _COMPRESSORS, "fill_value": 0}
        starts = np.asarray(self._chunk_starts, dtype=np.int64)
        g.create_array("chunk_starts", shape=starts.shape, chunks=starts.shape, dtype="int64",
                       **kw)[:] = starts
        if self.layout == "sparse":
            nnz_starts = np.asarray(self._nnz_starts, dtype=np.int64)
            g["X"].create_array("chunk_nnz_starts", shape=nnz_starts.shape,
                                chunks=nnz_starts.shape, dtype="int64", **kw)[:] = nnz_starts
        labels = self._label_counts
        classes = None if labels is None else sorted(labels)
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
            "provenance": self._provenance,
            **_jsonable(self._extra_attrs),
        }
        if self.layout == "sparse":
            attrs["nnz"] = self._nnz
        g.attrs.update(attrs)
        g.attrs["complete"] = True  # last: only now may open_dataset accept the group
        if self._loc.is_local:
            self._move_into_place()

    def _move_into_place(self) -> None:
        old = None
        if os.path.lexists(self.url):
            if not self._overwrite:
                raise FileExistsError(
                    f"{self.url} appeared while it was being written; pass overwrite=True"
                )
            old = f"{self.url}.old-{secrets.token_hex(4)}"
            os.rename(self.url, old)
        os.makedirs(os.path.dirname(self.url) or ".", exist_ok=True)
        os.rename(self._write_url, self.url)
        if old is not None:
            _remove(self._loc, old)


def check_destination(
    dst: str | os.PathLike[str] | _Location, *, overwrite: bool,
    storage_options: dict | None = None,
) -> None:
    """Raise FileExistsError if ``dst`` exists and may not be replaced."""
    loc = dst if isinstance(dst, _Location) else _Location(dst, storage_options)
    if not loc.exists():
        return
    if not overwrite:
        raise FileExistsError(f"{loc.url} already exists; pass overwrite=True to replace it")
    is_dir = os.path.isdir(loc.url) if loc.is_local else True
    if is_dir and not _is_zarr_store(loc) and _nonempty(loc):
        raise FileExistsError(f"refusing to overwrite {loc.url}: it exists and is not a zarr store")


def _make_parents(path: str) -> list[str]:
    """Create the missing parent directories of ``path``; return them, deepest first."""
    missing = []
    parent = os.path.dirname(path)
    while parent and not os.path.exists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    made = []
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:  # created concurrently: not ours to remove
            continue
        made.append(d)
    return made[::-1]


def _nonempty(loc: _Location) -> bool:
    if loc.is_local:
        return not os.path.isdir(loc.url) or bool(os.listdir(loc.url))
    fs, path = loc.fs()
    return bool(fs.ls(path))


def _provenance(given: dict | None) -> dict[str, Any]:
    dsvm_version = str(getattr(sys.modules.get("dsvm"), "__version__", "") or "")
    if not dsvm_version:
        try:
            from importlib.metadata import version

            dsvm_version = version("dsvm")
        except Exception:  # pragma: no cover - not installed as a distribution
            dsvm_version = "unknown"
    out: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "dsvm_version": dsvm_version,
    }
    out.update(given or {})
    return _jsonable(out)


def _jsonable(value: Any) -> Any:
    """Turn NumPy scalars/arrays (and tuples) into JSON types for zarr attributes."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value
