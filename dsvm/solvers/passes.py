"""One solver pass over one chunk: the unit of work shared by in-process and worker code."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dsvm.data.blocks import Block
from dsvm.data.order import row_order
from dsvm.data.readers import slice_block
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
