"""The held-out rows of a pass: left out of its training, scored with the models it started from.

A :class:`~dsvm.data.fold.RowFold` holds out a share of every chunk's rows. The epoch's
stream tasks read every chunk anyway, so they also score the held rows there, with the models
the epoch started from (as the probes of :mod:`dsvm.training.probes` measure the start model
while the epoch reads its rows): validation costs no read of its own. The sums
(:class:`~dsvm.solvers.evaluation.GridCounts`, one :class:`EvalCounts` per candidate) ride in
the pass statistics (``PassStats.held_out``) and add up through the combine tree. So the score
of the model after epoch e arrives with epoch e+1's statistics: one epoch late.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dsvm.data.block_ops import take_rows
from dsvm.data.blocks import Block
from dsvm.data.fold import FoldMasks, RowFold
from dsvm.solvers.base import LocalSolver, PassStats, SolverState
from dsvm.solvers.evaluation import GridCounts, grid_counts
from dsvm.solvers.grid import candidate_penalty

# (coef, intercept) of the candidates stacked along the outputs, float64
Models = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class HeldOutRows:
    """The row fold of a fit and how its held rows are scored.

    Parameters
    ----------
    fold : RowFold
        Which rows of every chunk are held out.
    solvers : tuple of LocalSolver
        The candidates whose models are stacked along the state's outputs (candidate k owns
        rows k*m .. (k+1)*m, :mod:`dsvm.solvers.grid`); one solver for a single fit.
    classes : array or None
        The class values (None: a regression).
    loss : str or LossSpec, or a tuple of them
        The loss the held-out objective sums; a tuple: each candidate's own (a grid of
        losses, in the candidates' order).
    """

    fold: RowFold
    solvers: tuple[LocalSolver, ...]
    classes: np.ndarray | None
    loss: Any  # a loss name or spec (what solvers.evaluation.grid_counts takes)

    @property
    def n_candidates(self) -> int:
        return len(self.solvers)

    def models(self, state: SolverState, returned: int | None = None) -> Models:
        """The stacked models ``state`` predicts with, in float64 (once per task: a
        conversion per chunk would copy K models per chunk). A grid's candidates share their
        counters, so candidate k's model is rows k*m .. (k+1)*m of the state's model.
        ``returned``: the index of the probe model (:mod:`dsvm.training.probes`) that a
        shipped state predicts with (averaged Pegasos' extrapolation, which a shipped
        state's ``model()`` no longer knows), None for the state's own model."""
        if returned is not None and state.probe_coef is not None \
                and state.probe_intercept is not None:
            m = state.n_outputs
            return (state.probe_coef[returned * m:(returned + 1) * m],
                    state.probe_intercept[returned * m:(returned + 1) * m])
        coef, intercept = state.model()
        return np.asarray(coef, np.float64), np.asarray(intercept, np.float64)

    def score(self, models: Models, block: Block, chunk: int, where: str,
              masks: FoldMasks | None = None) -> PassStats:
        """The evaluation sums of every candidate on ``block``'s held rows (``block`` is
        chunk ``chunk`` whole), as pass statistics with only ``held_out`` set (``masks``:
        the task's, which keep the chunk's mask for its pass)."""
        rows = (masks or self.fold).held_rows(chunk, block.n_samples)
        held = take_rows(block, rows)
        return PassStats(held_out=grid_counts(held, models[0], models[1], self.n_candidates,
                                              self.classes, self.loss, where))

    def training_rows(self, chunk: int, n_rows: int) -> np.ndarray:
        """True for the rows of ``chunk`` the pass trains on."""
        return ~self.fold.held_mask(chunk, n_rows)

    def penalties(self, state: SolverState, returned: int | None = None) -> np.ndarray:
        """Each candidate's regulariser at the model ``state`` predicts with (the held-out
        objective is it plus the mean held-out loss)."""
        coef, _ = self.models(state, returned)
        m = coef.shape[0] // self.n_candidates
        return np.array([candidate_penalty(s, coef[k * m:(k + 1) * m])
                         for k, s in enumerate(self.solvers)])

    def with_penalties(self, counts: Any, state: SolverState,
                       returned: int | None = None) -> Any:
        """``counts`` (GridCounts or None) with the penalties of ``state``'s models (a new
        object: a stream's partial may be a task result that others read too)."""
        if not isinstance(counts, GridCounts):
            return counts
        return replace(counts, penalties=self.penalties(state, returned))
