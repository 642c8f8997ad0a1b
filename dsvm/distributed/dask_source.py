"""Dask arrays as a source (:class:`dsvm.data.sources.Source`): a task computes the chunks it
reads itself, never the client.

It lives here, not with the other sources in :mod:`dsvm.data.sources`, because it needs the
Client: chunk lengths and labels are counted on the cluster through the no-workers watchdog, and
a task reads a persisted chunk from the worker that holds it (``worker_client``).
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dsvm.data.attrs import MAX_CLASSES
from dsvm.data.blocks import Block, block_from_arrays
from dsvm.data.sources import ArraysShape
from dsvm.exceptions import DataLayoutError

logger = logging.getLogger(__name__)


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


def spans_partitions(collection: Any) -> bool:
    """Whether a chunk of ``collection`` is computed from many of its graph's inputs: a merge,
    a shuffle or a ``set_index`` (every output partition takes rows from every input one),
    unlike reading, ``map_partitions``, ``assign`` or a broadcast join. Such a chunk cannot be
    computed by the task that reads it (:meth:`DaskSource.read_chunks`): a P2P shuffle runs
    only through the scheduler (a merge of two Dask DataFrames failed the fit with
    ``P2P ... failed during transfer phase``), and a task-based one would redo the whole
    shuffle for every chunk. Judged on the first and last chunks' graphs: more than one input
    reached, and at least half of all of them."""
    from dask.core import get_dependencies

    parts = np.asarray(collection.to_delayed(), dtype=object).ravel()
    if len(parts) < 2:
        return False
    graph = dict(parts[0].__dask_graph__())
    roots = {k for k in graph if not get_dependencies(graph, k)}
    for part in (parts[0], parts[-1]):
        reached = roots & _ancestors(graph, part.key)
        if len(reached) > 1 and 2 * len(reached) >= len(roots):
            return True
    return False


def _ancestors(graph: dict[Any, Any], key: Any) -> set[Any]:
    """``key`` and every key it depends on, in ``graph``."""
    from dask.core import get_dependencies

    seen: set[Any] = set()
    stack = [key]
    while stack:
        k = stack.pop()
        if k not in seen:
            seen.add(k)
            stack.extend(get_dependencies(graph, k))
    return seen


def held_if_spanning(*collections: Any) -> tuple[Any, ...]:
    """``collections`` (one graph: a frame, or X, y and weights of one), persisted where they
    are computed (the active cluster, else this process) when a chunk spans partitions
    (:func:`spans_partitions`); as they are otherwise. Persisted, each chunk is computed once
    and held by a worker, and the fit's tasks fetch it from there (``DaskSource.on_cluster``):
    the rows never pass through the client, but the whole collection is held in the
    workers' memory for the fit (dask spills it to their disks past their memory limits)."""
    from dask import is_dask_collection

    present = [c for c in collections if is_dask_collection(c)]
    if not any(not _holds_futures(c) and spans_partitions(c) for c in present):
        return collections
    from dsvm.distributed.client import active_client

    logger.info("the input's chunks each take rows from many of its partitions (a merge, "
                "shuffle or set_index): computed once and held on the cluster for the fit")
    client = active_client()
    if client is None:
        import dask

        held = iter(dask.persist(*present))
    else:
        held = iter(client.persist(present))
    return tuple(next(held) if is_dask_collection(c) else c for c in collections)


def _holds_futures(collection: Any) -> bool:
    """Whether a dask collection's graph refers to data held by a cluster (persisted)."""
    from distributed import Future

    if collection is None:
        return False
    return any(isinstance(v, Future) for v in dict(collection.__dask_graph__()).values())


@dataclass
class DaskSource(ArraysShape):
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
    # (n_chunks, len(labels)) each chunk's rows of each label, when a first pass counted them
    class_counts: np.ndarray | None = None
    # text labels: y holds their codes (indices into these names), for the fit's messages
    label_names: np.ndarray | None = None
    # the labels' own dtype (bool, integers) for the classes a fit shows, as NumPy's y keeps
    # them (None: y's own, float64 for a frame's column, which is read as float64)
    label_dtype: np.dtype | None = None
    on_cluster: bool = field(init=False, default=False, repr=False, compare=False)
    _graphs: Any = field(init=False, default=None, repr=False, compare=False)

    in_memory = False
    dataset = None

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
        if self.label_dtype is None and self.y.dtype.kind in "biu":
            self.label_dtype = np.dtype(self.y.dtype)

    @property
    def n_chunks(self) -> int:
        return len(self.X.chunks[0])

    @property
    def nbytes(self) -> float:
        """The rows' bytes; NaN (not known) for sparse chunks, where dask's figure is the
        dense array's: a hashed DataFrame's 2^18 columns counted 2 MB a row, which shrank
        every such fit's shuffle window to one chunk and made the memory check refuse it."""
        import scipy.sparse as sp

        if sp.issparse(getattr(self.X, "_meta", None)):
            return math.nan
        return float(self.X.nbytes)

    def label_values(self) -> np.ndarray:
        import dask.array as da

        if self.labels is not None:  # (a DataFrame's y chunk is its whole partition, read)
            return self._shown(self.labels)
        from dsvm.distributed.client import compute_watched

        # A reduction on the cluster: only the distinct labels come back.
        (labels,) = compute_watched(da.unique(self.y), what="finding the labels")
        return self._shown(labels)

    def _shown(self, labels: Any) -> np.ndarray:
        """The distinct labels in their own dtype: a bool y's classes are False and True,
        not 0.0 and 1.0 (the values the kernels see are float64 whatever this is)."""
        values = np.asarray(labels, dtype=np.float64)
        return values if self.label_dtype is None else values.astype(self.label_dtype)

    def label_counts(self) -> tuple[np.ndarray, np.ndarray]:
        import dask.array as da

        from dsvm.distributed.client import compute_watched

        if self.labels is not None and self.class_counts is not None:  # (counted already)
            return np.asarray(self.labels, np.float64), self.class_counts.sum(axis=0)

        # one reduction for both (computing each alone read the labels twice)
        labels, counts = compute_watched(*da.unique(self.y, return_counts=True),
                                         what="counting the classes")
        return np.asarray(labels, np.float64), np.asarray(counts)

    def chunk_class_counts(self) -> np.ndarray | None:
        """(n_chunks, n_classes) each chunk's rows of each class (the classes sorted), from one
        reduction on the cluster: each chunk's distinct labels and their counts come back, not
        its labels. None when the labels have more distinct values than a classifier's
        (:data:`dsvm.data.attrs.MAX_CLASSES`). Also records the distinct labels, so that the
        fit does not count them again."""
        import dask

        from dsvm.distributed.client import compute_watched

        if self.labels is not None and self.class_counts is not None:  # (counted already)
            return self.class_counts
        per_chunk = [dask.delayed(_distinct_counts)(b) for b in self.y.to_delayed().ravel()]
        found = compute_watched(*per_chunk, what="counting each chunk's classes")
        classes = np.unique(np.concatenate([v for v, _ in found])) if found else np.empty(0)
        if len(classes) > MAX_CLASSES or not np.isfinite(classes).all():
            return None
        counts = np.zeros((len(found), len(classes)), dtype=np.int64)
        for i, (values, n) in enumerate(found):
            counts[i, np.searchsorted(classes, values)] = n
        if self.labels is None:
            self.labels = classes
        if np.array_equal(self.labels, classes):  # (label_counts needs no pass of its own)
            self.class_counts = counts
        return counts

    def chunk_n_rows(self, i: int) -> int:
        return int(self.X.chunks[0][i])

    def _parts(self, i: int) -> list[Any]:
        parts = [self.X.blocks[i], self.y.blocks[i]]
        if self.sample_weight is not None:
            parts.append(self.sample_weight.blocks[i])
        return parts

    def read_chunk(self, i: int) -> Block:
        return self.read_chunks([i])[0]

    def read_chunks(self, ids: list[int]) -> list[Block]:
        """Chunks ``ids``, computed together: on a cluster one graph and one gather for all of
        them, where each chunk on its own cost a round trip through the scheduler (a window
        of 8 persisted chunks, LocalCluster of 2 here: 20-30 ms a chunk one by one, 6-14 ms
        together)."""
        per = 2 if self.sample_weight is None else 3
        if self.on_cluster:
            from distributed import worker_client

            parts = [p for i in ids for p in self._parts(i)]
            with worker_client() as client:  # leaves the thread pool while it waits
                values = client.gather(client.compute(parts))
        else:
            values = self._chunk_graphs().compute(ids)
        return [_block(values[k:k + per]) for k in range(0, len(values), per)]

    def _chunk_graphs(self) -> _ChunkGraphs:
        with _GRAPHS_LOCK:  # (a stream's read-ahead thread reads beside it)
            if self._graphs is None:
                arrays = [a for a in (self.X, self.y, self.sample_weight) if a is not None]
                self._graphs = _ChunkGraphs(arrays)
            return self._graphs

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_graphs"] = None  # (made again where the source is read)
        return state

    def describe(self) -> str:
        return "dask array"


_GRAPHS_LOCK = threading.Lock()


class _ChunkGraphs:
    """The arrays' tasks, optimized and made a plain graph once in the process that reads
    them, and each chunk's own tasks taken from it as the chunk is read.

    Computing ``X.blocks[i]`` (``dask.compute``) optimized and culled the arrays' whole graph
    for every chunk read: O(chunks) a read, O(chunks^2) a pass. Over a DataFrame of 1,000
    Parquet files of 100 rows a read took 71 ms here against 8 ms this way."""

    def __init__(self, arrays: list[Any]) -> None:
        import dask

        optimized = dask.optimize(*arrays)
        self.graph: dict[Any, Any] = {}
        for a in optimized:
            self.graph.update(dict(a.__dask_graph__()))
        # each array's key of chunk i (X is one block wide: DaskSource rechunks it so)
        self.keys = [[k[0] if a.ndim == 2 else k for k in a.__dask_keys__()] for a in optimized]

    def compute(self, ids: list[int]) -> list[Any]:
        """Chunks ``ids``' arrays (X, y[, sample_weight] for each), with dask's synchronous
        scheduler on their own tasks only."""
        from dask.local import get_sync
        from dask.optimization import cull

        keys = [keys[i] for i in ids for keys in self.keys]
        tasks, _ = cull(self.graph, keys)
        return list(get_sync(tasks, keys))


def _block(values: Any) -> Block:
    """A chunk's computed parts (X, y and maybe sample weights) as a block."""
    sw = None if len(values) < 3 else np.asarray(values[2], dtype=np.float64)
    return block_from_arrays(values[0], np.asarray(values[1]), sw)


def _distinct_counts(y: Any) -> tuple[np.ndarray, np.ndarray]:
    """A chunk's distinct labels (float64) and their counts."""
    values, counts = np.unique(np.asarray(y, dtype=np.float64), return_counts=True)
    return values, counts
