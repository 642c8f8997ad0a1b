"""One solver pass over one chunk: the unit of work shared by in-process and worker code."""

from __future__ import annotations

import numpy as np

from dsvm.data.blocks import Block
from dsvm.data.order import row_order
from dsvm.solvers.base import LocalSolver, PassStats, SolverState, encode_labels


def pass_over_chunk(
    solver: LocalSolver,
    state: SolverState,
    block: Block,
    *,
    classes: np.ndarray,
    chunk: int,
    epoch: int,
    seed: int,
    where: str,
) -> PassStats:
    """Run ``solver`` over the rows of ``block`` in this epoch's order, mutating ``state``."""
    if block.n_samples == 0:
        return PassStats()
    codes = encode_labels(block.y, classes, where=where)
    order = row_order(seed, epoch, chunk, block.n_samples)
    return solver.run_block(state, block, codes, order)


def calibration_sample(block: Block, max_rows: int = 1000) -> Block:
    """The first ``max_rows`` rows of a block: what SGD's eta0 calibration looks at."""
    from dsvm.data.blocks import CSRBlock, DenseBlock

    n = min(block.n_samples, max_rows)
    sw = None if block.sample_weight is None else block.sample_weight[:n]
    if isinstance(block, DenseBlock):
        return DenseBlock(X=block.X[:n], y=block.y[:n], sample_weight=sw)
    end = int(block.indptr[n])
    return CSRBlock(
        indptr=block.indptr[: n + 1],
        indices=block.indices[:end],
        data=block.data[:end],
        y=block.y[:n],
        n_features=block.n_features,
        sample_weight=sw,
    )
