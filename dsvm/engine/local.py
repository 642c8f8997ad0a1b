"""Engines run tasks over the chunks of a source: the protocol, and the engine of this process.

One protocol serves every computation of a fit (stochastic epochs, NESVM's gradient sums,
calibration, landmark sampling, evaluation, prediction):

``reduce(task, source, groups, combine, name=...)``
    runs ``task(source, group)`` once per group of chunk ids and combines the partial results
    with ``combine(list_of_partials)`` (associative: on a cluster it is applied in a tree on the
    workers, ``split_every`` at a time); returns the final partial. With ``finish=``, the root
    node applies ``finish(partials, *finish_inputs)`` to its partials instead of combining
    them (as dask's reductions apply ``aggregate``), and that is the result.
``map(task, source, chunks, name=...)``
    runs ``task(source, [chunk])`` per chunk and yields the results in chunk order, with a
    bounded number in flight.

A value can also stay where it was computed, between calls (``keep=True``, :meth:`hold`,
:meth:`apply`): on a cluster a *held* value is a future, which later tasks take as an input
(``inputs=``, ``finish_inputs=``) without it passing through this process, and which
:meth:`fetch` brings here only when asked, and :meth:`release` gives up. The epoch loop keeps
the model so: an epoch's tasks take the previous epoch's future, the root of its combine
finalizes the next state where the partials meet, and only the epoch's statistics come to the
client (#12 item 3); since a future can be taken before it is computed, the loop submits the
next epoch while one runs (``runs_ahead``). In this process a held value is the value itself,
computed when the call returns.

Both engines (this module's :class:`LocalEngine`, :class:`dsvm.distributed.engine.DaskEngine`)
run the same task objects (:mod:`dsvm.engine.tasks`), so a fit in memory and a fit on a cluster
with the same seed, streams and chunks give the same model (up to the grouping of float64 sums
in the combine).

Nothing here knows the Dask client: a fit on NumPy/SciPy arrays imports no ``dsvm.distributed``
module (tests/test_layering.py checks it). The cluster's engine, its watchdog and its
sources are in :mod:`dsvm.distributed`, loaded when a fit uses a cluster.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np

from dsvm.data.held import HeldSource, ReadsAhead, holdable, holds_rows, reads_ahead_of
from dsvm.data.sources import Source, base_source, on_base

# task(source, chunk_ids, *inputs): the inputs are a reduce's ``inputs`` (held values)
Task = Callable[..., Any]
Combine = Callable[[list[Any]], Any]


class Engine(Protocol):
    """Where a fit's tasks run (see the module notes)."""

    n_workers: int
    runs_ahead: bool  # whether a call returns before its tasks have run (held values)

    def reduce(self, task: Task, source: Source, groups: Sequence[Sequence[int]],
               combine: Combine, *, name: str, what: str | None = None,
               combine_name: str | None = None, inputs: Sequence[Any] = (),
               finish: Callable[..., Any] | None = None, finish_inputs: Sequence[Any] = (),
               keep: bool = False) -> Any: ...

    def map(self, task: Task, source: Source, chunks: Sequence[int], *, name: str,
            what: str | None = None) -> Iterator[Any]: ...

    def hold(self, value: Any, *, name: str) -> Any: ...

    def apply(self, fn: Callable[..., Any], *args: Any, name: str) -> Any: ...

    def fetch(self, held: Any, *, what: str) -> Any: ...

    def release(self, *held: Any) -> None: ...


def spread(n_chunks: int, n_groups: int) -> list[list[int]]:
    """Chunks 0..n_chunks-1 cut into at most ``n_groups`` contiguous groups (none empty)."""
    groups = np.array_split(np.arange(n_chunks), max(1, min(n_groups, n_chunks)))
    return [[int(c) for c in g] for g in groups if len(g)]


class LocalEngine:
    """Runs tasks in this process (NumPy/SciPy input, no cluster).

    With several groups (``n_streams > 1``) they run in threads, up to one per core: the numba
    passes release the GIL, so in-memory training uses the machine's cores the way a cluster
    uses its workers. The result does not depend on the thread count: each task is the same
    deterministic function of its inputs as on a cluster, and the partials are combined in
    group order.
    """

    n_workers = 1  # the default stream count for in-memory input: one, as in scikit-learn
    runs_ahead = False  # every call has run when it returns

    def __init__(self, hold_bytes: int | None = None) -> None:
        # A fit's engine (``hold_bytes`` given) reads a store of at most that many bytes once
        # for all its calls (dsvm.data.held.HeldSource), and a larger one's next epoch's first
        # windows ahead (ReadsAhead); None: every read as the task asks for it.
        self.hold_bytes = hold_bytes
        self._sources: dict[int, tuple[Source, Source]] = {}  # id: the source, as read here
        self._bases: dict[int, tuple[Source, HeldSource]] = {}  # id(store's source): held

    def holding(self, source: Source) -> Source:
        """``source`` as this engine reads it (the same object for every call of a fit: what
        it holds or has read ahead stays with it). The sources are kept, so an id stays theirs."""
        if self.hold_bytes is None:
            return source
        kept = self._sources.get(id(source))
        if kept is None:
            kept = self._sources[id(source)] = (source, self._read_form(source))
        return kept[1]

    def holds(self, source: Source) -> bool:
        """Whether this engine holds ``source``'s rows for the fit (the same blocks, the same
        memory, every epoch)."""
        return holds_rows(self.holding(source))

    def _read_form(self, source: Source) -> Source:
        assert self.hold_bytes is not None
        if holdable(source, self.hold_bytes):
            base = base_source(source)
            held = self._bases.get(id(base))
            if held is None:
                held = self._bases[id(base)] = (base, HeldSource(base))
            return on_base(source, held[1])
        return ReadsAhead(source) if reads_ahead_of(source) else source

    def close(self) -> None:
        """Let go of the rows held and read ahead (the fit is over)."""
        for _, form in self._sources.values():
            if isinstance(form, ReadsAhead):
                form.close()
        self._sources.clear()
        self._bases.clear()

    def reduce(self, task: Task, source: Source, groups: Sequence[Sequence[int]],
               combine: Combine, *, name: str = "task", what: str | None = None,
               combine_name: str | None = None, inputs: Sequence[Any] = (),
               finish: Callable[..., Any] | None = None, finish_inputs: Sequence[Any] = (),
               keep: bool = False) -> Any:
        source = self.holding(source)
        n_threads = min(len(groups), os.cpu_count() or 1)
        if n_threads > 1:
            with ThreadPoolExecutor(n_threads, thread_name_prefix=f"dsvm-{name}") as pool:
                partials = list(pool.map(lambda ids: task(source, ids, *inputs), groups))
        else:
            partials = [task(source, ids, *inputs) for ids in groups]
        return combine_list(combine, partials, finish, *finish_inputs)

    # in this process a held value is the value itself
    def hold(self, value: Any, *, name: str = "held") -> Any:
        return value

    def apply(self, fn: Callable[..., Any], *args: Any, name: str = "apply") -> Any:
        return fn(*args)

    def fetch(self, held: Any, *, what: str = "result") -> Any:
        return held

    def release(self, *held: Any) -> None:
        """(Nothing is in flight in this process.)"""

    def map(self, task: Task, source: Source, chunks: Sequence[int], *, name: str = "task",
            what: str | None = None) -> Iterator[Any]:
        source = self.holding(source)
        for chunk in chunks:
            yield task(source, [chunk])


def combine_list(combine: Combine, partials: list[Any],
                  finish: Callable[..., Any] | None = None, *finish_inputs: Any) -> Any:
    """A combine node; at the root of a reduction with ``finish``, the finish instead, given
    the partials themselves (as dask's reductions give theirs to ``aggregate``): one task that
    runs where the partials and the held inputs meet, of which only the result stays, and
    that can combine and finish in one pass over the partials."""
    if finish is None:
        return combine(list(partials))
    return finish(list(partials), *finish_inputs)
