"""The work a task does on a worker (and, unchanged, in this process): one kind per class.

Every task is a small picklable object called as ``task(source, chunk_ids)``: it reads its
chunks itself (the next one prefetched by a background thread while the current one is being
processed, so at most two are in memory), and returns a partial result that the engine combines
with the other tasks' partials. A task holds what it needs besides the data (a model state, a
solver, coefficients); a re-run task (lost worker) does exactly the same work.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from dsvm.combine.base import Combiner
from dsvm.data.blocks import Block
from dsvm.data.fold import FoldMasks
from dsvm.data.read_ahead import read_ahead
from dsvm.data.readers import slice_block
from dsvm.data.sources import Source, read_chunks_of
from dsvm.data.stats import FeatureStats, StatsAdder
from dsvm.data.window import DEFAULT_WINDOW, WINDOW_BYTES
from dsvm.features.sampling import RowSample, merge_samples, sample_block
from dsvm.solvers.base import LocalSolver, PassStats, SolverState, encode_labels
from dsvm.solvers.chunk_codes import ChunkCodes
from dsvm.solvers.evaluation import EvalCounts, GridCounts, evaluate_block
from dsvm.solvers.held_out import HeldOutRows
from dsvm.solvers.nesvm import GradientShare, NesvmProblem, Points, block_share
from dsvm.solvers.objective import decision_block, pairs_kept, pass_scratch_kept
from dsvm.solvers.passes import (
    WindowRows,
    calibration_sample,
    pass_over_chunk,
    pass_over_window,
    window_rows,
    with_class_weight,
)
from dsvm.solvers.targets import initial_intercept, targets_for


def iter_chunks(source: Source, chunk_ids: Sequence[int],
                ahead: int = 1) -> Iterator[tuple[int, Block]]:
    """Yield ``(chunk_id, block)``, reading up to ``ahead`` chunks ahead in a background
    thread (one read at a time).

    A pass over windows of k chunks reads with ``ahead=k``: the next window's chunks are read
    while the current one trains, where one chunk ahead left all but one of a window's reads
    waited for (bench_order: the window's epoch ran at 0.70-0.81x of one chunk at a time).
    Sources that fetch their chunks through the cluster (persisted dask arrays) are read in the
    task's own thread, a window of ``ahead`` chunks at a time (one round trip through the
    scheduler for all of them): only a task thread may talk to the scheduler.
    """
    chunk_ids = list(chunk_ids)
    if not chunk_ids:
        return
    read_chunks = getattr(source, "read_chunks", None)
    if getattr(source, "on_cluster", False):  # a window at a time, in this thread
        size = 1 if read_chunks is None else _cluster_batch(source, ahead)
        for k in range(0, len(chunk_ids), size):
            ids = chunk_ids[k:k + size]
            yield from zip(ids, read_chunks_of(source, ids))
        return
    if ahead > 1 and read_chunks is not None:
        yield from _iter_windows(read_chunks, chunk_ids, ahead)
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsvm-prefetch") as pool:
        pending = deque(pool.submit(source.read_chunk, chunk)
                        for chunk in chunk_ids[:max(1, ahead)])
        for j, chunk in enumerate(chunk_ids):
            block = pending.popleft().result()
            if j + len(pending) + 1 < len(chunk_ids):
                pending.append(pool.submit(source.read_chunk, chunk_ids[j + len(pending) + 1]))
            yield chunk, block
            del block  # drop our reference before the next chunk arrives


def _cluster_batch(source: Source, ahead: int) -> int:
    """How many chunks of a source held by the cluster one round trip fetches: the pass's
    window (``ahead``), and for the one-chunk passes (statistics, evaluation) as many as a
    default window within :data:`~dsvm.data.window.WINDOW_BYTES` (one at a time where the
    rows' size is not known)."""
    chunk_bytes = getattr(source, "nbytes", math.nan) / max(1, source.n_chunks)
    if ahead > 1 or not math.isfinite(chunk_bytes):
        return max(1, ahead)
    return int(max(1, min(DEFAULT_WINDOW, WINDOW_BYTES // max(1.0, chunk_bytes))))


def _iter_windows(read_chunks: Callable[[list[int]], list[Block]], chunk_ids: list[int],
                  size: int) -> Iterator[tuple[int, Block]]:
    """:func:`iter_chunks` for a source that reads several chunks into one buffer
    (``read_chunks``): windows of ``size`` consecutive chunk ids, the next window read in the
    background (:func:`dsvm.data.read_ahead.read_ahead`) while the current one's blocks are
    yielded (and trained on)."""
    windows = [chunk_ids[k:k + size] for k in range(0, len(chunk_ids), size)]
    reads = read_ahead(read_chunks(ids) for ids in windows)
    try:
        for ids, blocks in zip(windows, reads):
            yield from zip(ids, blocks)
    finally:
        reads.close()  # waits for a window still being read


def where(source: Source, chunk: int) -> str:
    """How an error names a chunk."""
    return f"{source.describe()}, chunk {chunk}"


@dataclass(frozen=True)
class EpochStart:
    """What an epoch's streams start from (made where the previous epoch's state is held, see
    :mod:`dsvm.training.epoch`): the state as shipped, with its probe models; the probe the
    model predicts with (None: none is probed); what that model is (``returned_kind``)."""

    shipped: SolverState
    returned: int | None
    kind: str

    def __sizeof__(self) -> int:
        return 64 + self.shipped.nbytes  # (dask's memory accounting)


@dataclass(frozen=True)
class StreamPass:
    """One stream's share of a stochastic epoch: a local pass over its chunks, as a partial.

    The state comes as the task's input, the epoch's :class:`EpochStart` (on a cluster a
    future held where the previous epoch ended): the model never rides inside the task.

    ``held_out`` (a row fold, :mod:`dsvm.solvers.held_out`): each chunk's held rows are left
    out of the pass and scored with the models the epoch started from, as the chunk is read
    (their sums in ``PassStats.held_out``): validation without a read of its own."""

    solver: LocalSolver
    combiner: Combiner
    classes: np.ndarray | None
    epoch: int
    seed: int
    class_weight: np.ndarray | None = None  # per class code, times the rows' sample weights
    window: int = 1  # chunks whose rows a pass interleaves (training.loop, "shuffle window")
    held_out: HeldOutRows | None = None
    known: ChunkCodes | None = None  # in-memory chunks' codes, kept from epoch to epoch
    # each stream's chunks this epoch and the next, when the next epoch will run: the next's
    # first window is read while this one's last trains, by a source that can
    # (dsvm.data.held.ReadsAhead, in this process)
    following: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()

    def __call__(self, source: Source, chunk_ids: Sequence[int], start: EpochStart) -> Any:
        state = start.shipped.copy()  # the shipped state may be shared by other tasks here
        stats = PassStats()
        window: list[tuple[int, Block]] = []
        held = self.held_out
        # the models the epoch started from; each chunk's mask hashed once for both uses
        models = None if held is None else held.models(start.shipped, start.returned)
        masks = None if held is None else FoldMasks(held.fold)
        held_windows = HeldWindows(self.solver, state)
        # (its W stays paired from one window's pass to the next, in one scratch for the
        # task: dsvm.solvers.objective)
        read_next = self.next_read(source, chunk_ids)
        with pass_scratch_kept(), pairs_kept(state):
            for seen, (chunk, block) in enumerate(
                    iter_chunks(source, chunk_ids, ahead=self.window), 1):
                if seen == len(chunk_ids) and read_next is not None:
                    read_next()  # (every read of this epoch is done)
                if held_windows.first and block.n_samples > 0:
                    held_windows.first = False
                    stats.compile_seconds = self.compile_kernels(state, block,
                                                                 where(source, chunk))
                    held_windows.budget_for(block)
                if held is not None and models is not None:
                    stats += held.score(models, block, chunk, where(source, chunk), masks)
                window.append((chunk, block))
                if len(window) == self.window:
                    stats += self.pass_over(state, window, source, masks, held_windows)
                    window = []
            if window:
                stats += self.pass_over(state, window, source, masks, held_windows)
            stats += held_windows.run()
        finish = getattr(self.solver, "finish_stream", None)
        if finish is not None:
            finish(state)
        return self.combiner.chunk(state, stats)

    def next_read(self, source: Source, chunk_ids: Sequence[int]) -> Callable[[], None] | None:
        """What reads this stream's first window of the next epoch ahead, if anything."""
        read_later = getattr(source, "read_later", None)
        now = tuple(int(c) for c in chunk_ids)
        then = next((n for c, n in self.following if c == now), None)
        if read_later is None or not then:
            return None
        return lambda: read_later(list(then[:max(1, self.window)]))

    def pass_over(self, state: SolverState, window: list[tuple[int, Block]], source: Source,
                  masks: FoldMasks | None = None,
                  held_windows: HeldWindows | None = None) -> PassStats:
        """The pass over ``window``, or with ``held_windows`` that hold windows, the windows
        held before it (when it would not fit beside them) while it waits its turn."""
        options: dict[str, Any] = dict(
            classes=self.classes, epoch=self.epoch, seed=self.seed,
            where=lambda chunk: where(source, chunk), class_weight=self.class_weight,
            fold=masks, known=self.known)
        if held_windows is not None and held_windows.budget > 0:
            ready = window_rows(self.solver, state, window, **options)
            stats = held_windows.add(ready)
        else:
            stats = pass_over_window(self.solver, state, window, **options)
        if masks is not None:
            masks.forget()  # (the window's rows are done, or their order and folds made)
        return stats

    def compile_kernels(self, state: SolverState, block: Block, where: str) -> float:
        """Compile (or load from numba's disk cache) the kernels this pass needs, once per
        process, on two rows and a copy of the state, so that the first epoch's rows per second
        measure training, not compilation. Returns the seconds it took (0 when done before)."""
        key = (type(self.solver).__name__, type(block).__name__, str(block.dtype),
               self.classes is None, state.n_outputs, state.probe_coef is not None)
        if key in _COMPILED or block.n_samples == 0:
            return 0.0
        tic = time.perf_counter()
        pass_over_chunk(self.solver, state.copy(), slice_block(block, 0, min(2, block.n_samples)),
                        classes=self.classes, chunk=0, epoch=0, seed=0, where=where,
                        class_weight=self.class_weight)
        _COMPILED.add(key)
        return time.perf_counter() - tic


class HeldWindows:
    """Windows a stream holds to hand them to its solver together (``solver.run_windows``:
    a grid runs each candidate over all of them in a row, :meth:`dsvm.solvers.grid.
    CandidateGrid.run_windows`), up to the solver's ``window_budget`` bytes; a budget of 0
    (every other solver) holds none."""

    def __init__(self, solver: LocalSolver, state: SolverState) -> None:
        self.solver, self.state = solver, state
        self.first = True  # (no chunk seen yet)
        self.budget = 0
        self.held: list[WindowRows] = []

    def budget_for(self, block: Block) -> None:
        budget = getattr(self.solver, "window_budget", None)
        self.budget = 0 if budget is None else int(budget(self.state, block))

    def add(self, ready: WindowRows) -> PassStats:
        """Hold ``ready``; the held windows' pass first when it would not fit beside them."""
        stats = PassStats()
        size = sum(w.nbytes for w in self.held)
        if self.held and size + ready.nbytes > self.budget:
            stats = self.run()
        self.held.append(ready)
        return stats

    def run(self) -> PassStats:
        """The pass over the windows held (none: empty statistics)."""
        if not self.held:
            return PassStats()
        held, self.held = self.held, []
        return cast(PassStats, cast(Any, self.solver).run_windows(self.state, held))


# What this process has compiled already (see StreamPass.compile_kernels).
_COMPILED: set[tuple[Any, ...]] = set()


def calibration_rows(source: Source, chunk: int, classes: np.ndarray | None
                     ) -> tuple[Block, np.ndarray]:
    """The rows a solver calibrates on (the first of ``chunk``) and their class codes, or
    (``classes`` None) their targets."""
    block = calibration_sample(source.read_chunk(chunk))
    return block, targets_for(block.y, classes, where=where(source, chunk))


@dataclass(frozen=True)
class Calibrate:
    """Data-dependent constants of a solver (SGD's eta0, a regression's starting intercept) from
    the first rows of one chunk."""

    state: SolverState
    solver: LocalSolver
    classes: np.ndarray | None
    class_weight: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        return self.state.nbytes

    def __call__(self, source: Source, chunk_ids: Sequence[int]) -> SolverState:
        block, codes = calibration_rows(source, chunk_ids[0], self.classes)
        block = with_class_weight(block, codes, self.class_weight)
        state = self.state.copy()
        if self.classes is None and getattr(self.solver, "fit_intercept", False):
            # a regression's intercept starts at the targets' centre (solvers.targets)
            state.intercept[:] = initial_intercept(codes, block.sample_weight, self.solver.loss)
        return self.solver.calibrate(state, block, codes)


@dataclass(frozen=True)
class Evaluate:
    """Loss and accuracy sums (regression: the sums behind R^2) of a model over chunks."""

    coef: np.ndarray
    intercept: np.ndarray
    classes: np.ndarray | None
    loss: Any
    constant: float | None = None  # a regression: also the loss of predicting this constant

    @property
    def nbytes(self) -> int:
        return int(self.coef.nbytes)

    def __call__(self, source: Source, chunk_ids: Sequence[int]) -> EvalCounts:
        total = EvalCounts()
        for chunk, block in iter_chunks(source, chunk_ids):
            total = total + evaluate_block(block, self.coef, self.intercept, self.classes,
                                           self.loss, where(source, chunk),
                                           constant=self.constant)
        return total


@dataclass(frozen=True)
class StartingConstant:
    """The constant a regression starts from, found as :class:`Calibrate` finds it (the
    minimiser of ``loss`` over constants on the first rows of one chunk: the median for the
    epsilon-insensitive loss): what a fit's outcome is measured against."""

    loss: str

    def __call__(self, source: Source, chunk_ids: Sequence[int]) -> float:
        block, targets = calibration_rows(source, chunk_ids[0], None)
        return initial_intercept(targets, block.sample_weight, self.loss)


@dataclass(frozen=True)
class ScoreHeldRows:
    """The held rows of a row fold (:mod:`dsvm.solvers.held_out`) scored with the models of
    a state, over chunks: after a fit's last epoch, the one pass that scores its final models
    (every epoch's own pass scores the models it started from). The state comes as the
    task's input: an outcome held where the last epoch ended (anything with ``.state``)."""

    held_out: HeldOutRows

    def __call__(self, source: Source, chunk_ids: Sequence[int], outcome: Any
                 ) -> GridCounts | None:
        models = self.held_out.models(outcome.state)
        total = PassStats()
        for chunk, block in iter_chunks(source, chunk_ids):
            total += self.held_out.score(models, block, chunk, where(source, chunk))
        return self.held_out.with_penalties(total.held_out, outcome.state)


@dataclass(frozen=True)
class Decide:
    """Decision values (n_rows, n_outputs) of one chunk."""

    coef: np.ndarray
    intercept: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.coef.nbytes)

    def __call__(self, source: Source, chunk_ids: Sequence[int]) -> np.ndarray:
        [chunk] = chunk_ids
        return decision_block(self.coef, self.intercept, source.read_chunk(chunk))


def predicted_values(scores: np.ndarray, labels: np.ndarray | None) -> np.ndarray:
    """Decision values (``labels`` None), else ``labels`` of the winning output."""
    if labels is None:
        return scores[:, 0] if scores.shape[1] == 1 else scores
    index = (scores[:, 0] > 0).astype(np.intp) if scores.shape[1] == 1 \
        else np.argmax(scores, axis=1)
    return labels[index]


@dataclass(frozen=True)
class WritePredictions:
    """Predict one chunk and write its rows into a prediction store (dsvm.data.predictions)."""

    coef: np.ndarray
    intercept: np.ndarray
    labels: np.ndarray | None
    writer: Any

    @property
    def nbytes(self) -> int:
        return int(self.coef.nbytes)

    def __call__(self, source: Source, chunk_ids: Sequence[int]) -> int:
        [chunk] = chunk_ids
        scores = decision_block(self.coef, self.intercept, source.read_chunk(chunk))
        return int(self.writer.write(chunk, predicted_values(scores, self.labels)))


@dataclass(frozen=True)
class GradientPass:
    """NESVM: the summed gradient share (YX)^T u and objective sums of some chunks."""

    points: Points
    problem: NesvmProblem
    mu: float
    classes: np.ndarray
    class_weight: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        return int(self.points.__sizeof__())

    def __call__(self, source: Source, chunk_ids: Sequence[int]) -> GradientShare | None:
        total: GradientShare | None = None
        for chunk, block in iter_chunks(source, chunk_ids):
            codes = encode_labels(block.y, self.classes, where=where(source, chunk))
            block = with_class_weight(block, codes, self.class_weight)
            share = block_share(block, codes, self.points, self.problem.loss, self.mu,
                                self.problem.fit_intercept)
            total = share if total is None else total + share
        return total


@dataclass(frozen=True)
class SampleRows:
    """The bottom-``n`` rows of some chunks (uniform landmark sampling for Nystroem)."""

    n: int
    seed: int

    def __call__(self, source: Source, chunk_ids: Sequence[int]) -> RowSample | None:
        best: RowSample | None = None
        for chunk, block in iter_chunks(source, chunk_ids):
            best = merge_samples([best, sample_block(block, self.n, self.seed, chunk)], self.n)
        return best


@dataclass(frozen=True)
class MergeSamples:
    """Combine for :class:`SampleRows`: the bottom ``n`` of the union."""

    n: int

    def __call__(self, parts: list[RowSample | None]) -> RowSample | None:
        return merge_samples(parts, self.n)


@dataclass(frozen=True)
class ChunkMoments:
    """Per chunk: (sum, sum of squares, number) of all feature values, zeros included, float64.

    Kept per chunk and added in chunk order at the end (:func:`feature_variance`), so that the
    result does not depend on how chunks were grouped into tasks."""

    def __call__(self, source: Source, chunk_ids: Sequence[int]) -> dict[int, tuple[float, ...]]:
        out: dict[int, tuple[float, ...]] = {}
        for chunk, block in iter_chunks(source, chunk_ids):
            values = block.data if hasattr(block, "data") else block.X
            values = np.asarray(values, dtype=np.float64)
            out[chunk] = (float(values.sum()), float(np.dot(values.ravel(), values.ravel())),
                          float(block.n_samples) * float(source.n_features))
        return out


class ChunkStats:
    """Per-column statistics of chunks for feature scaling (:mod:`dsvm.features.scaling`)."""

    def __call__(self, source: Source, chunk_ids: Sequence[int]) -> FeatureStats | None:
        adder = StatsAdder()  # (the same bits as merge_stats of each chunk's block_stats)
        for chunk, block in iter_chunks(source, chunk_ids):
            adder.add(chunk, block)
        return adder.stats


def merge_dicts(parts: list[dict[int, Any] | None]) -> dict[int, Any]:
    """Combine of per-chunk results: their union."""
    out: dict[int, Any] = {}
    for part in parts:
        out.update(part or {})
    return out


def feature_variance(moments: dict[int, tuple[float, ...]]) -> float:
    """The variance of all feature values (scikit-learn's ``X.var()``) from per-chunk moments."""
    total = np.zeros(3)
    for chunk in sorted(moments):
        total += moments[chunk]
    if total[2] <= 0:
        return 0.0
    mean = total[0] / total[2]
    return max(0.0, float(total[1] / total[2] - mean * mean))


def first(parts: list[Any]) -> Any:
    """Combine of a single task's result."""
    return parts[0]
