"""CoCoA+'s work on a worker: one stream's share of a round, reading and writing its duals.

The task reads its chunks in windows of ``window`` chunks (the fit's ``shuffle_window``, at
most WINDOW_BYTES of rows, so memory stays bounded) and the duals of those chunks as they were
after ``epoch`` epochs, runs the local dual coordinate steps over the window's rows together
against the round's model (sigma' = the number of streams), writes each chunk's new duals as
version ``epoch + 1`` and returns the change of w it made (see :mod:`dsvm.combine.adding`).
Everything it does is a pure function of (model, epoch, seed, chunk ids, window, stored duals
of version ``epoch``): a re-run task (lost worker) writes the same duals and returns the same
change. With ``grid`` it runs K candidates' local solvers over the same rows, read once
(:mod:`dsvm.solvers.cocoa_grid`), and scores the rows held out of every chunk with the round's
models on the way.

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
    LocalPasses,
    chunk_rng,
    dcd_block,
    enough_gain,
    local_passes,
    round_start,
    row_costs,
    with_weights,
)
from dsvm.solvers.cocoa_grid import CocoaCandidates


@dataclass(frozen=True)
class CocoaRound:
    """One stream's local DCD over its chunks of one round (``grid``: of K candidates at once,
    each against its own rows of the stacked round model, :mod:`dsvm.solvers.cocoa_grid`)."""

    coef: np.ndarray  # (K, d) float64, the round's w (a grid: (candidates x K, d))
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
    grid: CocoaCandidates | None = None  # K alphas in one read (None: the solver's alone)

    @property
    def nbytes(self) -> int:
        return int(self.coef.nbytes)

    @property
    def candidates(self) -> CocoaCandidates:
        return self.grid if self.grid is not None else CocoaCandidates((self.solver,))

    def __call__(self, source: Source, chunk_ids: Sequence[int]) -> AddPartial | None:
        local = LocalModel.start(self.coef, self.intercept)
        n_candidates = self.candidates.n_candidates
        # a single fit's gap terms are 4 numbers, a grid's 4 per candidate
        terms = np.zeros(4) if self.grid is None else np.zeros((n_candidates, 4))
        out = AddPartial(local.dW, local.db, terms)
        window: list[tuple[int, Block]] = []
        for chunk, block in iter_chunks(source, chunk_ids, ahead=self.window):
            window.append((chunk, block))
            if len(window) == max(1, self.window):
                self.solve_window(source, window, local, out)
                window = []
        if window:
            self.solve_window(source, window, local, out)
        return out if out.n_rows or out.held_out is not None else None

    def read_chunk(self, source: Source, chunk: int, block: Block, out: AddPartial
                   ) -> tuple[Block, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A chunk's training rows, their class codes, each candidate's C_i (K, rows), the
        duals of version ``epoch`` and each candidate's part of the primal objective (K,);
        its held rows scored, and its gap terms added to ``out``."""
        grid = self.candidates
        codes = encode_labels(block.y, self.classes, where=where(source, chunk))
        if grid.held is not None:  # scored with the round's models, then left out
            counts = grid.held.score(grid.models(self.coef, self.intercept), block, chunk,
                                     where(source, chunk)).held_out
            out.held_out = counts if out.held_out is None else out.held_out + counts
            block, codes = grid.training_part(block, codes, chunk)
        block = with_weights(block, codes, self.class_weight)
        costs = np.stack([row_costs(block, self.n_total, s.alpha) for s in grid.solvers])
        duals = self.store.read(chunk, self.epoch, block.n_samples)
        # the gap terms of the model and duals this round starts from (a frozen candidate's
        # are not measured: it costs no compute)
        terms = out.terms.reshape(grid.n_candidates, 4)
        objective = np.zeros(grid.n_candidates)
        for k in grid.training():
            own = grid.rows(k, self.coef.shape[0])
            chunk_terms, objective[k] = round_start(grid.solvers[k], block, codes, costs[k],
                                                    duals[:, own], self.coef[own],
                                                    self.intercept[own])
            terms[k] += chunk_terms
        return block, codes, costs, duals, objective

    def solve_window(self, source: Source, window: list[tuple[int, Block]], local: LocalModel,
                     out: AddPartial) -> None:
        """Local DCD over the rows of the window's chunks together (``local_iters`` passes in
        one order of all of them, the same for every candidate), then each chunk's new duals
        written as version epoch + 1."""
        grid = self.candidates
        parts = [self.read_chunk(source, chunk, block, out) for chunk, block in window]
        kept = [p for p in parts if p[0].n_samples] or parts[:1]
        rows = concat_blocks([p[0] for p in kept])
        codes = np.concatenate([p[1] for p in kept])
        costs = np.concatenate([p[2] for p in kept], axis=1)
        duals = np.concatenate([p[3] for p in kept])
        stacked = self.coef.shape[0]
        # each candidate's duals as a contiguous array (the kernel's layout); one candidate:
        # the duals themselves
        own = [np.ascontiguousarray(duals[:, grid.rows(k, stacked)])
               for k in range(grid.n_candidates)]
        objective = np.sum([p[4] for p in parts], axis=0)  # (the window's, by candidate)
        passes = LocalPasses({k: enough_gain(grid.solvers[k], float(objective[k]))
                              for k in grid.training()})
        for order in local_passes(rows.n_samples, self.solver.local_iters,
                                  chunk_rng(self.seed, self.epoch, window[0][0])):
            for k in passes.active():
                changed, spread = dcd_block(grid.solvers[k], rows, codes, costs[k], own[k],
                                            local.rows(grid.rows(k, stacked)), order,
                                            self.sigma)
                out.n_changed += changed
                passes.record(k, spread)
            if not passes.active():
                break
        duals = own[0] if len(own) == 1 else np.hstack(own)  # (frozen ones: as read)
        start = 0
        for (chunk, _), (block, *_) in zip(window, parts):
            if block.n_samples:
                self.store.write(chunk, self.epoch + 1, duals[start:start + block.n_samples])
                start += block.n_samples
            else:
                self.store.write(chunk, self.epoch + 1, np.zeros((0, self.store.n_outputs)))
            out.n_rows += block.n_samples
