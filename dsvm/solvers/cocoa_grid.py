"""K alphas of CoCoA+ in one read: K dual vectors per row, K models stacked (#27).

Why K dual vectors and not a path from large to small alpha with warm starts (glmnet's,
scikit-learn's ``enet_path``): a path trains the alphas one after the other, each warm
started from the last, so it reads the data once per alpha and epoch, which is the cost the
grid is there to remove; and a warm start does not carry over to CoCoA+'s duals (a dual of
row i is bounded by C_i = 1/(alpha n), so the duals of one alpha are not feasible for a
smaller C). K dual vectors cost memory instead, 8 bytes x rows x K x outputs on the dual
store (next to the checkpoint, or scratch) and in the window a worker holds, which the memory
checks count (:mod:`dsvm.training.cocoa_grid`), and arithmetic: K local solvers per window.

Layout: the round's model stacks the K candidates along the outputs, ``coef`` (K*m, d) with
candidate k owning rows k*m .. (k+1)*m (as :mod:`dsvm.solvers.grid` stacks the stochastic
candidates), and a chunk's duals (rows, K*m) own the same columns, so one dual file per chunk
and version holds every candidate's duals: the store's versions, a re-run task's idempotent
writes and the adding combine (element-wise on the stacked change of w) are a single fit's.
Each candidate's local solver runs on contiguous row views of the stacked local model and a
contiguous copy of its columns of the duals, over the same coordinate order a fit of that
alpha alone takes (the order depends on the seed, epoch and chunk, never on alpha).

Rows held out for scoring (:class:`~dsvm.solvers.held_out.HeldOutRows`, a share of every
chunk by a hash of the seed, chunk and row) are left out of the chunk before the local
solver sees it: they have no duals, and a candidate is the fit of its alpha on the other rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dsvm.data.block_ops import take_rows
from dsvm.data.blocks import Block
from dsvm.solvers.cocoa import CocoaSolver
from dsvm.solvers.grid import AlphaCandidates
from dsvm.solvers.held_out import HeldOutRows, Models


@dataclass(frozen=True)
class CocoaCandidates(AlphaCandidates):
    """The K CoCoA+ solvers of a grid (one alpha each, the same loss, bias and passes),
    which of them still train, and the rows held out of every chunk (None: none).

    Parameters
    ----------
    solvers : tuple of CocoaSolver
        The candidates, in the order of their rows of the stacked model.
    active : array of bool, shape (K,), default=all True
        False: the candidate is frozen; its duals and model are carried over unchanged.
    held : HeldOutRows or None, default=None
        The rows held out of every chunk: not trained on, scored with the round's models.
    n_train : int or None, default=None
        The rows trained on (the n of C_i = s_i / (alpha n): a candidate is the fit of its
        alpha on those rows alone); None: every row of the source.
    """

    solvers: tuple[CocoaSolver, ...]
    active: np.ndarray = field(default_factory=lambda: np.ones(0, bool))
    held: HeldOutRows | None = None
    n_train: int | None = None

    n_stacks = 1  # (what the grid's tracker reads: one stack, no folds)

    def __post_init__(self) -> None:
        if not self.solvers:
            raise ValueError("CocoaCandidates needs at least one candidate solver.")
        first = self.solvers[0]
        for k, solver in enumerate(self.solvers[1:], 1):
            if (solver.loss, solver.bias, solver.local_iters, solver.rounds_per_epoch) != (
                    first.loss, first.bias, first.local_iters, first.rounds_per_epoch):
                raise ValueError(f"CocoaCandidates: candidate {k} differs from candidate 0 in "
                                 "more than alpha (loss, intercept, local_iters or rounds).")
        if len(self.active) == 0:
            object.__setattr__(self, "active", np.ones(len(self.solvers), bool))
        if len(self.active) != len(self.solvers):
            raise ValueError(f"CocoaCandidates: {len(self.active)} active flags for "
                             f"{len(self.solvers)} candidates.")

    def training(self) -> list[int]:
        """The candidates that still train."""
        return [int(k) for k in np.flatnonzero(self.active)]

    def rows(self, k: int, n_outputs: int) -> slice:
        """Candidate ``k``'s rows of the stacked model (and columns of the duals), of
        ``n_outputs`` stacked outputs."""
        m = n_outputs // self.n_candidates
        return slice(k * m, (k + 1) * m)

    def with_active(self, active: np.ndarray) -> CocoaCandidates:
        return CocoaCandidates(self.solvers, np.asarray(active, bool).copy(), self.held,
                               self.n_train)

    def models(self, coef: np.ndarray, intercept: np.ndarray) -> Models:
        """The stacked models the candidates predict with (the bias feature's weight times
        its value as the intercept), in float64."""
        bias = self.solvers[0].bias
        return (np.asarray(coef, np.float64),
                np.asarray(intercept, np.float64) * bias)

    def training_part(self, block: Block, codes: np.ndarray,
                      chunk: int) -> tuple[Block, np.ndarray]:
        """``block`` (chunk ``chunk`` whole) and its class codes without the held rows."""
        if self.held is None:
            return block, codes
        keep = self.held.training_rows(chunk, block.n_samples)
        if keep.all():
            return block, codes
        return take_rows(block, np.flatnonzero(keep)), codes[keep]
