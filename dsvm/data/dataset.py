"""The on-disk dataset format: a zarr (v3) group of row chunks, dense or CSR.

Layout of a dataset group (local path or any fsspec URL)::

    zarr.json                 attributes, see below
    chunk_starts              int64 (n_chunks + 1,): row offset of each row chunk
    y                         float64 (n_samples,), zarr chunks (chunk_rows,); absent when unlabeled
    sample_weight             optional, like y
    X                         dense: (n_samples, n_features) float32/float64,
                              chunks (chunk_rows, n_features)
    X/indptr                  sparse: int64 (n_samples + 1,), global offsets, chunks (chunk_rows,)
    X/indices                 sparse: int32 (nnz,), column of each stored value
    X/data                    sparse: float32/float64 (nnz,)
    X/chunk_nnz_starts        sparse: int64 (n_chunks + 1,): offset of each row chunk in
                              data/indices

Row chunks are regular (``chunk_rows`` rows, except the last), so dense ``X``, ``y`` and
``sample_weight`` use plain zarr chunking and row chunk *c* is zarr chunk *c*. For CSR, row chunk
*c* is the slice ``chunk_nnz_starts[c]:chunk_nnz_starts[c + 1]`` of ``data``/``indices``; their zarr
chunk is a quarter of the first row chunk's nnz, so reading a row chunk touches about four or five
zarr chunks and reads at most ~25% more than it needs.

Attributes: ``dsvm_format`` (1), ``complete`` (written True last), ``n_samples``, ``n_features``,
``n_chunks``, ``chunk_rows`` (the nominal row count of a chunk; the offsets are the
``chunk_starts`` array), ``layout``, ``dtype``, ``labeled`` (False for data converted without
labels, to be scored only; absent means True), ``classes`` (sorted distinct labels, or None
beyond 1000 distinct values), ``class_counts``, ``label_names`` (text labels: the sorted names,
label ``i`` in ``y`` standing for ``label_names[i]``; absent for numeric labels; see
dsvm.data.label_names), ``nnz`` (sparse), ``has_sample_weight``,
``provenance``, ``shuffled``, ``shuffle_seed``, ``feature_order`` ("frequency": the sparse
features were renumbered by descending count, the map kept in the group ``feature_layout``:
``order`` int32 (n_features,), the user's id of each stored feature, and ``counts`` int64, the
nonzeros of each; absent: "given", the user's ids; see dsvm.data.feature_layout), ``codec``
(what the arrays are compressed with, see dsvm.data.attrs.CODECS; absent before it was
recorded, when it was always "blosc-lz4"; reading takes it from zarr's metadata, not from here)
and anything a writer adds (``generator``...).

Reading only; the writer is :mod:`dsvm.data.writer`. zarr is imported by these two and by the
modules that locate stores and hold codecs (location, attrs, predictions), nowhere else.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np
import zarr
from zarr.core.buffer.cpu import NDBuffer
from zarr.core.sync import sync as _zarr_sync  # zarr's own event loop (zarr >= 3.0)

from dsvm.data.attrs import DTYPES, FORMAT_VERSION, LAYOUTS
from dsvm.data.blocks import CSRBlock, DenseBlock
from dsvm.data.feature_layout import LAYOUT_GROUP, FeatureLayout
from dsvm.data.location import _Location
from dsvm.data.stats import STATS_GROUP, FeatureStats, stats_from_arrays
from dsvm.exceptions import DataFormatError, DataLayoutError

logger = logging.getLogger(__name__)


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
        self._layout: FeatureLayout | None = None  # read on first use (feature_layout)

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
    def labeled(self) -> bool:
        """False for a dataset converted without labels: it can be scored, not trained on."""
        return bool(self.attrs.get("labeled", True))

    def require_labels(self, purpose: str) -> None:
        """Raise ``DataFormatError`` (one line) when the dataset has no labels."""
        if not self.labeled:
            raise DataFormatError(
                f"{self.url} is unlabeled (converted without labels), so it cannot be used to "
                f"{purpose}; use it with predict, or convert the data with its labels"
            )

    @property
    def classes(self) -> np.ndarray | None:
        classes = self.attrs.get("classes")
        return None if classes is None else np.asarray(classes, dtype=np.float64)

    @property
    def label_names(self) -> list[str] | None:
        """The text labels' names (code i is ``label_names[i]``); None: numeric labels."""
        names = self.attrs.get("label_names")
        return None if names is None else [str(n) for n in names]

    @property
    def feature_names(self) -> list[str] | None:
        """The feature columns' names of a CSV/Parquet header (None: not converted from one,
        or hashed: its ``hashing`` attribute names the columns)."""
        names = self.attrs.get("feature_names")
        return None if names is None else [str(n) for n in names]

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

    def _group(self) -> zarr.Group:
        """The dataset's zarr group, opened read-only (for the arrays beside X and y that
        are read whole, once: statistics, class counts, the feature layout)."""
        loc = _Location(self.url, self.storage_options)
        return zarr.open_group(loc.store(read_only=True), mode="r")

    def chunk_class_counts(self) -> np.ndarray | None:
        """(n_chunks, n_classes) int64: each chunk's rows of each of :attr:`classes`, as the
        writer counted them; None for a regression, a dataset written before they were kept,
        or one with too many chunks x classes to keep them."""
        if self.classes is None:
            return None
        group = self._group()
        if "chunk_class_counts" not in group:
            return None
        return np.asarray(cast(zarr.Array, group["chunk_class_counts"])[...])

    def feature_stats(self, width: int | None = None) -> FeatureStats | None:
        """The columns' statistics the writer kept (:mod:`dsvm.data.stats`), or None for a
        dataset written before they were kept. ``width``: those of the first ``width``
        stored columns only (a fit of a renumbered store's used features,
        :mod:`dsvm.training.layout`: at 2^22 columns the whole arrays are 0.15 s of reading,
        against a few ms for a sample's used prefix)."""
        group = self._group()
        if STATS_GROUP not in group:
            return None
        return _read_stats(cast(zarr.Group, group[STATS_GROUP]), self.n_features, width)

    @property
    def feature_order(self) -> str:
        """"frequency" for a dataset whose features were renumbered when it was written
        (:mod:`dsvm.data.feature_layout`), else "given"."""
        return str(self.attrs.get("feature_order") or "given")

    def feature_layout(self, counts: bool = True) -> FeatureLayout | None:
        """The renumbering of a dataset written with ``feature_order="frequency"`` (its stored
        CSR indices are the new ids), read once and kept; None for the user's own ids.
        ``counts=False``: without the per-feature counts where the store records how many
        features are used (a fit and a prediction need only that and the order: at 2^22
        features the counts are 32 MB of the 48 MB read)."""
        if self.feature_order == "given":
            return None
        if self._layout is None or (counts and self._layout.counts is None):
            self._layout = _read_layout(cast(zarr.Group, self._group()[LAYOUT_GROUP]),
                                        self.feature_order, counts, self._layout)
        return self._layout

    def chunk_n_rows(self, i: int) -> int:
        i = self._check_chunk_index(i)
        return int(self.chunk_starts[i + 1] - self.chunk_starts[i])

    # ---- reading -------------------------------------------------------------------------
    def _open(self) -> dict[str, Any]:
        if self._handles is None:
            names = (["y"] if self.labeled else []) + (
                ["sample_weight"] if self.has_sample_weight else [])
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
        return _chunk_block(self, self._open(), self._check_chunk_index(i))

    def read_chunks(self, ids: Sequence[int]) -> list[DenseBlock | CSRBlock]:
        """Read row chunks ``ids`` as blocks whose X (dense) or indices and data (CSR) are views
        of one buffer, in the order given (one chunk: :meth:`read_chunk`).

        A pass over a window of chunks visits their rows in one order; over views of one
        buffer it runs on the span (:func:`dsvm.solvers.passes.span_of_views`) where separate
        chunks had to be concatenated into a copy of the window first (0.07-0.3 s per 200 MB
        on this machine, in the pass's own thread). zarr decodes each chunk straight into its
        slice of the buffer.
        """
        ids = [self._check_chunk_index(i) for i in ids]
        if len(ids) < 2:
            return [self.read_chunk(i) for i in ids]
        h = self._open()
        if self.layout == "dense":
            return _dense_into_one(self, h, ids)
        return _csr_into_one(self, h, ids)

    def read_chunk_labels(self, i: int) -> tuple[np.ndarray, np.ndarray | None]:
        """``(y, sample_weight)`` of row chunk ``i`` without reading X."""
        i = self._check_chunk_index(i)
        start, stop = int(self.chunk_starts[i]), int(self.chunk_starts[i + 1])
        return self._labels(self._open(), start, stop)

    def _labels(self, h: dict[str, Any], start: int, stop: int
                ) -> tuple[np.ndarray, np.ndarray | None]:
        # An unlabeled dataset stores no y; its blocks carry NaN labels, which no loss accepts.
        y = np.asarray(h["y"][start:stop]) if self.labeled else np.full(stop - start, np.nan)
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
            "chunk_bytes": int(self.nbytes * int(sizes.max()) / max(1, self.n_samples))
            if sizes.size else 0,
            "chunk_reason": self.attrs.get("chunk_reason", "not recorded"),
            "labels": ("unlabeled" if not self.labeled else "classes"
                       + (" (text: codes of label_names)" if self.label_names else "")
                       if self.attrs.get("classes") is not None else "targets"),
            "classes": self.attrs.get("classes"),
            **({"label_names": self.label_names} if self.label_names is not None else {}),
            "class_counts": self.attrs.get("class_counts"),
            "has_sample_weight": self.has_sample_weight,
            "nnz": self.nnz,
            "density": self.nnz / max(1, self.n_samples * self.n_features),
            "nbytes": self.nbytes,
            "nbytes_on_disk": self._disk_bytes(),
            "codec": self.attrs.get("codec", "blosc-lz4"),  # the only one before it was recorded
            "provenance": self.attrs.get("provenance"),
            "shuffled": bool(self.attrs.get("shuffled", False)),
            "shuffle_seed": self.attrs.get("shuffle_seed"),
            "feature_order": self._describe_order(),
        }
        return out

    def _describe_order(self) -> str:
        layout = self.feature_layout()
        return "given (the features' own ids)" if layout is None else layout.describe()

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
        state["_layout"] = None  # (n_features ints: not shipped with every task)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def _dense_into_one(ds: Dataset, h: dict[str, Any], ids: list[int]) -> list[DenseBlock | CSRBlock]:
    rows = [ds.chunk_n_rows(i) for i in ids]
    buf = np.empty((sum(rows), ds.n_features), dtype=h["X"].dtype)
    at = np.cumsum([0] + rows)
    return [_chunk_block(ds, h, i, into=(buf[at[j]:at[j + 1]],)) for j, i in enumerate(ids)]


def _csr_into_one(ds: Dataset, h: dict[str, Any], ids: list[int]) -> list[DenseBlock | CSRBlock]:
    assert ds.chunk_nnz_starts is not None
    nnz = [int(ds.chunk_nnz_starts[i + 1] - ds.chunk_nnz_starts[i]) for i in ids]
    indices = np.empty(sum(nnz), dtype=h["X/indices"].dtype)
    data = np.empty(sum(nnz), dtype=h["X/data"].dtype)
    at = np.cumsum([0] + nnz)
    return [_chunk_block(ds, h, i, into=(indices[at[j]:at[j + 1]], data[at[j]:at[j + 1]]))
            for j, i in enumerate(ids)]


def _chunk_block(ds: Dataset, h: dict[str, Any], i: int,
                 into: tuple[np.ndarray, ...] | None = None) -> DenseBlock | CSRBlock:
    """Row chunk ``i`` as a block. ``into``: where its large arrays (dense X; CSR indices and
    data) are decoded (:meth:`Dataset.read_chunks`' window buffer); else into new arrays,
    gathered with the small ones (y, sample_weight, indptr) in one trip to zarr."""
    start, stop = int(ds.chunk_starts[i]), int(ds.chunk_starts[i + 1])
    rows = slice(start, stop)
    wanted = {"y": rows} if ds.labeled else {}
    if ds.has_sample_weight:
        wanted["sample_weight"] = rows
    n0 = n1 = 0
    if ds.layout == "dense":
        large = {"X": rows}
    else:
        assert ds.chunk_nnz_starts is not None
        n0, n1 = int(ds.chunk_nnz_starts[i]), int(ds.chunk_nnz_starts[i + 1])
        # indptr[start:stop] is exactly one zarr chunk; its closing offset is in the table
        wanted["X/indptr"] = rows
        large = {"X/indices": slice(n0, n1), "X/data": slice(n0, n1)}
    got = _read_together(h, wanted if into is not None else {**wanted, **large})
    if into is not None:
        for (name, sel), out in zip(large.items(), into, strict=True):
            _read_into(h[name], sel.start, sel.stop, out)
            got[name] = out
    y = got["y"] if ds.labeled else np.full(stop - start, np.nan)
    sw = got.get("sample_weight")
    if ds.layout == "dense":
        X = got["X"]
        ds._check_lengths(i, X.shape[0], y, sw)
        return DenseBlock(X=X, y=y, sample_weight=sw)
    head = np.asarray(got["X/indptr"], dtype=np.int64)
    indptr = np.empty(head.shape[0] + 1, dtype=np.int64)
    indptr[:-1] = head - n0
    indptr[-1] = n1 - n0
    indices, data = got["X/indices"], got["X/data"]
    ds._check_lengths(i, stop - start, y, sw, indptr=indptr, n_indices=indices.shape[0],
                      n_data=data.shape[0])
    return CSRBlock(indptr=indptr, indices=indices, data=data, y=y, n_features=ds.n_features,
                    sample_weight=sw)


def _read_stats(stats: zarr.Group, n_features: int, width: int | None) -> FeatureStats:
    """The kept statistics (:meth:`Dataset.feature_stats`); ``width``: the per-column arrays'
    first ``width`` columns only."""
    per_column = (n_features,) if n_features > 1 else None  # (the scalars are (1,))
    cut = width is not None and per_column is not None and 0 <= width < n_features
    return stats_from_arrays({
        name: np.asarray(array[:width] if cut and array.shape == per_column else array[...])
        for name, array in stats.arrays()})


def _read_layout(arrays: zarr.Group, kind: str, counts: bool,
                 known: FeatureLayout | None) -> FeatureLayout:
    """A store's feature layout (:meth:`Dataset.feature_layout`): its order (``known``'s, if
    read before), and its counts when asked for or when the store records no ``n_used``."""
    used = arrays.attrs.get("n_used")  # (recorded since 2026-11-28)
    order = (known.order if known is not None
             else np.asarray(cast(zarr.Array, arrays["order"])[...], dtype=np.int32))
    kept = None
    if counts or used is None:
        kept = np.asarray(cast(zarr.Array, arrays["counts"])[...], dtype=np.int64)
    return FeatureLayout(order=order, counts=kept, kind=kind,
                         used=None if used is None else int(cast(int, used)))


def _read_into(array: Any, start: int, stop: int, out: np.ndarray) -> None:
    """``out[...] = array[start:stop]``, decoded by zarr straight into ``out``."""
    array.get_basic_selection(slice(start, stop), out=NDBuffer.from_numpy_array(out))


def _read_together(handles: dict[str, Any], wanted: dict[str, slice]) -> dict[str, np.ndarray]:
    """``handles[name][slice]`` for every entry of ``wanted``, read concurrently.

    Each synchronous zarr read is a round trip to zarr's event-loop thread and from there to
    its worker threads (file read, decode): ~0.5 ms on a 2-core machine even for a tiny chunk,
    against ~10 us to read the file. A chunk's arrays (y and X; y, indptr, indices and data for
    CSR) are therefore gathered in one trip (bench_codecs: per-chunk overhead). Falls back to
    one read after the other where zarr's internals differ from 3.1's.
    """
    arrays: dict[str, Any] = {name: getattr(handles[name], "_async_array", None)
                              for name in wanted}
    if any(a is None for a in arrays.values()):  # pragma: no cover - not zarr 3.0/3.1
        return {name: np.asarray(handles[name][sel]) for name, sel in wanted.items()}

    async def gather() -> list[Any]:
        return list(await asyncio.gather(
            *(arrays[name].getitem((sel,)) for name, sel in wanted.items())))

    return {name: np.asarray(value)
            for name, value in zip(wanted, _zarr_sync(gather()), strict=True)}


@functools.lru_cache(maxsize=32)
def _open_handles(key: tuple) -> dict[str, Any]:
    url, options, _date, _n, _nnz, names = key
    loc = _Location(url, json.loads(options))
    group = zarr.open_group(loc.store(read_only=True), mode="r")
    return {name: group[name] for name in names}


def _not_a_dataset(url: str, exc: BaseException, storage_options: dict | None) -> str:
    """Why ``url`` cannot be opened as a dataset, with what to do when it is raw rows (a user
    who gives ``dsvm train`` a Parquet or CSV file was told only that it is no zarr group)."""
    from dsvm.data.parquet_source import is_parquet_path

    convert = f"convert it first (dsvm convert {url} DATA.zarr"
    if is_parquet_path(url, storage_options):
        return (f"{url} is Parquet, not a dsvm dataset: {convert} --label-column NAME), or "
                "pass it to fit() with its label column")
    if "://" not in url and os.path.isfile(url):
        return f"{url} is a file, not a dsvm dataset (a folder): {convert})"
    if "://" not in url and os.path.isdir(url) and os.listdir(url):
        # (Spark's part files, a day's CSVs: convert reads such a folder as one input)
        return f"{url} is a folder of files, not a dsvm dataset: {convert})"
    return f"{url} is not a zarr group, so not a dsvm dataset ({exc})"


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
        raise DataLayoutError(_not_a_dataset(loc.url, exc, storage_options)) from exc
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
    # zarr types a group's member as Array | Group; these two are arrays in a dsvm dataset
    chunk_starts = np.asarray(cast(zarr.Array, group["chunk_starts"])[:], dtype=np.int64)
    nnz_starts = None
    if attrs["layout"] == "sparse":
        nnz_starts = np.asarray(cast(zarr.Array, group["X/chunk_nnz_starts"])[:], dtype=np.int64)
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
    expected: dict[str, tuple[int, ...]] = {"y": (n,)} if attrs.get("labeled", True) else {}
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
