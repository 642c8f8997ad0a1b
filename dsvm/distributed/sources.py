"""Where the rows of a fit come from: a zarr dataset, dask arrays, or arrays in memory.

Every source knows its shape, dtype and chunk count, and reads chunk ``i`` by itself
(``read_chunk``), so that a task handed the source and some chunk ids fetches its data directly:
from the store for a dataset, by computing that chunk's own part of the graph for dask arrays.
:func:`map_source` wraps a source so that every chunk passes through a kernel feature map right
after it is read, inside the task that reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import Block, CSRBlock, block_from_arrays
from dsvm.data.zarr_store import Dataset
from dsvm.exceptions import DataLayoutError
from dsvm.features.maps import FeatureMap
from dsvm.features.scaling import Scaling

DEFAULT_MEMORY_CHUNK_ROWS = 65536


class _ArraysShape:
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
        dt = np.dtype(self.X.dtype)
        return dt if dt in (np.float32, np.float64) else np.dtype(np.float64)


@dataclass
class ArraySource(_ArraysShape):
    """NumPy / SciPy arrays in this process, cut into row chunks of ``chunk_rows``."""

    X: Any
    y: np.ndarray
    sample_weight: np.ndarray | None = None
    chunk_rows: int = DEFAULT_MEMORY_CHUNK_ROWS

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
    """A dsvm zarr dataset: workers open it by URL and read their chunks themselves."""

    dataset: Dataset

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
        return np.asarray(classes, dtype=np.float64)

    def chunk_n_rows(self, i: int) -> int:
        return int(self.dataset.chunk_n_rows(i))

    def read_chunk(self, i: int) -> Block:
        return self.dataset.read_chunk(i)

    def read_chunks(self, ids: list[int]) -> list[Block]:
        """Several chunks in one buffer (:meth:`dsvm.data.dataset.Dataset.read_chunks`)."""
        return list(self.dataset.read_chunks(ids))

    def describe(self) -> str:
        return str(self.dataset.url)


def _known_lengths(a: Any) -> Any:
    """``a`` with its chunks' row counts known: arrays from DataFrames (``to_dask_array()``,
    ``.values``) have unknown ones, which the cluster counts (only the counts reach the
    client). The client waits through the no-workers watchdog, which dask's own
    ``compute_chunk_sizes()`` would not: on a cluster that lost its workers it waits forever."""
    if not any(np.isnan(c) for c in a.chunks[0]):
        return a
    import dask

    from dsvm.distributed.client import compute_watched

    parts = a.to_delayed()
    firsts = parts[:, 0] if a.ndim == 2 else parts  # one block per row chunk
    count = dask.delayed(_n_rows, pure=True)
    rows = compute_watched(*[count(p) for p in firsts], what="counting the rows of each chunk")
    # the same blocks, declared with their lengths (an identity task, fused into each read)
    return a.map_blocks(_same, chunks=(tuple(int(r) for r in rows), *a.chunks[1:]),
                        dtype=a.dtype)


def _n_rows(block: Any) -> int:
    return int(block.shape[0])


def _same(block: Any) -> Any:
    return block


def _holds_futures(collection: Any) -> bool:
    """Whether a dask collection's graph refers to data held by a cluster (persisted)."""
    from distributed import Future

    if collection is None:
        return False
    return any(isinstance(v, Future) for v in dict(collection.__dask_graph__()).values())


@dataclass
class DaskSource(_ArraysShape):
    """Dask arrays (X, y): a task computes the chunks it reads itself, never the client.

    Chunk ``i`` is that chunk's part of the graph: computed in the reading task with dask's
    synchronous scheduler (a chunk read from storage is read by that worker), or, when the
    arrays were persisted on the cluster, fetched from the worker that holds it.
    """

    X: Any
    y: Any
    sample_weight: Any = None
    feature_names: list[str] | None = None  # a DataFrame's columns
    labels: np.ndarray | None = None  # the distinct labels, when a first pass counted them

    def __post_init__(self) -> None:
        if self.X.ndim != 2:
            raise DataLayoutError(f"X must be 2-D; got a dask array of shape {self.X.shape}.")
        self.X, self.y, self.sample_weight = (
            None if a is None else _known_lengths(a) for a in (self.X, self.y, self.sample_weight))
        if len(self.X.chunks[1]) != 1:
            self.X = self.X.rechunk({1: -1})  # rows only: a chunk holds whole rows
        if self.y.chunks[0] != self.X.chunks[0]:
            self.y = self.y.rechunk((self.X.chunks[0],))
        if self.sample_weight is not None and self.sample_weight.chunks[0] != self.X.chunks[0]:
            self.sample_weight = self.sample_weight.rechunk((self.X.chunks[0],))
        if self.X.shape[0] != self.y.shape[0]:
            raise DataLayoutError(
                f"X has {self.X.shape[0]} rows but y has {self.y.shape[0]}; they must match."
            )
        self.on_cluster = any(_holds_futures(a) for a in (self.X, self.y, self.sample_weight))

    @property
    def n_chunks(self) -> int:
        return len(self.X.chunks[0])

    @property
    def nbytes(self) -> int:
        return int(self.X.nbytes)

    def label_values(self) -> np.ndarray:
        import dask.array as da

        if self.labels is not None:  # (a DataFrame's y chunk is its whole partition, read)
            return np.asarray(self.labels, dtype=np.float64)
        from dsvm.distributed.client import compute_watched

        # A reduction on the cluster: only the distinct labels come back.
        (labels,) = compute_watched(da.unique(self.y), what="finding the labels")
        return np.asarray(labels, dtype=np.float64)

    def chunk_n_rows(self, i: int) -> int:
        return int(self.X.chunks[0][i])

    def _parts(self, i: int) -> list[Any]:
        parts = [self.X.blocks[i], self.y.blocks[i]]
        if self.sample_weight is not None:
            parts.append(self.sample_weight.blocks[i])
        return parts

    def read_chunk(self, i: int) -> Block:
        if self.on_cluster:
            from distributed import worker_client

            with worker_client() as client:  # leaves the thread pool while it waits
                values = client.gather(client.compute(self._parts(i)))
        else:
            import dask

            values = dask.compute(*self._parts(i), scheduler="sync")
        X, y = values[0], np.asarray(values[1])
        sw = None if len(values) < 3 else np.asarray(values[2], dtype=np.float64)
        return block_from_arrays(X, y, sw)

    def describe(self) -> str:
        return "dask array"


@dataclass
class MappedSource:
    """A source seen through a feature map: every chunk is mapped right after it is read."""

    inner: Any
    fmap: FeatureMap | Scaling

    @property
    def n_samples(self) -> int:
        return int(self.inner.n_samples)

    @property
    def n_features(self) -> int:
        return int(self.fmap.n_output_features)

    @property
    def n_input_features(self) -> int:
        return int(self.inner.n_features)

    @property
    def on_cluster(self) -> bool:
        return bool(getattr(self.inner, "on_cluster", False))

    @property
    def n_chunks(self) -> int:
        return int(self.inner.n_chunks)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.inner.dtype)

    def label_values(self) -> np.ndarray:
        return np.asarray(self.inner.label_values())

    def chunk_n_rows(self, i: int) -> int:
        return int(self.inner.chunk_n_rows(i))

    def read_chunk(self, i: int) -> Block:
        return self.fmap.transform_block(self.inner.read_chunk(i))

    def read_chunks(self, ids: list[int]) -> list[Block]:
        read_many = getattr(self.inner, "read_chunks", None)
        blocks = [self.inner.read_chunk(i) for i in ids] if read_many is None else read_many(ids)
        return [self.fmap.transform_block(b) for b in blocks]

    def describe(self) -> str:
        if isinstance(self.fmap, Scaling):  # as the data is named in errors: by its origin
            return self.inner.describe()
        return f"{self.inner.describe()} through the {self.fmap.describe()}"


@dataclass
class ChunkSubset:
    """Some whole chunks of a source (``chunk_ids``), renumbered 0..k-1: the training or the
    held-out part of a fit with early stopping. No row moves: a task still reads its chunks
    from the source itself."""

    inner: Any
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

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.inner.dtype)

    @property
    def on_cluster(self) -> bool:
        return bool(getattr(self.inner, "on_cluster", False))

    def label_values(self) -> np.ndarray:
        return np.asarray(self.inner.label_values())

    def chunk_n_rows(self, i: int) -> int:
        return int(self.inner.chunk_n_rows(self.chunk_ids[i]))

    def read_chunk(self, i: int) -> Block:
        return self.inner.read_chunk(self.chunk_ids[i])

    def read_chunks(self, ids: list[int]) -> list[Block]:
        read_many = getattr(self.inner, "read_chunks", None)
        if read_many is None:
            return [self.read_chunk(i) for i in ids]
        return list(read_many([self.chunk_ids[i] for i in ids]))

    def describe(self) -> str:
        return f"{self.inner.describe()} (chunks {_ranges(self.chunk_ids)})"


def _ranges(ids: list[int]) -> str:
    shown = ", ".join(map(str, ids[:8]))
    return shown + (f", ... ({len(ids)} in all)" if len(ids) > 8 else "")


Source = ArraySource | DatasetSource | DaskSource | MappedSource | ChunkSubset


def base_source(source: Any) -> Any:
    """The source at the bottom of any wrappers (feature maps, chunk subsets)."""
    while hasattr(source, "inner"):
        source = source.inner
    return source


def map_source(source: Any, fmap: FeatureMap | Scaling | None) -> Any:
    """``source`` with every chunk passed through ``fmap`` when it is read (``None``: as is)."""
    return source if fmap is None else MappedSource(source, fmap)


def input_features(source: Any) -> int:
    """The features of the rows as given (before any feature map)."""
    return int(getattr(source, "n_input_features", source.n_features))
