"""Functions that run inside Dask workers (and, unchanged, in-process).

A stream task gets the broadcast state, a source that can read chunks by id, and the ids of its
chunks for this epoch. It reads each chunk itself, with the next one prefetched by a background
thread while the numba pass (which releases the GIL) runs on the current one, so at most two
chunks are in memory at once: memory per worker does not depend on the dataset's size.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

from dsvm.combine.averaging import ParameterAveraging
from dsvm.data.blocks import Block, block_from_arrays
from dsvm.distributed.malloc import tune_malloc_for_chunks
from dsvm.solvers.base import LocalSolver, PassStats, SolverState, encode_labels
from dsvm.solvers.objective import accuracy_counts, decision_block, loss_block
from dsvm.solvers.passes import calibration_sample, pass_over_chunk
from dsvm.solvers.targets import regression_counts, targets_for

logger = logging.getLogger(__name__)


def iter_chunks(source: Any, chunk_ids: Sequence[int]) -> Iterator[tuple[int, Block]]:
    """Yield ``(chunk_id, block)`` reading one chunk ahead in a background thread."""
    if not chunk_ids:
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsvm-prefetch") as pool:
        pending = pool.submit(source.read_chunk, chunk_ids[0])
        for j, chunk in enumerate(chunk_ids):
            block = pending.result()
            if j + 1 < len(chunk_ids):
                pending = pool.submit(source.read_chunk, chunk_ids[j + 1])
            yield chunk, block
            del block  # drop our reference before the next chunk arrives


def _worker_stream_pass(
    state: SolverState,
    source: Any,
    chunk_ids: Sequence[int],
    solver: LocalSolver,
    combiner: ParameterAveraging,
    classes: np.ndarray,
    epoch: int,
    seed: int,
) -> Any:
    """One stream's share of an epoch: a local pass over its chunks, returned as a partial."""
    tune_malloc_for_chunks()
    state = state.copy()  # the broadcast state may be shared by other tasks on this worker
    stats = PassStats()
    for chunk, block in iter_chunks(source, chunk_ids):
        where = f"{source.describe()}, chunk {chunk}"
        stats += pass_over_chunk(
            solver, state, block, classes=classes, chunk=chunk, epoch=epoch, seed=seed, where=where
        )
    return combiner.chunk(state, stats)


def _worker_block_pass(
    carried: tuple[SolverState, PassStats] | SolverState,
    X: Any,
    y: np.ndarray,
    sample_weight: np.ndarray | None,
    solver: LocalSolver,
    classes: np.ndarray,
    chunk: int,
    epoch: int,
    seed: int,
) -> tuple[SolverState, PassStats]:
    """One link of a stream over dask-array chunks: pass over one chunk, carry the state on."""
    if isinstance(carried, SolverState):
        state, stats = carried.copy(), PassStats()
    else:
        state, stats = carried[0].copy(), carried[1]
    block = block_from_arrays(X, y, sample_weight)
    where = f"dask array, chunk {chunk}"
    stats = stats + pass_over_chunk(
        solver, state, block, classes=classes, chunk=chunk, epoch=epoch, seed=seed, where=where
    )
    return state, stats


def _worker_finish_stream(
    carried: tuple[SolverState, PassStats], combiner: ParameterAveraging
) -> Any:
    return combiner.chunk(*carried)


def _worker_combine(combiner: ParameterAveraging, *partials: Any) -> Any:
    return combiner.combine(list(partials))


def _worker_calibrate(
    state: SolverState, source: Any, chunk: int, solver: LocalSolver, classes: np.ndarray
) -> SolverState:
    """Data-dependent constants (SGD's eta0) from the first rows of one chunk."""
    block = calibration_sample(source.read_chunk(chunk))
    codes = targets_for(block.y, classes, where=f"{source.describe()}, chunk {chunk}")
    return solver.calibrate(state.copy(), block, codes)


@dataclass
class EvalCounts:
    """Additive evaluation sums over chunks."""

    loss_sum: float = 0.0
    weight_sum: float = 0.0
    n_correct: int = 0
    n_rows: int = 0
    # regression (classes None): sums for R^2 = 1 - sq_err / (y_sq_sum - y_sum^2 / n_rows)
    sq_err: float = 0.0
    y_sum: float = 0.0
    y_sq_sum: float = 0.0

    def __add__(self, other: EvalCounts) -> EvalCounts:
        return EvalCounts(
            self.loss_sum + other.loss_sum,
            self.weight_sum + other.weight_sum,
            self.n_correct + other.n_correct,
            self.n_rows + other.n_rows,
            self.sq_err + other.sq_err,
            self.y_sum + other.y_sum,
            self.y_sq_sum + other.y_sq_sum,
        )


def evaluate_block(
    block: Block,
    coef: np.ndarray,
    intercept: np.ndarray,
    classes: np.ndarray,
    loss: str,
    where: str,
) -> EvalCounts:
    if block.n_samples == 0:
        return EvalCounts()
    if classes is None:  # regression
        loss_sum, weight_sum = loss_block(coef, intercept, block, targets_for(block.y, None, where), loss)
        return EvalCounts(float(loss_sum), float(weight_sum), 0, block.n_samples,
                          *regression_counts(coef, intercept, block))
    codes = encode_labels(block.y, classes, where=where)
    loss_sum, weight_sum = loss_block(coef, intercept, block, codes, loss)
    n_correct, n_rows = accuracy_counts(coef, intercept, block, codes)
    return EvalCounts(float(loss_sum), float(weight_sum), int(n_correct), int(n_rows))


def _worker_evaluate(
    source: Any,
    chunk_ids: Sequence[int],
    coef: np.ndarray,
    intercept: np.ndarray,
    classes: np.ndarray,
    loss: str,
) -> EvalCounts:
    """Loss and accuracy sums over some chunks of a source, read on this worker."""
    tune_malloc_for_chunks()
    total = EvalCounts()
    for chunk, block in iter_chunks(source, chunk_ids):
        where = f"{source.describe()}, chunk {chunk}"
        total = total + evaluate_block(block, coef, intercept, classes, loss, where)
    return total


def _worker_evaluate_arrays(
    X: Any, y: np.ndarray, coef: np.ndarray, intercept: np.ndarray, classes: np.ndarray, loss: str,
    chunk: int,
) -> EvalCounts:
    return evaluate_block(
        block_from_arrays(X, y), coef, intercept, classes, loss, f"dask array, chunk {chunk}"
    )


def _worker_decision(source: Any, chunk: int, coef: np.ndarray, intercept: np.ndarray) -> np.ndarray:
    """Decision values of one chunk (n_rows, n_outputs)."""
    return decision_block(coef, intercept, source.read_chunk(chunk))


def _worker_write_predictions(source: Any, chunk: int, coef: np.ndarray, intercept: np.ndarray,
                              labels: np.ndarray | None, writer: Any) -> int:
    """Predict one chunk and write it into a prediction store (dsvm.data.predictions); returns
    the rows written. ``labels`` None writes decision values, else labels[predicted index]."""
    scores = decision_block(coef, intercept, source.read_chunk(chunk))
    if labels is None:
        values = scores[:, 0] if scores.shape[1] == 1 else scores
    else:
        index = (scores[:, 0] > 0).astype(np.intp) if scores.shape[1] == 1 \
            else np.argmax(scores, axis=1)
        values = labels[index]
    return int(writer.write(chunk, values))
