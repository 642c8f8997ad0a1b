"""An epoch's work before and after its passes, done where the model is held.

On a cluster the model stays on the workers between epochs (#12 item 3): an epoch starts from
the previous epoch's :class:`Outcome` (a future), :class:`Prepare` builds the shipped state
with its probe models next to it, the streams take that :class:`EpochStart`, and
:class:`Finish` runs in the task at the root of the combine tree: it finalizes the next state,
updates the model selection and measures what the epoch's history record needs. Only the
small :class:`EpochSummary` comes to the client. Before this, the combined float64 sums went
to the client (16 bytes per feature and output), the client finalized them, and scattered the
next state back: at 2^22 features those round trips were two thirds of the per-epoch overhead
(0.08 s scatter, 0.19 s gather of a 0.42 s overhead; bench_overhead). In this process
(:class:`~dsvm.engine.local.LocalEngine`) the same objects run in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from dsvm.combine.base import Combiner, aggregate
from dsvm.engine.tasks import EpochStart
from dsvm.solvers.base import LocalSolver, PassStats, SolverState, selection_of
from dsvm.solvers.held_out import HeldOutRows
from dsvm.training.probes import (
    penalty_of,
    returned_kind,
    sampled_objective,
    ship_with_probes,
)


@dataclass(frozen=True)
class EpochSummary:
    """What the client needs of an epoch for its history record and stopping rule."""

    stats: PassStats
    objective: float  # the penalty at the new model plus the progressive loss
    sampled: tuple[float | None, str]  # the start model's sampled objective, and its kind
    t: float
    extrapolated: bool | None  # averaged Pegasos: whether the model is the extrapolation


@dataclass(frozen=True)
class Outcome:
    """What an epoch leaves where it ran: the state, and its summary (None before the first
    epoch of a run)."""

    state: SolverState
    summary: EpochSummary | None = None

    def __sizeof__(self) -> int:
        return 64 + self.state.nbytes  # (dask's memory accounting)


def state_of(outcome: Outcome) -> SolverState:
    return outcome.state


def summary_of(outcome: Outcome) -> EpochSummary | None:
    return outcome.summary


def objective_of(state: SolverState, solver: LocalSolver, loss_mean: float) -> float:
    """The epoch's objective estimate: the penalty at the model plus the progressive loss."""
    coef, _ = state.model()
    return penalty_of(solver, coef) + loss_mean


@dataclass(frozen=True)
class Prepare:
    """The epoch's :class:`EpochStart` from the previous :class:`Outcome`."""

    solver: LocalSolver
    n_samples: int

    def __call__(self, before: Outcome) -> EpochStart:
        shipped, returned = ship_with_probes(before.state, self.solver, self.n_samples)
        return EpochStart(shipped, returned, returned_kind(before.state))


@dataclass(frozen=True)
class Finish:
    """At the root of the combine: the next :class:`Outcome` from the root's partials (with
    a row fold, the held-out sums of the start models get those models' penalties here, once)."""

    solver: LocalSolver
    combiner: Combiner
    held_out: HeldOutRows | None = None

    def __call__(self, partials: list[Any], before: Outcome, start: EpochStart) -> Outcome:
        new, stats = aggregate(self.combiner, partials, start.shipped)
        if self.held_out is not None:
            stats = replace(stats, held_out=self.held_out.with_penalties(
                stats.held_out, start.shipped, start.returned))
        selection = selection_of(self.solver)
        if selection is not None:
            selection.update(before.state, start.shipped, new, stats)
        loss_mean = stats.loss_sum / max(stats.weight_sum, 1e-300)
        sampled = sampled_objective(start.shipped, stats, self.solver, start.returned)
        return Outcome(new, EpochSummary(
            stats=stats, objective=objective_of(new, self.solver, loss_mean),
            sampled=(sampled, start.kind), t=new.t,
            extrapolated=None if new.selection is None else bool(new.selection.use)))
