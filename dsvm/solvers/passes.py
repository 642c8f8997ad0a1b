"""One solver pass over one chunk: the unit of work shared by in-process and worker code."""

from __future__ import annotations

import numpy as np

from dsvm.data.blocks import Block
from dsvm.data.order import row_order
from dsvm.data.readers import slice_block
from dsvm.solvers.base import LocalSolver, PassStats, SolverState
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
) -> PassStats:
    """Run ``solver`` over the rows of ``block`` in this epoch's order, mutating ``state``."""
    if block.n_samples == 0:
        return PassStats()
    codes = targets_for(block.y, classes, where=where)  # classes None: regression
    order = row_order(seed, epoch, chunk, block.n_samples)
    return solver.run_block(state, block, codes, order)


def calibration_sample(block: Block, max_rows: int = 1000) -> Block:
    """The first ``max_rows`` rows of a block: what SGD's eta0 calibration looks at."""
    return slice_block(block, 0, min(block.n_samples, max_rows))
