"""Where the rows of a fit come from: the :class:`Source` protocol and its in-process kinds.

Every source knows its shape, dtype and chunk count, and reads chunk ``i`` by itself
(``read_chunk``), so that a task handed the source and some chunk ids fetches its data directly:
from the store for a dataset, from memory for arrays, by computing that chunk's own part of the
graph for dask arrays (:class:`dsvm.distributed.dask_source.DaskSource`, which needs the Client
and so lives with it). :func:`map_source` wraps a source so that every chunk passes through a
feature map or a scaling right after it is read, inside the task that reads it;
:class:`ChunkSubset` is some whole chunks of one.

Training asks a source what it needs instead of switching on its class: where its rows are
(``in_memory``, ``on_cluster``, ``dataset``), its labels (``label_values``, ``label_counts``)
and a DataFrame's column names (``feature_names``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeGuard

import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import Block, CSRBlock, block_from_arrays
from dsvm.data.zarr_store import Dataset
from dsvm.exceptions import DataLayoutError

DEFAULT_MEMORY_CHUNK_ROWS = 65536


class Source(Protocol):
    """The rows of a fit, in chunks that a task reads by number.

    Optional members, looked up where they are used: ``read_chunks(ids)`` (several chunks into
    one buffer: a zarr dataset's window), ``nbytes`` (the rows' uncompressed bytes: sizes the
    shuffle window), ``inner`` (a wrapper's source, :func:`base_source`) and
    ``n_input_features`` (the features before a map, :func:`input_features`).
    """

    @property
    def n_samples(self) -> int: ...

    @property
    def n_features(self) -> int: ...

    @property
    def n_chunks(self) -> int: ...

    @property
    def dtype(self) -> np.dtype: ...

    @property
    def in_memory(self) -> bool:
        """Whether the rows are arrays in this process's memory (they train here)."""

    @property
    def on_cluster(self) -> bool:
        """Whether the rows are held by a cluster's workers (a task fetches them there)."""

    @property
    def dataset(self) -> Dataset | None:
        """The zarr dataset the rows are stored in, or None."""

    @property
    def feature_names(self) -> list[str] | None:
        """A DataFrame's column names (``feature_names_in_``), or None."""

    def label_values(self) -> np.ndarray:
        """The distinct labels (float64)."""

    def label_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(distinct labels as float64, rows of each): ``class_weight='balanced'``."""

    def chunk_n_rows(self, i: int) -> int: ...

    def read_chunk(self, i: int) -> Block: ...

    def describe(self) -> str:
        """How errors name the rows (a URL, "array", ...)."""


class ChunkMap(Protocol):
    """What a :class:`MappedSource` passes every chunk through: a kernel feature map
    (:class:`dsvm.features.maps.FeatureMap`) or the fit's scaling
    (:class:`dsvm.features.scaling.Scaling`)."""

    @property
    def n_output_features(self) -> int: ...

    @property
    def named_in_descriptions(self) -> bool:
        """Whether the rows are described through the map ("... through the RFF map"); a
        scaling is not named: errors name the data by its origin."""

    def transform_block(self, block: Block) -> Block: ...

    def describe(self) -> str: ...


def is_source(x: object) -> TypeGuard[Source]:
    """Whether ``x`` is a source rather than the user's input before it becomes one (looked up
    on its class, so that a DataFrame's columns are never taken for members)."""
    return all(callable(getattr(type(x), name, None))
               for name in ("read_chunk", "chunk_n_rows", "label_values", "label_counts",
                            "describe"))


def float_dtype(dtype: Any) -> np.dtype:
    """The float dtype rows of ``dtype`` train in (float32 stays, anything else is float64)."""
    dt = np.dtype(dtype)
    return dt if dt in (np.float32, np.float64) else np.dtype(np.float64)


class ArraysShape:
    """Shape and dtype of a source backed by an array-like ``X`` (NumPy, SciPy or dask)."""

    X: Any

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def dtype(self) -> np.dtype:
        return float_dtype(self.X.dtype)


@dataclass
class ArraySource(ArraysShape):
    """NumPy / SciPy arrays in this process, cut into row chunks of ``chunk_rows``."""

    X: Any
    y: np.ndarray
    sample_weight: np.ndarray | None = None
    chunk_rows: int = DEFAULT_MEMORY_CHUNK_ROWS

    in_memory = True
    on_cluster = False
    dataset = None
    feature_names = None

    def __post_init__(self) -> None:
        if self.X.shape[0] != self.y.shape[0]:
            raise DataLayoutError(
                f"X has {self.X.shape[0]} rows but y has {self.y.shape[0]}; they must match."
            )
        if sp.issparse(self.X):
            self.X = _canonical_csr(self.X)

    @property
    def n_chunks(self) -> int:
        return max(1, -(-self.n_samples // self.chunk_rows))

    @property
    def nbytes(self) -> int:
        X = self.X
        return int(X.data.nbytes + X.indices.nbytes if sp.issparse(X) else X.nbytes)

    def label_values(self) -> np.ndarray:
        return np.unique(self.y)

    def label_counts(self) -> tuple[np.ndarray, np.ndarray]:
        labels, counts = np.unique(np.asarray(self.y, dtype=np.float64), return_counts=True)
        return labels, counts

    def chunk_n_rows(self, i: int) -> int:
        return max(0, min(self.n_samples, (i + 1) * self.chunk_rows) - i * self.chunk_rows)

    def read_chunk(self, i: int) -> Block:
        lo, hi = i * self.chunk_rows, min(self.n_samples, (i + 1) * self.chunk_rows)
        sw = None if self.sample_weight is None else self.sample_weight[lo:hi]
        if sp.issparse(self.X):
            return _csr_rows(self.X, lo, hi, self.y[lo:hi], sw)
        return block_from_arrays(self.X[lo:hi], self.y[lo:hi], sw)

    def describe(self) -> str:
        return "array"


def _canonical_csr(X: Any) -> sp.csr_matrix:
    """``X`` as a CSR matrix with sorted int32 indices and float data, converted once for the
    whole fit (a copy only where the caller's matrix does not fit already; never mutated)."""
    # The caller's csr_matrix itself where it fits: scipy caches has_sorted_indices on it, so
    # fitting the same matrix again skips the O(nnz) scan (68 ms at 16M entries).
    csr = X if type(X) is sp.csr_matrix else sp.csr_matrix(X)
    data, indices = csr.data, csr.indices
    if data.dtype not in (np.float32, np.float64):
        data = data.astype(np.float64)
    if indices.dtype != np.int32 and csr.shape[1] <= np.iinfo(np.int32).max:
        indices = indices.astype(np.int32)
    if data is not csr.data or indices is not csr.indices:
        csr = sp.csr_matrix((data, indices, csr.indptr), shape=csr.shape)
    if not csr.has_sorted_indices:
        csr = csr.sorted_indices()  # a sorted copy
    return csr


def _csr_rows(X: sp.csr_matrix, lo: int, hi: int, y: np.ndarray,
              sw: np.ndarray | None) -> Block:
    """Rows lo:hi of a canonical CSR matrix as a block of *views* of its indices and data.

    Slicing the matrix copied every stored entry once per chunk and epoch (and a window
    concatenated them once more); views let a window of chunks be passed as one span of the
    caller's arrays (:func:`dsvm.solvers.passes.span_of_views`). Only the indptr is new.
    """
    a, b = int(X.indptr[lo]), int(X.indptr[hi])
    return CSRBlock(indptr=X.indptr[lo:hi + 1].astype(np.int64) - a, indices=X.indices[a:b],
                    data=X.data[a:b], y=np.asarray(y, dtype=np.float64),
                    n_features=int(X.shape[1]),
                    sample_weight=None if sw is None else np.asarray(sw, dtype=np.float64))


@dataclass
class DatasetSource:
    """A dsvm zarr dataset: workers open it by URL and read their chunks themselves.

    ``recode``: text labels stored as codes of the dataset's ``label_names``, read as codes
    of a model's classes (stored code c becomes ``recode[c]``): a test set converted alone
    names a subset of the classes, coded in its own order. None: labels as stored."""

    dataset: Dataset
    recode: np.ndarray | None = None

    in_memory = False
    on_cluster = False

    @property
    def feature_names(self) -> list[str] | None:
        """A CSV/Parquet header's feature names, kept at conversion; None for other data."""
        return self.dataset.feature_names

    @property
    def n_samples(self) -> int:
        return int(self.dataset.n_samples)

    @property
    def n_features(self) -> int:
        return int(self.dataset.n_features)

    @property
    def n_chunks(self) -> int:
        return int(self.dataset.n_chunks)

    @property
    def nbytes(self) -> int:
        return int(self.dataset.nbytes)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.dataset.dtype)

    def label_values(self) -> np.ndarray:
        if not getattr(self.dataset, "labeled", True):
            self.dataset.require_labels("train a classifier")
        classes = self.dataset.classes
        if classes is None:
            raise ValueError(
                f"Dataset {self.dataset.url} records no class labels (more than 1000 distinct "
                "target values: a regression dataset?); SVMClassifier needs class labels."
            )
        return np.sort(self._recoded(np.asarray(classes, dtype=np.float64)))

    def label_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """The counts the dataset records (its ``class_counts`` attribute: no pass over it)."""
        recorded = self.dataset.attrs.get("class_counts")
        classes = self.dataset.classes
        if recorded is None or classes is None:
            raise ValueError("class_weight='balanced' needs the class counts of "
                             f"{self.describe()}, which it does not record (convert it again "
                             "with this dsvm).")
        values = self._recoded(np.asarray(classes, dtype=np.float64))
        order = np.argsort(values, kind="stable")
        return values[order], np.asarray(recorded)[order]

    def _recoded(self, y: np.ndarray) -> np.ndarray:
        return y if self.recode is None else self.recode[y.astype(np.int64)]

    def _recoded_block(self, block: Block) -> Block:
        return block if self.recode is None else replace(block, y=self._recoded(block.y))

    def chunk_n_rows(self, i: int) -> int:
        return int(self.dataset.chunk_n_rows(i))

    def read_chunk(self, i: int) -> Block:
        return self._recoded_block(self.dataset.read_chunk(i))

    def read_chunks(self, ids: list[int]) -> list[Block]:
        """Several chunks in one buffer (:meth:`dsvm.data.dataset.Dataset.read_chunks`)."""
        return [self._recoded_block(b) for b in self.dataset.read_chunks(ids)]

    def describe(self) -> str:
        return str(self.dataset.url)


class SourceWrapper:
    """What a source wrapping another (``inner``) takes from it unchanged."""

    inner: Source

    @property
    def n_samples(self) -> int:
        return int(self.inner.n_samples)

    @property
    def n_chunks(self) -> int:
        return int(self.inner.n_chunks)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.inner.dtype)

    @property
    def in_memory(self) -> bool:
        return bool(self.inner.in_memory)

    @property
    def on_cluster(self) -> bool:
        return bool(self.inner.on_cluster)

    @property
    def dataset(self) -> Dataset | None:
        return self.inner.dataset

    @property
    def feature_names(self) -> list[str] | None:
        return self.inner.feature_names

    def label_values(self) -> np.ndarray:
        return np.asarray(self.inner.label_values())

    def label_counts(self) -> tuple[np.ndarray, np.ndarray]:
        return self.inner.label_counts()

    def chunk_n_rows(self, i: int) -> int:
        return int(self.inner.chunk_n_rows(i))


@dataclass
class MappedSource(SourceWrapper):
    """A source seen through a feature map: every chunk is mapped right after it is read."""

    inner: Source
    fmap: ChunkMap

    @property
    def n_features(self) -> int:
        return int(self.fmap.n_output_features)

    @property
    def n_input_features(self) -> int:
        return input_features(self.inner)  # (the rows as given, under every map)

    @property
    def feature_names(self) -> list[str] | None:
        own = getattr(self.fmap, "feature_names", None)  # (a map that names its columns)
        return self.inner.feature_names if own is None else list(own)

    def read_chunk(self, i: int) -> Block:
        return self.fmap.transform_block(self.inner.read_chunk(i))

    def read_chunks(self, ids: list[int]) -> list[Block]:
        return [self.fmap.transform_block(b) for b in read_chunks_of(self.inner, ids)]

    def describe(self) -> str:
        if not self.fmap.named_in_descriptions:  # a scaling: the data is named by its origin
            return self.inner.describe()
        return f"{self.inner.describe()} through the {self.fmap.describe()}"


@dataclass
class ChunkSubset(SourceWrapper):
    """Some whole chunks of a source (``chunk_ids``), renumbered 0..k-1: the training or the
    held-out part of a fit with early stopping. No row moves: a task still reads its chunks
    from the source itself. (Its labels are the whole source's.)"""

    inner: Source
    chunk_ids: list[int]

    @property
    def n_samples(self) -> int:
        return sum(self.inner.chunk_n_rows(c) for c in self.chunk_ids)

    @property
    def n_features(self) -> int:
        return int(self.inner.n_features)

    @property
    def n_chunks(self) -> int:
        return len(self.chunk_ids)

    def chunk_n_rows(self, i: int) -> int:
        return int(self.inner.chunk_n_rows(self.chunk_ids[i]))

    def read_chunk(self, i: int) -> Block:
        return self.inner.read_chunk(self.chunk_ids[i])

    def read_chunks(self, ids: list[int]) -> list[Block]:
        return read_chunks_of(self.inner, [self.chunk_ids[i] for i in ids])

    def describe(self) -> str:
        return f"{self.inner.describe()} (chunks {_ranges(self.chunk_ids)})"


def read_chunks_of(source: Source, ids: list[int]) -> list[Block]:
    """Chunks ``ids`` of ``source``: in one read where it can (``read_chunks``: a store's
    chunks into one buffer, a persisted dask array's in one round trip), else one by one."""
    read_many = getattr(source, "read_chunks", None)
    return [source.read_chunk(i) for i in ids] if read_many is None else list(read_many(ids))


def on_base(source: Source, base: Source) -> Source:
    """``source``'s wrappers (scalings, feature maps, chunk subsets: they still apply at every
    read), all of them, around ``base`` instead of their own bottom source."""
    if isinstance(source, (MappedSource, ChunkSubset)):
        return replace(source, inner=on_base(source.inner, base))
    return base


def _ranges(ids: list[int]) -> str:
    shown = ", ".join(map(str, ids[:8]))
    return shown + (f", ... ({len(ids)} in all)" if len(ids) > 8 else "")


def base_source(source: Source) -> Source:
    """The source at the bottom of any wrappers (feature maps, chunk subsets)."""
    while isinstance(source, SourceWrapper):
        source = source.inner
    return source


def rewrapped(source: Source, inner: Source) -> Source:
    """``source``'s wrapper (a map, a chunk subset) around ``inner`` instead of its own inner
    source; ``inner`` itself where ``source`` wraps nothing."""
    return replace(source, inner=inner) if isinstance(source, (MappedSource, ChunkSubset)) \
        else inner


def map_source(source: Source, fmap: ChunkMap | None) -> Source:
    """``source`` with every chunk passed through ``fmap`` when it is read (``None``: as is)."""
    return source if fmap is None else MappedSource(source, fmap)


def input_features(source: Source) -> int:
    """The features of the rows as given (before any feature map)."""
    return int(getattr(source, "n_input_features", source.n_features))
