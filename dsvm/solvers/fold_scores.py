"""k folds scored in the training pass: fold f's rows with the models trained without them.

With ``cv=k`` (:mod:`dsvm.training.grid`) every row is in one fold of a
:class:`~dsvm.data.fold.KFold`, and the grid's state holds k + 1 stacks of the K candidates
(:mod:`dsvm.solvers.grid`, "Stacks"): stack 0 trained on every row, stack f + 1 on the rows
outside fold f. :class:`FoldScores` is :class:`~dsvm.solvers.held_out.HeldOutRows` for it:
the stream task that reads a chunk scores the chunk's rows of fold f with stack f + 1's
models (one product of those rows with the stack's K models: over the k folds, one product
of every row with K models), and the sums of the k x K (fold, candidate) pairs ride in the
pass statistics, candidate j of fold f at index f K + j, as the held-out share's K sums do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dsvm.data.block_ops import take_rows
from dsvm.data.blocks import Block
from dsvm.data.fold import FoldMasks, KFold
from dsvm.solvers.base import PassStats, SolverState
from dsvm.solvers.evaluation import GridCounts, grid_counts
from dsvm.solvers.grid import candidate_penalty
from dsvm.solvers.held_out import HeldOutRows, Models


@dataclass(frozen=True)
class FoldScores(HeldOutRows):
    """The k folds of a grid and how each is scored (``fold`` is a :class:`KFold`; the
    other parameters as :class:`HeldOutRows`'s, ``solvers`` the K candidates)."""

    fold: KFold  # type: ignore[assignment]  # (k folds where HeldOutRows holds one share)

    @property
    def n_splits(self) -> int:
        return int(self.fold.n_splits)

    def fold_rows(self, models: Models, f: int) -> Models:
        """Stack f + 1's K models (those trained without fold f) of the stacked ``models``."""
        coef, intercept = models
        width = coef.shape[0] // (self.n_splits + 1)
        rows = slice((f + 1) * width, (f + 2) * width)
        return coef[rows], intercept[rows]

    def score(self, models: Models, block: Block, chunk: int, where: str,
              masks: FoldMasks | None = None) -> PassStats:
        """The sums of every (fold, candidate) pair over ``block``'s rows (``block`` is chunk
        ``chunk`` whole): the rows of fold f scored with the models trained without them."""
        assert isinstance(self.fold, KFold)
        labels = (masks or self.fold).fold_of(chunk, block.n_samples)
        candidates, class_rows = [], None
        for f in range(self.n_splits):
            held = take_rows(block, np.flatnonzero(labels == f).astype(np.int64))
            coef, intercept = self.fold_rows(models, f)
            part = grid_counts(held, coef, intercept, self.n_candidates, self.classes,
                               self.loss, where)
            candidates += part.candidates
            class_rows = part.class_rows if class_rows is None else class_rows + part.class_rows
        assert class_rows is not None
        return PassStats(held_out=GridCounts(candidates, class_rows))

    def training_rows(self, chunk: int, n_rows: int) -> np.ndarray:
        """Every row trains (stack 0: the published models)."""
        return np.ones(int(n_rows), bool)

    def penalties(self, state: SolverState, returned: int | None = None) -> np.ndarray:
        """The regulariser of every (fold, candidate) pair's model, in their order."""
        models = self.models(state, returned)
        out = []
        for f in range(self.n_splits):
            coef, _ = self.fold_rows(models, f)
            m = coef.shape[0] // self.n_candidates
            out += [candidate_penalty(s, coef[k * m:(k + 1) * m])
                    for k, s in enumerate(self.solvers)]
        return np.array(out)
