"""CoCoA+'s work on a worker: one stream's share of a round, reading and writing its duals.

The task reads its chunks in windows of ``window`` chunks (the fit's ``shuffle_window``, at
most WINDOW_BYTES of rows, so memory stays bounded) and the duals of those chunks as they were
after ``epoch`` epochs, runs the local dual coordinate steps over the window's rows together
against the round's model (sigma' = the number of streams), writes each chunk's new duals as
version ``epoch + 1`` and returns the change of w it made (see :mod:`dsvm.combine.adding`).
Everything it does is a pure function of (model, epoch, seed, chunk ids, window, stored duals
of version ``epoch``): a re-run task (lost worker) writes the same duals and returns the same
change.

Why windows: the local solver's passes over one chunk at a time solve each chunk's block of
the local subproblem in turn, and the blocks exchange their changes only once per round; on
a9a (lambda = 1/n, 2 streams of four 4,096-row chunks, 20 passes) that left the primal 1%
above LIBLINEAR's optimum after 10 epochs, against 0.04% with the 4 chunks in one window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dsvm.combine.adding import AddPartial
from dsvm.data.block_ops import concat_blocks
from dsvm.data.blocks import Block
from dsvm.data.duals import AnyDualStore
from dsvm.data.sources import Source
from dsvm.engine.tasks import iter_chunks, where
from dsvm.solvers.base import encode_labels
from dsvm.solvers.cocoa import (
    CocoaSolver,
    LocalModel,
    chunk_rng,
    dcd_block,
    gap_terms,
    local_passes,
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
    store: AnyDualStore
    epoch: int
    seed: int
    sigma: float  # CoCoA+'s sigma' (the number of streams whose changes are added)
    n_total: int  # rows of the whole training set (C_i = s_i / (alpha n))
    class_weight: np.ndarray | None = None
    window: int = 1  # chunks whose rows the local solver takes together (shuffle_window)

    @property
    def nbytes(self) -> int:
        return int(self.coef.nbytes)

    def __call__(self, source: Source, chunk_ids: Sequence[int]) -> AddPartial | None:
        local = LocalModel.start(self.coef, self.intercept)
        out = AddPartial(local.dW, local.db, np.zeros(4))
        window: list[tuple[int, Block]] = []
        for chunk, block in iter_chunks(source, chunk_ids, ahead=self.window):
            window.append((chunk, block))
            if len(window) == max(1, self.window):
                self.solve_window(source, window, local, out)
                window = []
        if window:
            self.solve_window(source, window, local, out)
        return out if out.n_rows else None

    def solve_window(self, source: Source, window: list[tuple[int, Block]], local: LocalModel,
                     out: AddPartial) -> None:
        """Local DCD over the rows of the window's chunks together (``local_iters`` passes in
        one order of all of them), then each chunk's new duals written as version epoch + 1."""
        parts = []
        for chunk, block in window:
            codes = encode_labels(block.y, self.classes, where=where(source, chunk))
            block = with_weights(block, codes, self.class_weight)
            cost = row_costs(block, self.n_total, self.solver.alpha)
            duals = self.store.read(chunk, self.epoch, block.n_samples)
            # the gap terms of the model and duals this round starts from
            out.terms += gap_terms(self.solver, block, codes, cost, duals, self.coef,
                                   self.intercept)
            parts.append((block, codes, cost, duals))
        kept = [p for p in parts if p[0].n_samples] or parts[:1]
        rows = concat_blocks([p[0] for p in kept])
        duals = np.concatenate([p[3] for p in kept])
        codes = np.concatenate([p[1] for p in kept])
        cost = np.concatenate([p[2] for p in kept])
        for order in local_passes(rows.n_samples, self.solver.local_iters,
                                  chunk_rng(self.seed, self.epoch, window[0][0])):
            out.n_changed += dcd_block(self.solver, rows, codes, cost, duals, local, order,
                                       self.sigma)
        start = 0
        for (chunk, _), (block, _, _, _) in zip(window, parts):
            if block.n_samples:
                self.store.write(chunk, self.epoch + 1, duals[start:start + block.n_samples])
                start += block.n_samples
            else:
                self.store.write(chunk, self.epoch + 1, np.zeros((0, self.store.n_outputs)))
            out.n_rows += block.n_samples
