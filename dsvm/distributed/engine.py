"""Engines run an epoch's streams: in this process, or as tasks on a Dask cluster.

Both run the same worker functions (:mod:`dsvm.distributed.worker`), so a fit in memory and a
fit on a cluster with the same seed, streams and chunks give the same model.
"""

from __future__ import annotations

import logging
import os
import pickle
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator, Sequence

import numpy as np

from dsvm.combine.averaging import ParameterAveraging
from dsvm.distributed import worker as w
from dsvm.distributed.sources import DaskSource, Source
from dsvm.distributed.watch import wait_for_result
from dsvm.solvers.base import LocalSolver, PassStats, SolverState

logger = logging.getLogger(__name__)

DEFAULT_SPLIT_EVERY = 4
BROADCAST_ABOVE_BYTES = 1 << 20


class LocalEngine:
    """Runs an epoch's streams in this process (NumPy/SciPy input, no cluster).

    With several streams (``n_streams > 1``) they run in threads, up to one per core: the numba
    passes release the GIL, so in-memory training uses the machine's cores the way a cluster
    uses its workers. The model does not depend on the thread count: each stream is the same
    deterministic function of (state, chunk ids, epoch, seed) as on a cluster, and the
    partials are combined in stream order.
    """

    n_workers = 1  # the default stream count for in-memory input: one, as in scikit-learn

    def calibrate(
        self, solver: LocalSolver, state: SolverState, source: Source, classes: np.ndarray, chunk: int
    ) -> SolverState:
        return w._worker_calibrate(state, source, chunk, solver, classes)

    def run_epoch(
        self,
        solver: LocalSolver,
        combiner: ParameterAveraging,
        state: SolverState,
        source: Source,
        classes: np.ndarray,
        streams: Sequence[Sequence[int]],
        epoch: int,
        seed: int,
    ) -> tuple[SolverState, PassStats]:
        def stream(ids: Sequence[int]) -> Any:
            return w._worker_stream_pass(state, source, ids, solver, combiner, classes, epoch, seed)

        n_threads = min(len(streams), os.cpu_count() or 1)
        if n_threads > 1:
            with ThreadPoolExecutor(n_threads, thread_name_prefix="dsvm-stream") as pool:
                partials = list(pool.map(stream, streams))
        else:
            partials = [stream(ids) for ids in streams]
        return combiner.finalize(combiner.combine(partials), state)

    def evaluate(
        self, coef: np.ndarray, intercept: np.ndarray, source: Source, classes: np.ndarray, loss: str
    ) -> w.EvalCounts:
        return w._worker_evaluate(source, range(source.n_chunks), coef, intercept, classes, loss)

    def decision_chunks(
        self, coef: np.ndarray, intercept: np.ndarray, source: Source
    ) -> Iterator[np.ndarray]:
        for chunk in range(source.n_chunks):
            yield w._worker_decision(source, chunk, coef, intercept)

    def write_predictions(self, coef: np.ndarray, intercept: np.ndarray, source: Source,
                          labels: np.ndarray | None, writer: Any) -> int:
        """Predict every chunk into a prediction store; returns the rows written."""
        return sum(w._worker_write_predictions(source, chunk, coef, intercept, labels, writer)
                   for chunk in range(source.n_chunks))


class DaskEngine:
    """Submits stream tasks to a Dask cluster and combines their partials in a tree."""

    def __init__(self, client: Any, *, split_every: int = DEFAULT_SPLIT_EVERY) -> None:
        from dsvm.distributed.client import n_workers_of

        self.client = client
        self.split_every = max(2, int(split_every))
        self.n_workers = n_workers_of(client)
        self._token = uuid.uuid4().hex[:8]  # keeps task keys of concurrent fits apart
        self._shipped: dict[tuple[int, int], tuple[tuple[Any, Any], Any]] = {}

    def _ship(self, source: Source) -> Any:
        """``source`` as a task argument: a small one rides inside each task; a large one (a
        Nystroem map's matrices travel with its source) is broadcast to the workers once per
        fit and passed by reference, instead of with every task of every epoch."""
        if isinstance(source, DaskSource):
            return source
        # A mapped source is rebuilt around the same (data, map) pair for every validation
        # pass: key on its parts, so that one broadcast serves them all.
        parts = (getattr(source, "inner", source), getattr(source, "fmap", None))
        key = (id(parts[0]), id(parts[1]))
        cached = self._shipped.get(key)
        if cached is not None and all(a is b for a, b in zip(cached[0], parts)):
            return cached[1]
        try:
            nbytes = len(pickle.dumps(source, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:  # not plain-picklable: let dask's serialisation carry it as before
            nbytes = 0
        ref: Any = source
        if nbytes > BROADCAST_ABOVE_BYTES:
            [ref] = self.client.scatter([source], broadcast=True, hash=False)
        self._shipped[key] = (parts, ref)  # keeps the parts (and so their ids) alive
        return ref

    # -- helpers -----------------------------------------------------------------------------
    def _key(self, *parts: Any) -> str:
        return "-".join(["dsvm", *map(str, parts), self._token])

    def _tree_reduce(self, combiner: ParameterAveraging, futures: list[Any], epoch: int) -> Any:
        """Combine futures ``split_every`` at a time on the workers, down to one future."""
        level = 0
        while len(futures) > 1:
            futures = [
                self.client.submit(
                    w._worker_combine,
                    combiner,
                    *futures[i : i + self.split_every],
                    key=self._key("combine", epoch, level, i),
                    pure=False,
                )
                for i in range(0, len(futures), self.split_every)
            ]
            level += 1
        return futures[0]

    # -- the engine protocol -------------------------------------------------------------------
    def calibrate(
        self, solver: LocalSolver, state: SolverState, source: Source, classes: np.ndarray, chunk: int
    ) -> SolverState:
        if isinstance(source, DaskSource):
            from dask import delayed

            X = source.X.to_delayed().ravel()[chunk]
            y = source.y.to_delayed().ravel()[chunk]
            task = delayed(_calibrate_arrays)(state, X, y, solver, classes, chunk)
            return self.client.compute(task).result()
        fut = self.client.submit(
            w._worker_calibrate, state, self._ship(source), chunk, solver, classes,
            key=self._key("calibrate"), pure=False,
        )
        return wait_for_result(self.client, fut, "calibration")

    def run_epoch(
        self,
        solver: LocalSolver,
        combiner: ParameterAveraging,
        state: SolverState,
        source: Source,
        classes: np.ndarray,
        streams: Sequence[Sequence[int]],
        epoch: int,
        seed: int,
    ) -> tuple[SolverState, PassStats]:
        # Only the state travels from the client. A large one (many classes x many features) is
        # broadcast once to every worker; a small one rides inside each task, which saves the
        # scatter's round trips on every epoch.
        state_f: Any = state
        if state.nbytes > BROADCAST_ABOVE_BYTES:
            [state_f] = self.client.scatter([state], broadcast=True, hash=False)
        if isinstance(source, DaskSource):
            partials = self._dask_array_streams(
                state_f, solver, combiner, source, classes, streams, epoch, seed
            )
        else:
            source_f = self._ship(source)
            partials = [
                self.client.submit(
                    w._worker_stream_pass, state_f, source_f, list(ids), solver, combiner, classes,
                    epoch, seed, key=self._key("pass", epoch, s), pure=False,
                )
                for s, ids in enumerate(streams)
            ]
        result = wait_for_result(
            self.client, self._tree_reduce(combiner, partials, epoch), f"epoch {epoch + 1}")
        return combiner.finalize(result, state)

    def _dask_array_streams(
        self,
        state_f: Any,
        solver: LocalSolver,
        combiner: ParameterAveraging,
        source: DaskSource,
        classes: np.ndarray,
        streams: Sequence[Sequence[int]],
        epoch: int,
        seed: int,
    ) -> list[Any]:
        """A stream over dask-array chunks is a chain of tasks, one chunk each.

        The chunks are computed on the workers as the chain reaches them; the client only
        builds the graph.
        """
        from dask import delayed

        Xs = source.X.to_delayed().ravel()
        ys = source.y.to_delayed().ravel()
        sws = None if source.sample_weight is None else source.sample_weight.to_delayed().ravel()
        finals = []
        for ids in streams:
            carried: Any = state_f
            for chunk in ids:
                sw = None if sws is None else sws[chunk]
                carried = delayed(w._worker_block_pass, pure=True)(
                    carried, Xs[chunk], ys[chunk], sw, solver, classes, chunk, epoch, seed
                )
            if ids:
                finals.append(delayed(w._worker_finish_stream, pure=True)(carried, combiner))
        return list(self.client.compute(finals)) if finals else []

    def evaluate(
        self, coef: np.ndarray, intercept: np.ndarray, source: Source, classes: np.ndarray, loss: str
    ) -> w.EvalCounts:
        if isinstance(source, DaskSource):
            from dask import delayed

            Xs, ys = source.X.to_delayed().ravel(), source.y.to_delayed().ravel()
            parts = [
                delayed(w._worker_evaluate_arrays)(Xs[i], ys[i], coef, intercept, classes, loss, i)
                for i in range(source.n_chunks)
            ]
            futures = self.client.compute(parts)
        else:
            groups = np.array_split(np.arange(source.n_chunks), max(1, 2 * self.n_workers))
            source_f = self._ship(source)
            futures = [
                self.client.submit(
                    w._worker_evaluate, source_f, [int(c) for c in g], coef, intercept, classes,
                    loss, key=self._key("evaluate", i), pure=False,
                )
                for i, g in enumerate(groups)
                if len(g)
            ]
        total = w.EvalCounts()
        for future in futures:
            total = total + wait_for_result(self.client, future, "evaluation")
        return total

    def decision_chunks(
        self, coef: np.ndarray, intercept: np.ndarray, source: Source
    ) -> Iterator[np.ndarray]:
        """Decision values chunk by chunk, in order, with a bounded number in flight."""
        window = 2 * self.n_workers
        futures: list[Any] = []
        source_f = self._ship(source)
        for chunk in range(source.n_chunks):
            futures.append(
                self.client.submit(
                    w._worker_decision, source_f, chunk, coef, intercept,
                    key=self._key("decision", chunk), pure=False,
                )
            )
            if len(futures) >= window:
                yield wait_for_result(self.client, futures.pop(0), "prediction")
        for f in futures:
            yield wait_for_result(self.client, f, "prediction")

    def write_predictions(self, coef: np.ndarray, intercept: np.ndarray, source: Source,
                          labels: np.ndarray | None, writer: Any) -> int:
        """Every chunk predicted and written by a task on the workers (dsvm.data.predictions):
        only row counts come back. Returns the rows written."""
        source_f = self._ship(source)
        futures = [
            self.client.submit(w._worker_write_predictions, source_f, chunk, coef, intercept,
                               labels, writer, key=self._key("write-predictions", chunk),
                               pure=False)
            for chunk in range(source.n_chunks)
        ]
        return sum(wait_for_result(self.client, f, "prediction") for f in futures)


def _calibrate_arrays(
    state: SolverState, X: Any, y: np.ndarray, solver: LocalSolver, classes: np.ndarray, chunk: int
) -> SolverState:
    from dsvm.distributed.sources import ArraySource

    return w._worker_calibrate(state, ArraySource(X, y), 0, solver, classes)

