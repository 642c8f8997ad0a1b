"""The engine of a Dask cluster: tasks submitted to its workers, partials combined in a tree.

It implements :class:`dsvm.engine.local.Engine` (the protocol and what ``reduce``, ``map``,
``hold``, ``apply``, ``fetch`` and ``release`` mean are described there) and runs the same task
objects as the engine of this process. A held value is a future, which later tasks take as an
input (``inputs=``, ``finish_inputs=``) without it passing through this process; the epoch loop
keeps the model so: an epoch's tasks take the previous epoch's future, the root of its combine
finalizes the next state where the partials meet, and only the epoch's statistics come to the
client (#12 item 3); since a future can be taken before it is computed, the loop submits the
next epoch while one runs (``runs_ahead``). Every wait goes through the watchdog of
:mod:`dsvm.distributed.watch`: a lost scheduler, or no workers for longer than
``dsvm.no-workers-timeout``, is a clear error instead of a hang.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from dsvm.data.sources import Source, rewrapped
from dsvm.distributed.dask_source import DaskSource
from dsvm.distributed.memory import WorkerMemory, workers_memory
from dsvm.distributed.watch import wait_for_result, workers_of
from dsvm.engine.local import Combine, Task, combine_list

logger = logging.getLogger(__name__)

DEFAULT_SPLIT_EVERY = 4
BROADCAST_ABOVE_BYTES = 1 << 20
EMBEDDED_BYTES_PER_CALL = 16 << 20  # copies of a task inside the submits of one call, at most


def _run(task: Task, source: Source, chunk_ids: list[int], *inputs: Any) -> Any:
    """What a cluster task executes (its key, ``dsvm-<name>-...``, names it on the dashboard)."""
    return task(source, chunk_ids, *inputs)


def _held(value: Any) -> Any:
    """A held value's task: the value rides in the task itself, so that the scheduler can
    recompute it (and everything computed from it) wherever it is lost; a scattered value
    lost with its worker could not be."""
    return value


class DaskEngine:
    """Submits tasks to a Dask cluster and combines their partials in a tree on the workers."""

    runs_ahead = True  # its calls return futures

    def __init__(self, client: Any, *, split_every: int = DEFAULT_SPLIT_EVERY) -> None:
        from dsvm.distributed.client import n_workers_of

        self.client = client
        self.split_every = max(2, int(split_every))
        self.n_workers = n_workers_of(client)
        self._token = uuid.uuid4().hex[:8]  # keeps task keys of concurrent fits apart
        self._calls = 0
        self._shipped: dict[tuple[Any, ...], tuple[tuple[Any, Any], Any]] = {}
        self._persisted: list[Any] = []  # arrays persisted for this engine's fits (_ship)

    # -- what travels --------------------------------------------------------------------------
    def _ship(self, source: Source) -> Any:
        """``source`` as a task argument: a small one rides inside each task; a large one (a
        Nystroem map's matrices travel with its source, dask arrays built from memory carry
        their data) is sent to the workers once per fit and passed by reference, instead of
        with every task of every epoch."""
        # A mapped source is rebuilt around the same (data, map) pair for every validation
        # pass: key on its parts, so that one shipment serves them all. A chunk subset's
        # ``inner`` is the whole source: its chunk ids are part of the key, so that the
        # training and held-out parts of one source ship apart (keyed on ``inner`` alone, the
        # held-out scoring of early stopping read the training part's first chunks).
        parts = (getattr(source, "inner", source), getattr(source, "fmap", None))
        key = (id(parts[0]), id(parts[1]), type(source).__name__,
               tuple(getattr(source, "chunk_ids", None) or ()))
        cached = self._shipped.get(key)
        if cached is not None and all(a is b for a, b in zip(cached[0], parts)):
            return cached[1]
        ref = self._shipped_form(source)
        self._shipped[key] = (parts, ref)  # keeps the parts (and so their ids) alive
        return ref

    def _shipped_form(self, source: Source) -> Any:
        nbytes = _pickled_size(source)
        if nbytes is None or nbytes <= BROADCAST_ABOVE_BYTES:
            return source
        inner = getattr(source, "inner", source)
        large = _holds_its_data(inner)
        if isinstance(inner, DaskSource) and not inner.on_cluster and large:
            # Arrays built from this process's memory: their graph holds the data. Persist them
            # once, spread over the workers, instead of shipping everything to every worker.
            # (Only when the arrays are what is large: a read_csv graph under a large feature
            # map, the scaling of 2^18 hashed columns, is broadcast with the map instead.)
            arrays = self.client.persist(
                [a for a in (inner.X, inner.y, inner.sample_weight) if a is not None])
            # the client must hold the persisted futures while the fit runs: a task that
            # reads them from a broadcast copy of the source does not keep them alive, and
            # they were released ("lost dependencies")
            self._persisted.append(arrays)
            persisted = replace(inner, X=arrays[0], y=arrays[1],
                                sample_weight=arrays[2] if len(arrays) > 2 else None)
            # (the persisted source itself: shipping the unpersisted one again recursed forever)
            return self._shipped_form(rewrapped(source, persisted))
        [ref] = self.client.scatter([source], broadcast=True, hash=False)
        return ref

    def _ship_task(self, task: Task, n_tasks: int) -> Any:
        """A task holding a large state (many classes x many features) is broadcast once;
        a small one rides inside each submit, which saves the scatter's round trips. "Large"
        counts every copy: a 0.5 MB state embedded in the 1,334 tasks of an epoch on 1,000
        workers would send 0.7 GB through the scheduler (bench_overhead)."""
        nbytes = getattr(task, "nbytes", 0)
        if nbytes > BROADCAST_ABOVE_BYTES or nbytes * n_tasks > EMBEDDED_BYTES_PER_CALL:
            [ref] = self.client.scatter([task], broadcast=True, hash=False)
            return ref
        return task

    def _key(self, *parts: Any) -> str:
        return "-".join(["dsvm", *map(str, parts), self._token])

    # -- the protocol --------------------------------------------------------------------------
    def reduce(self, task: Task, source: Source, groups: Sequence[Sequence[int]],
               combine: Combine, *, name: str = "task", what: str | None = None,
               combine_name: str | None = None, inputs: Sequence[Any] = (),
               finish: Callable[..., Any] | None = None, finish_inputs: Sequence[Any] = (),
               keep: bool = False) -> Any:
        """See the module notes; ``what`` names the computation in errors ("epoch 3")."""
        self._calls += 1
        call = self._calls
        task_f, source_f = self._ship_task(task, len(groups)), self._ship(source)
        # with held inputs dask would run every stream where they are held (one worker, its
        # streams one after another): the streams are dealt to the workers instead
        homes = self._homes(len(groups), spread=bool(inputs), what=what or name)
        futures = self._submit_streams(task_f, source_f, groups, homes, name, call, inputs)
        if not futures:
            return combine_list(combine, [], finish, *finish_inputs)
        merge = combine_name or f"{name}-combine"
        if homes is not None:  # each worker's streams first, where they ran
            futures = self._combine_level(combine, [futures[w::len(homes)]
                                                    for w in range(len(homes))], merge, call,
                                          "home")
        level = 0
        while len(futures) > 1 or (finish is not None and level == 0):
            root = len(futures) <= self.split_every
            futures = self._combine_level(
                combine, [futures[i:i + self.split_every]
                          for i in range(0, len(futures), self.split_every)], merge, call, level,
                finish=(finish, finish_inputs) if root and finish is not None else None)
            level += 1
        if keep:
            return futures[0]
        return wait_for_result(self.client, futures[0], what or name.replace("-", " "))

    def hold(self, value: Any, *, name: str = "held") -> Any:
        """``value`` as a future (see :func:`_held`): sent once, then used where it is."""
        self._calls += 1
        with warnings.catch_warnings():
            # the model rides in the task on purpose (see _held): distributed's advice against
            # "Sending large graph" (a grid's 8 stacked models of 2^18 features: 32 MiB) is
            # noise here, sent once and used where it is
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            return self.client.submit(_held, value, key=self._key(name, self._calls), pure=False)

    def apply(self, fn: Callable[..., Any], *args: Any, name: str = "apply") -> Any:
        """A future of ``fn(*args)``, run where its held arguments are."""
        self._calls += 1
        return self.client.submit(fn, *args, key=self._key(name, self._calls), pure=False)

    def fetch(self, held: Any, *, what: str = "result") -> Any:
        """A held value, brought here."""
        return wait_for_result(self.client, held, what)

    def worker_memory(self) -> list[WorkerMemory]:
        """Each worker's memory limit, threads and dask's thresholds
        (:mod:`dsvm.distributed.memory`), for the training layer to size a fit to."""
        return workers_memory(self.client)

    def release(self, *held: Any) -> None:
        """Held values no longer wanted: their tasks that have not started never will (one
        already running finishes on its worker, and its result is dropped)."""
        with contextlib.suppress(Exception):  # (a lost scheduler: nothing left to cancel)
            self.client.cancel(list(held))

    def _submit_streams(self, task_f: Any, source_f: Any, groups: Sequence[Sequence[int]],
                        homes: list[str] | None, name: str, call: int,
                        inputs: Sequence[Any] = ()) -> list[Any]:
        """The stream tasks, in group order: one ``client.map`` (one graph update for the
        scheduler: per task, 0.65 ms of its CPU instead of 1.25 ms with one submit each, and
        0.01 ms of the client's instead of 0.2 ms; bench_overhead), or one per worker when
        the streams are dealt to workers (``allow_other_workers``: a lost worker's streams
        run elsewhere)."""
        n = len(groups)
        keys = [self._key(name, call, i) for i in range(n)]
        args = [list(map(int, ids)) for ids in groups]
        extra = [[x] * n for x in inputs]  # (held inputs: one future, every task)
        if homes is None:
            return list(self.client.map(_run, [task_f] * n, [source_f] * n, args, *extra,
                                        key=keys, pure=False))
        futures: list[Any] = [None] * n
        for w, home in enumerate(homes):
            mine = range(w, n, len(homes))
            placed = self.client.map(_run, [task_f] * len(mine), [source_f] * len(mine),
                                     [args[i] for i in mine], *[e[:len(mine)] for e in extra],
                                     key=[keys[i] for i in mine],
                                     pure=False, workers=[home], allow_other_workers=True)
            for i, future in zip(mine, placed):
                futures[i] = future
        return futures

    def _combine_level(self, combine: Combine, parts: list[list[Any]], merge: str, call: int,
                       level: Any, finish: tuple[Callable[..., Any], Sequence[Any]] | None = None
                       ) -> list[Any]:
        """One level of the combine tree, submitted at once; a part of one partial is passed
        on as it is. (A worker's own streams are combined where their partials are: dask runs
        a task where most of its input bytes already sit.) ``finish``: this is the root
        level (one part), whose task applies ``finish(partials, *inputs)`` instead of the
        combine."""
        if finish is not None:
            fn, inputs = finish
            return [self.client.submit(combine_list, combine, parts[0], fn, *inputs,
                                       key=self._key(merge, call, level, 0), pure=False)]
        todo = [i for i, p in enumerate(parts) if len(p) > 1]
        merged = self.client.map(combine_list, [combine] * len(todo), [parts[i] for i in todo],
                                 key=[self._key(merge, call, level, i) for i in todo],
                                 pure=False) if todo else []
        out = [p[0] for p in parts]
        for i, future in zip(todo, merged):
            out[i] = future
        return out

    def _homes(self, n_tasks: int, *, spread: bool = False,
               what: str = "a computation") -> list[str] | None:
        """Workers to deal ``n_tasks`` tasks to, round robin, when there are more tasks than
        workers, or always with ``spread`` (None otherwise: the scheduler places them). The
        streams of a worker are then combined there first (:meth:`reduce`), so that each
        worker sends one model-sized partial an epoch instead of one per stream."""
        if not spread and n_tasks <= max(1, self.n_workers):  # (no round trip usually)
            return None
        workers = sorted(workers_of(self.client, what))
        if not workers or (n_tasks <= len(workers) and not spread):
            return None
        return workers[:n_tasks]

    def map(self, task: Task, source: Source, chunks: Sequence[int], *, name: str = "task",
            what: str | None = None) -> Iterator[Any]:
        self._calls += 1
        call = self._calls
        what = what or name.replace("-", " ")
        window = 2 * self.n_workers
        task_f, source_f = self._ship_task(task, len(chunks)), self._ship(source)
        pending: list[Any] = []
        try:
            for chunk in chunks:
                pending.append(self.client.submit(_run, task_f, source_f, [int(chunk)],
                                                  key=self._key(name, call, chunk), pure=False))
                if len(pending) >= window:
                    yield wait_for_result(self.client, pending.pop(0), what)
            while pending:
                yield wait_for_result(self.client, pending.pop(0), what)
        finally:
            # After an error (or an early stop) the tasks still in flight run to their end
            # before the caller cleans up: a failed prediction's tasks went on writing chunks
            # into the store its abort had just removed, and left the directory behind.
            for future in pending:
                with contextlib.suppress(Exception):  # (the first error is the one raised)
                    wait_for_result(self.client, future, what)


@contextlib.contextmanager
def cluster_engine(client: Any = None, *, n_workers: int | None = None) -> Iterator[DaskEngine]:
    """A :class:`DaskEngine` on ``client`` (a Client, a scheduler address, or None: the active
    Client, else an embedded LocalCluster closed on exit)."""
    from dsvm.distributed.client import cluster_client

    with cluster_client(client, n_workers=n_workers) as c:
        yield DaskEngine(c)


def active_cluster() -> bool:
    """Whether this process has an active Dask Client (predictions then run on its cluster)."""
    from dsvm.distributed.client import active_client

    return active_client() is not None


def _holds_its_data(source: Any) -> bool:
    """Whether a source's pickled form is large and mostly its rows (dask arrays built from
    this process's memory: NumPy and pandas buffers), not a graph of how to read them: a
    DataFrame of 1,000 Parquet files pickles to 1.5 MB of tasks, and persisting it as if it
    held data pulled the whole dataset into the workers' memory (any size), where a broadcast
    of the graph lets each task read its own files."""
    buffers: list[Any] = []
    try:
        inline = len(pickle.dumps(source, protocol=5, buffer_callback=buffers.append))
    except Exception:  # noqa: BLE001 - not plain-picklable: dask's serialisation carries it
        return False
    data = sum(memoryview(b).nbytes for b in buffers)
    return inline + data > BROADCAST_ABOVE_BYTES and data >= inline


def _pickled_size(obj: Any) -> int | None:
    """Bytes of ``obj`` pickled, or None when plain pickle cannot (dask's serialisation
    carries it, inside the task)."""
    try:
        return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001 - not plain-picklable
        return None
