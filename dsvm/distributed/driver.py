"""The epoch loop: broadcast the state, run the streams, combine, record, decide whether to stop.

Each epoch re-draws the chunk order from (seed, epoch) and deals the chunks to a fixed number of
streams; a stream is one task that reads its chunks itself and makes a local pass over them; the
streams' partials are combined (a tree reduction on the cluster) and only the new state returns
to the client. Nothing here depends on Dask: the engine decides where streams run.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from dsvm.combine.averaging import ParameterAveraging
from dsvm.data.order import deal_chunks, epoch_chunk_order
from dsvm.distributed.progress import EpochProgress
from dsvm.distributed.sources import Source
from dsvm.solvers.base import LocalSolver, SolverState
from dsvm.solvers.extrapolation import Extrapolation, probe_difference, probe_stride

logger = logging.getLogger(__name__)


@dataclass
class FitPlan:
    """Everything fixed for the whole fit (and for every partial_fit after it)."""

    seed: int
    n_streams: int
    tol: float | None = None
    n_iter_no_change: int = 3
    verbose: int = 0


@dataclass
class LoopResult:
    state: SolverState
    history: list[dict[str, Any]] = field(default_factory=list)
    converged: bool = False


def _objective(state: SolverState, alpha: float, loss_mean: float, solver: Any = None) -> float:
    coef, _ = state.model()
    penalty_of = getattr(solver, "penalty_of", None)  # L1 / elastic net (solvers.penalties)
    if penalty_of is not None:
        return float(penalty_of(coef) + loss_mean)
    return float(0.5 * alpha * np.dot(coef.ravel(), coef.ravel()) + loss_mean)


def with_probes(state: SolverState, solver: Any, source: Source) -> SolverState:
    """The state to ship for an epoch: for a solver that extrapolates its average
    (:mod:`dsvm.solvers.extrapolation`), the average and its extrapolation as probe models
    (when a reference average exists) and the client-side snapshots left behind."""
    if not getattr(solver, "extrapolates", False) or state.avg_coef is None:
        return state
    ex = None
    if state.extrapolation is not None and state.avg_intercept is not None:
        ex = state.extrapolation.extrapolated(state.avg_coef, state.avg_intercept, state.t)
    probe_coef = probe_intercept = None
    if ex is not None:
        assert state.avg_intercept is not None
        probe_coef = np.concatenate([np.asarray(state.avg_coef, np.float64), ex[0]])
        probe_intercept = np.concatenate([np.asarray(state.avg_intercept, np.float64), ex[1]])
    return replace(state, probe_coef=probe_coef, probe_intercept=probe_intercept,
                   probe_stride=probe_stride(source.n_samples), extrapolation=None)


def after_probe(extrapolation: Extrapolation | None, shipped: SolverState, new: SolverState,
                stats: Any, solver: Any) -> Extrapolation | None:
    """The snapshots and verdict after an epoch: the probe of the shipped candidates decides
    whether the new average is extrapolated; the new average may become a snapshot."""
    if not getattr(solver, "extrapolates", False) or new.avg_coef is None:
        return None
    out = Extrapolation() if extrapolation is None else extrapolation.copy()
    if shipped.probe_coef is not None and stats.probe_sums is not None:
        out.choose(probe_difference(shipped.probe_coef, solver.alpha, stats.probe_sums,
                                    stats.probe_weight, stats.probe_rows))
    assert new.avg_intercept is not None
    out.record(new.avg_coef, new.avg_intercept, new.t)
    return out


def _replay_stopping(history: list[dict[str, Any]], tol: float | None) -> tuple[float, int]:
    """The stopping rule's (best objective, stale epochs) after ``history``, so that a fit
    resumed from a checkpoint stops exactly where the uninterrupted fit would."""
    best, stale = math.inf, 0
    for h in history:
        if tol is not None:
            stale = stale + 1 if h["objective"] > best - tol else 0
        best = min(best, h["objective"])
    return best, stale


def run_epochs(
    *,
    engine: Any,
    solver: LocalSolver,
    combiner: ParameterAveraging,
    source: Source,
    classes: np.ndarray,
    state: SolverState,
    plan: FitPlan,
    first_epoch: int,
    n_epochs: int,
    validate: Callable[[SolverState], float] | None = None,
    history: list[dict[str, Any]] | None = None,
    on_epoch: Callable[[SolverState, list[dict[str, Any]], bool], None] | None = None,
) -> LoopResult:
    """Run up to ``n_epochs`` epochs starting at epoch number ``first_epoch``.

    ``on_epoch(state, history, converged)`` runs after every epoch (checkpoints, job progress).
    """
    history = list(history or [])
    progress = EpochProgress(n_epochs, plan.verbose)
    best, stale = _replay_stopping(history, plan.tol)
    converged = False
    try:
        for epoch in range(first_epoch, first_epoch + n_epochs):
            tic = time.perf_counter()
            order = epoch_chunk_order(plan.seed, epoch, source.n_chunks)
            streams = deal_chunks(order, plan.n_streams)
            shipped = with_probes(state, solver, source)
            extrapolation = state.extrapolation
            state, stats = engine.run_epoch(
                solver, combiner, shipped, source, classes, streams, epoch, plan.seed
            )
            state.extrapolation = after_probe(extrapolation, shipped, state, stats, solver)
            seconds = time.perf_counter() - tic
            loss_mean = stats.loss_sum / max(stats.weight_sum, 1e-300)
            record = {
                "epoch": epoch + 1,
                "objective": _objective(state, solver.alpha, loss_mean, solver),
                "train_loss": loss_mean,
                "val_accuracy": validate(state) if validate is not None else None,
                "seconds": seconds,
                "rows_per_s": stats.n_rows / seconds if seconds > 0 else float("inf"),
                "n_rows": stats.n_rows,
                "t": state.t,
                # averaged Pegasos: whether the model is its average's extrapolation
                "extrapolated": (None if state.extrapolation is None
                                 else bool(state.extrapolation.use)),
            }
            history.append(record)
            progress.update(record)
            if plan.tol is not None:
                # scikit-learn's rule: stop after n_iter_no_change epochs that do not improve
                # the best objective by more than tol.
                if record["objective"] > best - plan.tol:
                    stale += 1
                else:
                    stale = 0
                best = min(best, record["objective"])
                if stale >= plan.n_iter_no_change:
                    converged = True
                    logger.info("converged after epoch %d (tol=%g)", epoch + 1, plan.tol)
            if on_epoch is not None:
                on_epoch(state, history, converged)
            if converged:
                break
    finally:
        progress.close()
    return LoopResult(state=state, history=history, converged=converged)
