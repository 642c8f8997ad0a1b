"""k folds for the grid of alphas (``cv=k``, #27): the rows it scores on, and how its k + 1
stacks of candidates are combined.

With ``cv=None`` the grid holds out a share of every chunk's rows (``cv_fraction``,
:class:`dsvm.data.fold.RowFold`). With ``cv=k`` every row is in one of k folds
(:class:`dsvm.data.fold.KFold`), and the grid trains k + 1 stacks of the K candidates in the
same pass (:mod:`dsvm.solvers.grid`, "Stacks"): stack 0 on every row (the models published:
each is the fit of its alpha on all the rows, no refit), stack f + 1 on the rows outside
fold f, scored on fold f in the pass (:class:`dsvm.solvers.fold_scores.FoldScores`). A
candidate's score is the mean of its k fold scores.

:class:`StackAveraging` combines the streams stack by stack with the fit's own combiner:
the stacks took different steps (stack f + 1 skipped fold f's rows), so each pools its own
step counter and averaging weight and weighs its streams by the rows it trained on. Stack 0
is combined exactly as a fit of its alphas alone would be.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dsvm.combine.base import Combiner, aggregate
from dsvm.data.fold import RowFold, fold_for, kfold_for
from dsvm.solvers.base import LocalSolver, PassStats, SolverState
from dsvm.solvers.fold_scores import FoldScores
from dsvm.solvers.grid import (
    ACTIVE,
    ETA0,
    STACK_N_AVG,
    STACK_ROWS,
    STACK_T,
    CandidateGrid,
)
from dsvm.solvers.held_out import HeldOutRows

__all__ = ["StackAveraging", "held_out_for", "n_stacks_for"]


def n_stacks_for(cv: int | None) -> int:
    """The stacks of candidates a grid trains: 1 (a held-out share), or k + 1 for k folds."""
    return 1 if cv is None else int(cv) + 1


def held_out_for(cv: int | None, cv_fraction: float, seed: int, source: Any,
                 solvers: tuple[LocalSolver, ...], classes: np.ndarray | None,
                 loss: Any) -> HeldOutRows:
    """What the grid's passes score: the held-out share of every chunk (``cv=None``) or its
    k folds."""
    if cv is None:
        fold: RowFold = fold_for(seed, cv_fraction, source)
        return HeldOutRows(fold, solvers, classes, loss)
    return FoldScores(kfold_for(seed, int(cv), source), solvers, classes, loss)


@dataclass
class StackPartials:
    """One partial of the inner combiner per stack (None where a stack saw no row)."""

    parts: list[Any]

    def __sizeof__(self) -> int:  # (dask's memory accounting)
        return 64 + sum(sys.getsizeof(p) for p in self.parts)


class StackAveraging:
    """The combine of a grid of several stacks: ``inner`` (parameter averaging) on each stack
    as the state of a grid of its own, the stacks joined back into one state."""

    def __init__(self, inner: Combiner, grid: CandidateGrid) -> None:
        self.inner, self.grid = inner, grid
        self.name = inner.name

    def chunk(self, state: SolverState, stats: PassStats) -> StackPartials | None:
        if stats.n_rows == 0:
            return None
        rows = state.extra[STACK_ROWS]
        parts = []
        for s in range(self.grid.n_stacks):
            own = stats if s == 0 else PassStats(n_rows=int(rows[s]))
            parts.append(self.inner.chunk(self.grid.stack(state, s), own))
        return StackPartials(parts)

    def combine(self, partials: Sequence[StackPartials | None]) -> StackPartials | None:
        present = [p for p in partials if p is not None]
        if not present:
            return None
        if len(present) == 1:
            return present[0]
        return StackPartials([self.inner.combine([p.parts[s] for p in present])
                              for s in range(self.grid.n_stacks)])

    def finalize(self, partial: StackPartials | None, previous: SolverState
                 ) -> tuple[SolverState, PassStats]:
        if partial is None:  # no stream saw a row: nothing changes
            return previous.copy(), PassStats()
        done = [self.inner.finalize(partial.parts[s], self.grid.stack(previous, s))
                for s in range(self.grid.n_stacks)]
        return joined([state for state, _ in done]), done[0][1]

    def aggregate(self, partials: Sequence[StackPartials | None], previous: SolverState
                  ) -> tuple[SolverState, PassStats]:
        """The next state from the root's partials: the inner combiner's ``aggregate`` per
        stack (lone streams' states pooled in one pass each)."""
        present = [p for p in partials if p is not None]
        if not present:
            return previous.copy(), PassStats()
        done = [aggregate(self.inner, [p.parts[s] for p in present],
                          self.grid.stack(previous, s))
                for s in range(self.grid.n_stacks)]
        return joined([state for state, _ in done]), done[0][1]


def joined(stacks: list[SolverState]) -> SolverState:
    """One grid state from its stacks' states (stack 0's counters on top, each stack's in
    ``extra``, the rows of the epoch set back to 0 for the next)."""
    first = stacks[0]

    def cat(name: str) -> np.ndarray | None:
        arrays = [getattr(s, name) for s in stacks]
        return None if arrays[0] is None else np.concatenate(arrays)

    coef, intercept = cat("coef"), cat("intercept")
    assert coef is not None and intercept is not None
    return SolverState(
        coef=coef, intercept=intercept, t=first.t, avg_coef=cat("avg_coef"),
        avg_intercept=cat("avg_intercept"), n_avg=first.n_avg, eta0=first.eta0,
        extra={ACTIVE: np.concatenate([s.extra[ACTIVE] for s in stacks]),
               ETA0: np.concatenate([s.extra[ETA0] for s in stacks]),
               STACK_T: np.array([float(s.t) for s in stacks]),
               STACK_N_AVG: np.array([float(s.n_avg) for s in stacks]),
               STACK_ROWS: np.zeros(len(stacks))})

