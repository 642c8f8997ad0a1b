"""What a fit in this process does with a store's reads that a worker cannot: hold a small
store's rows for the whole fit, and read the next epoch's first window during this one's last.

Both wrap the fit's source for the lifetime of one :class:`dsvm.engine.local.LocalEngine` (a
fit), which drops them when the fit ends; a task shipped to a cluster never sees them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from dsvm.data.blocks import Block
from dsvm.data.sources import Source, SourceWrapper, base_source, read_chunks_of


class _ReadsOfStore(SourceWrapper):
    """A wrapper that changes how a store's chunks are read and nothing else: what it does
    not define is the wrapped source's (a store's ``nbytes``, ``recode``, ...)."""

    inner: Source

    @property
    def n_features(self) -> int:
        return int(self.inner.n_features)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # (fields not set yet, pickling probes)
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.inner,))  # (a copy elsewhere reads for itself)

    def describe(self) -> str:
        return self.inner.describe()


@dataclass(eq=False)
class HeldSource(_ReadsOfStore):
    """A small store's rows, read once for a fit and held: every chunk is read in one
    :meth:`~dsvm.data.dataset.Dataset.read_chunks` (one buffer) the first time any is asked
    for, and handed out from then on as views of that buffer, in any order or grouping.

    For a fit in this process on a store no larger than one shuffle window
    (:data:`~dsvm.data.window.WINDOW_BYTES`; :class:`dsvm.engine.local.LocalEngine`'s
    ``hold_bytes``): each epoch's window held all its rows in memory anyway, and reading
    them again was most of an epoch (zarr's read of 400,000 hashed SST-2 rows, 32 MB: 35-40
    ms, against 6 ms for the bare files and 65 ms for the whole SGD epoch after it). Views
    of one buffer also let a window's pass run on the span of its chunks
    (:func:`dsvm.solvers.passes.span_of_views`) without concatenating them. The streams'
    threads share it: the first read happens once, under a lock.
    """

    inner: Source
    _blocks: list[Block] | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def held(self) -> list[Block]:
        """Every chunk's block, read on the first call."""
        with self._lock:
            if self._blocks is None:
                self._blocks = read_chunks_of(self.inner, list(range(self.inner.n_chunks)))
            return self._blocks

    def read_chunk(self, i: int) -> Block:
        return self.held()[i]

    def read_chunks(self, ids: list[int]) -> list[Block]:
        blocks = self.held()
        return [blocks[i] for i in ids]


def holdable(source: Source, limit: int) -> bool:
    """Whether a fit in this process holds ``source``'s rows (:class:`HeldSource`, put under
    its wrappers by :func:`on_base`): a store of no more than ``limit`` bytes, not held yet."""
    return (reads_ahead_of(source)
            and int(getattr(base_source(source), "nbytes", limit + 1)) <= limit)


def holds_rows(source: Source) -> bool:
    """Whether ``source`` reads from a :class:`HeldSource` (under any wrappers)."""
    while isinstance(source, SourceWrapper):
        if isinstance(source, HeldSource):
            return True
        source = source.inner
    return False


# Reads asked for ahead and not yet taken that a fit keeps at most (one per stream, a few
# streams in this process; an older one is dropped, read, and never taken).
MAX_READS_AHEAD = 4


@dataclass(eq=False)
class ReadsAhead(_ReadsOfStore):
    """A store's rows read as usual, plus reads asked for ahead of time (:meth:`read_later`):
    a stream asks for its next epoch's first window while it trains on this epoch's last, so
    that the next epoch starts on rows already read instead of waiting for them.

    Within an epoch a stream reads its next window while it trains on the current one
    (:func:`dsvm.engine.tasks.iter_chunks`), but its first window was read with nothing to
    overlap: on the 1,000,000 x 2^20 Zipf store (336 MB of rows, windows of 4 chunks) the
    pass waited 0.04-0.1 s an epoch for it, and reading it ahead took the SGD epoch from 0.40
    to 0.34 s (bench_layout has it side by side). Memory stays at two windows a stream: the
    window read ahead is the one the next epoch would have read first, while the last window
    of this one trains. The rows are the ones a read then would give (the same store, the
    same chunks).
    """

    inner: Source
    _pending: OrderedDict[tuple[int, ...], Future[list[Block]]] = field(
        default_factory=OrderedDict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="dsvm-next-epoch"),
        init=False, repr=False)

    def read_later(self, ids: list[int]) -> None:
        """Start reading chunks ``ids`` (as one :meth:`read_chunks`) in the background."""
        key = tuple(int(i) for i in ids)
        with self._lock:
            if key in self._pending or not key:
                return
            self._pending[key] = self._pool.submit(read_chunks_of, self.inner, list(key))
            while len(self._pending) > MAX_READS_AHEAD:
                self._pending.popitem(last=False)

    def _taken(self, ids: list[int]) -> list[Block] | None:
        with self._lock:
            read = self._pending.pop(tuple(int(i) for i in ids), None)
        return None if read is None else read.result()

    def read_chunk(self, i: int) -> Block:
        blocks = self._taken([i])
        return self.inner.read_chunk(i) if blocks is None else blocks[0]

    def read_chunks(self, ids: list[int]) -> list[Block]:
        blocks = self._taken(ids)
        return read_chunks_of(self.inner, ids) if blocks is None else blocks

    def close(self) -> None:
        """Drop the reads not taken (waiting for one in flight)."""
        with self._lock:
            self._pending.clear()
        self._pool.shutdown(wait=True)


def reads_ahead_of(source: Source) -> bool:
    """Whether a fit in this process can read ``source``'s next windows ahead across epochs
    (:class:`ReadsAhead`): a store's rows, read by this process, not held
    (:class:`HeldSource`)."""
    base = base_source(source)
    return not (holds_rows(source) or base.in_memory or base.on_cluster or base.dataset is None)
