"""One solver pass over one chunk: the unit of work shared by in-process and worker code."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from dsvm.data.blocks import Block
from dsvm.data.order import row_order
from dsvm.data.readers import concat_blocks, slice_block
from dsvm.kernels.losses import loss_code
from dsvm.kernels.probe import probe_loss_sums
from dsvm.solvers.base import LocalSolver, PassStats, SolverState
from dsvm.solvers.objective import kernel_inputs
from dsvm.solvers.targets import targets_for


def pass_over_chunk(
    solver: LocalSolver,
    state: SolverState,
    block: Block,
    *,
    classes: np.ndarray | None,
    chunk: int,
    epoch: int,
    seed: int,
    where: str,
    class_weight: np.ndarray | None = None,
) -> PassStats:
    """Run ``solver`` over the rows of ``block`` in this epoch's order, mutating ``state``.

    ``class_weight``: a weight per class code, multiplied into the rows' sample weights."""
    if block.n_samples == 0:
        return PassStats()
    codes = targets_for(block.y, classes, where=where)  # classes None: regression
    block = with_class_weight(block, codes, class_weight)
    order = row_order(seed, epoch, chunk, block.n_samples)
    probe = probe_losses(state, block, codes, solver)
    stats = solver.run_block(state, block, codes, order)
    return stats if probe is None else stats + probe


def pass_over_window(
    solver: LocalSolver,
    state: SolverState,
    window: list[tuple[int, Block]],
    *,
    classes: np.ndarray | None,
    epoch: int,
    seed: int,
    where: Callable[[int], str],
    class_weight: np.ndarray | None = None,
) -> PassStats:
    """One pass over the rows of several chunks, interleaved in one random order.

    A stream reads its chunks in windows (``shuffle_window`` of them, re-drawn every epoch,
    :mod:`dsvm.training.loop`), so that data stored sorted by label or by time trains like
    shuffled data: the rows of a window are visited in one permutation of all of them,
    drawn from (seed, epoch, the window's first chunk). The probe losses are taken chunk by
    chunk (every s-th row of each chunk: the same rows every epoch, whatever the windows).
    A window of one chunk is exactly :func:`pass_over_chunk`.
    """
    stats = PassStats()
    blocks, codes = [], []
    for chunk, block in window:
        if block.n_samples == 0:
            continue
        block_codes = targets_for(block.y, classes, where=where(chunk))
        block = with_class_weight(block, block_codes, class_weight)
        probe = probe_losses(state, block, block_codes, solver)
        if probe is not None:
            stats = stats + probe
        blocks.append(block)
        codes.append(block_codes)
    if not blocks:
        return stats
    rows = concat_blocks(blocks)
    order = (row_order(seed, epoch, window[0][0], rows.n_samples) if len(blocks) == 1
             else segment_order(seed, epoch, window[0][0], rows.n_samples))
    run = solver.run_block(state, rows, codes[0] if len(codes) == 1 else np.concatenate(codes),
                           order)
    return run + stats


# Rows of a window are interleaved in runs of this many consecutive stored rows, the runs in a
# random order: a random order of single rows over a window of 8 chunks ran at half the speed
# (each row a cache miss over 100 MB, where the rows of one chunk fit in cache), while runs of
# 16 rows (6 KB of 100 float32 features) stream from memory; label-sorted a9a in 2,000-row
# chunks still trained to 84.1-84.8% (runs of 64: 82-83%; single rows: 84.5-85.0%).
SEGMENT_ROWS = 16


def segment_order(seed: int, epoch: int, key: int, n_rows: int,
                  segment: int = SEGMENT_ROWS) -> np.ndarray:
    """Rows 0..n_rows-1 in runs of ``segment`` consecutive rows, the runs in a random order
    drawn from (seed, epoch, key)."""
    n_segments = -(-n_rows // segment)
    runs = row_order(seed, epoch, key, n_segments)
    starts = runs * segment
    order = (starts[:, None] + np.arange(segment)[None, :]).ravel()
    return order[order < n_rows].astype(np.int64)


def with_class_weight(block: Block, codes: np.ndarray,
                      class_weight: np.ndarray | None) -> Block:
    """``block`` with each row's sample weight multiplied by its class's weight."""
    if class_weight is None:
        return block
    weights = np.asarray(class_weight, dtype=np.float64)[codes]
    if block.sample_weight is not None:
        weights = weights * np.asarray(block.sample_weight, dtype=np.float64)
    return replace(block, sample_weight=weights)


def probe_losses(state: SolverState, block: Block, codes: np.ndarray,
                 solver: LocalSolver) -> PassStats | None:
    """The loss sums of the state's probe models on every ``state.probe_stride``-th row of
    ``block`` (see :mod:`dsvm.solvers.extrapolation`), as PassStats with only probe fields."""
    if state.probe_coef is None:
        return None
    args = kernel_inputs(block, codes, np.empty(0, np.int64), state, "probe")
    n_probes = state.probe_coef.shape[0] // state.n_outputs
    sums = np.zeros((2, n_probes))
    weight, count = probe_loss_sums(
        args.X, block.n_samples, args.codes, args.sample_weight, int(state.probe_stride),
        np.ascontiguousarray(state.probe_coef, np.float64),
        np.ascontiguousarray(state.probe_intercept, np.float64), state.n_outputs,
        loss_code(solver.loss), float(getattr(solver, "loss_param", 0.0)), sums)
    return PassStats(probe_sums=sums, probe_weight=float(weight), probe_rows=int(count))


def calibration_sample(block: Block, max_rows: int = 1000) -> Block:
    """The first ``max_rows`` rows of a block: what SGD's eta0 calibration looks at."""
    return slice_block(block, 0, min(block.n_samples, max_rows))
