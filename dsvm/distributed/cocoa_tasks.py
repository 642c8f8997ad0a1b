"""CoCoA+'s work on a worker: one stream's share of a round, reading and writing its duals.

The task reads each of its chunks and the duals of that chunk as they were after ``epoch``
epochs, runs the local dual coordinate steps against the round's model (sigma' = the number
of streams), writes the chunk's new duals as version ``epoch + 1`` and returns the change of w
it made (see :mod:`dsvm.combine.adding`). Everything it does is a pure function of (model,
epoch, seed, chunk ids, stored duals of version ``epoch``): a re-run task (lost worker) writes
the same duals and returns the same change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dsvm.combine.adding import AddPartial
from dsvm.data.duals import DualStore
from dsvm.distributed.tasks import iter_chunks, where
from dsvm.solvers.base import encode_labels
from dsvm.solvers.cocoa import (
    CocoaSolver,
    LocalModel,
    chunk_rng,
    dcd_block,
    gap_terms,
    local_order,
    row_costs,
    with_weights,
)


@dataclass(frozen=True)
class CocoaRound:
    """One stream's local DCD over its chunks of one round."""

    coef: np.ndarray  # (K, d) float64, the round's w
    intercept: np.ndarray  # (K,) the bias feature's weight
    solver: CocoaSolver
    classes: np.ndarray
    store: DualStore
    epoch: int
    seed: int
    sigma: float  # CoCoA+'s sigma' (the number of streams whose changes are added)
    n_total: int  # rows of the whole training set (C_i = s_i / (alpha n))
    class_weight: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        return int(self.coef.nbytes)

    def __call__(self, source: Any, chunk_ids: Sequence[int]) -> AddPartial | None:
        local = LocalModel.start(self.coef, self.intercept)
        terms = np.zeros(4)
        n_rows = n_changed = 0
        for chunk, block in iter_chunks(source, chunk_ids):
            codes = encode_labels(block.y, self.classes, where=where(source, chunk))
            block = with_weights(block, codes, self.class_weight)
            cost = row_costs(block, self.n_total, self.solver.alpha)
            duals = self.store.read(chunk, self.epoch, block.n_samples)
            # the gap terms of the model and duals this round starts from
            terms += gap_terms(self.solver, block, codes, cost, duals, self.coef, self.intercept)
            order = local_order(block.n_samples, self.solver.local_iters,
                                chunk_rng(self.seed, self.epoch, chunk))
            n_changed += dcd_block(self.solver, block, codes, cost, duals, local, order,
                                   self.sigma)
            self.store.write(chunk, self.epoch + 1, duals)
            n_rows += block.n_samples
        if n_rows == 0:
            return None
        return AddPartial(local.dW, local.db, terms, n_rows, n_changed)
