"""The epoch loop: ship the state, run the streams, combine, record, decide whether to stop.

Each epoch re-draws the chunk order from (seed, epoch) and deals the chunks to a fixed number of
streams; a stream is one task that reads its chunks itself and makes a local pass over them
(:class:`dsvm.engine.tasks.StreamPass`); the engine combines the streams' partials (a tree
reduction on a cluster) and finalizes the new state at the root of the tree
(:mod:`dsvm.training.epoch`). The state stays there for the next epoch: only the epoch's
statistics come here, and the model when something asks for it. On a cluster the next epoch is
submitted while one runs, whenever it will run anyway (:data:`RUN_AHEAD`).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dsvm.combine.base import Combiner
from dsvm.data.order import deal_chunks, epoch_chunk_order
from dsvm.data.sources import Source
from dsvm.engine.local import Engine
from dsvm.engine.tasks import StreamPass
from dsvm.solvers.base import LocalSolver, SolverState
from dsvm.solvers.held_out import HeldOutRows
from dsvm.training.epoch import EpochSummary, Finish, Outcome, Prepare, summary_of
from dsvm.training.progress import EpochProgress

logger = logging.getLogger(__name__)


@dataclass
class FitPlan:
    """Everything fixed for the whole fit (and for every partial_fit after it)."""

    seed: int
    n_streams: int
    tol: float | None = None
    n_iter_no_change: int = 3
    verbose: int = 0
    shuffle_window: int = 1  # chunks whose rows a stream interleaves (see StreamPass)
    window_note: str = ""  # the window, described for the fit's log (training.window)
    # a row fold: rows of every chunk left out of training and scored by the epoch's streams
    # with the models it started from (dsvm.solvers.held_out); their sums come with the
    # epoch's summary (``summary.stats.held_out``), one epoch late
    held_out: HeldOutRows | None = None
    # early stopping on the row fold: the stopping rule follows the held-out objective of
    # ``held_out``'s (one) model, known one epoch late (:func:`lagged_holdout`)
    early_stopping: bool = False


@dataclass
class EpochDecision:
    """What an ``on_epoch`` callback of :func:`run_epochs` may change: the held outcome the
    next epoch starts from (None: keep it), and a reason to stop after this epoch ("": go
    on)."""

    held: Any = None  # what replaces the held outcome (made by engine.apply from it)
    stop: str = ""


@dataclass
class LoopResult:
    state: SolverState
    history: list[dict[str, Any]] = field(default_factory=list)
    converged: bool = False
    stop_reason: str = ""


def tracked_objective(record: dict[str, Any]) -> float | None:
    """What the stopping rule follows (None: nothing this epoch).

    An average (or its extrapolation) is measured exactly on the fixed row sample
    (``sample_objective``): its progressive loss, the loss of the noisier iterates, runs far
    above it. A last iterate (ASSET*, ``average=False``, BSGD) is followed by the progressive
    objective, which averages the iterates' losses over the epoch: its single sampled value
    jumps by tens of percent from epoch to epoch. Before an average exists (ASSET before
    rho N) the returned model is a transient: not followed.
    """
    kind = record.get("returned_model", "iterate")
    if kind == "pending":
        return None
    sampled = record.get("sample_objective")
    if kind == "average" and sampled is not None:
        return float(sampled)
    return float(record["objective"])


# A last iterate's patience is at least t / this after t epochs (see StoppingRule): on a9a at
# lambda = 1/n, t/10 still stopped SGD's last iterate at epoch 34 (its progressive objective
# +5.8% above the optimum), t/5 let it run to 100 (the model +1.9%).
LAST_ITERATE_PATIENCE = 5


class StoppingRule:
    """scikit-learn's rule with a relative ``tol``: stop after ``n_iter_no_change`` epochs that
    do not lower the best objective (or, with early stopping, the best held-out objective) by
    more than ``tol`` times its size. The objective is the
    returned model's, measured on a fixed sample of rows (:func:`tracked_objective`), so a
    solver whose average still improves at its own (slow) rate is not stopped by the noise of
    its iterates. Replayed over a resumed fit's history, so that it stops exactly where the
    uninterrupted fit would.

    A last iterate (ASSET*, ``average=False``, BSGD) converges like 1/t and is followed by its
    noisy progressive objective: after t epochs the gap to the optimum is about t times what an
    epoch gains, and the epochs between two new lows of the noisy objective grow with t. So
    after t epochs its margin is ``tol`` times the best objective divided by t, and its
    patience at least t/5 epochs. With the plain rule ASSET* (and Pegasos' last iterate) on
    a9a at lambda = 1/n stopped after 42-53 epochs at +4-8% above the optimum while still
    coming down (+3.6% after 100)."""

    def __init__(self, tol: float | None, n_iter_no_change: int,
                 history: list[dict[str, Any]], key: str | None = None) -> None:
        self.tol, self.patience, self.key = tol, int(n_iter_no_change), key
        self.best, self.stale = math.inf, 0
        for record in history:
            self.observe_record(record)

    def observe_record(self, record: dict[str, Any]) -> bool:
        """Record an epoch of the history; True when the fit should stop."""
        return self.observe(self.tracked(record), self.horizon(record))

    def horizon(self, record: dict[str, Any]) -> int:
        """The epochs so far for a last iterate's objective, otherwise 1: what the margin is
        divided by, and five times the least patience (see the class docstring)."""
        if self.key is None and record.get("returned_model", "iterate") == "iterate":
            return max(1, int(record.get("epoch", 1)))
        return 1

    def tracked(self, record: dict[str, Any]) -> float | None:
        """What to minimise: the objective (:func:`tracked_objective`), or the value under
        ``key`` (early stopping: the objective on the held-out rows or chunks)."""
        if self.key is None:
            return tracked_objective(record)
        value = record.get(self.key)
        return None if value is None else float(value)

    def observe(self, objective: float | None, horizon: int = 1) -> bool:
        """Record an epoch's objective; True when the fit should stop."""
        if objective is None:
            return False
        if self.tol is not None:
            margin = self.tol * abs(self.best) / horizon if math.isfinite(self.best) else 0.0
            self.stale = self.stale + 1 if objective > self.best - margin else 0
        self.best = min(self.best, objective)
        patience = max(self.patience, math.ceil(horizon / LAST_ITERATE_PATIENCE))
        return self.tol is not None and self.stale >= patience

    def reason(self, record: dict[str, Any]) -> str:
        """Why the fit stopped at ``record`` (which stopped it), in words."""
        patience = max(self.patience, math.ceil(self.horizon(record) / LAST_ITERATE_PATIENCE))
        unchanged = (f"did not improve on its best by more than tol={self.tol:g} (relative) "
                     f"for {patience} epochs")
        if self.key is not None:
            return f"early stopping: the objective on the held-out rows {unchanged}"
        if record.get("returned_model") == "average" and record.get("sample_objective") is not None:
            rows = record.get("sample_rows")
            sample = f"a {rows:,}-row sample" if rows else "a fixed sample"
            what = f"the objective of the returned model on {sample} of the training rows"
        else:
            what = "the progressive objective of the last iterate"
        return f"tol met: {what} {unchanged}"

    def may_stop_next(self) -> bool:
        """Whether the next epoch's record could stop the fit (the patience is never below
        ``n_iter_no_change``): if not, the epoch after it is needed whatever it shows."""
        return self.tol is not None and self.stale + 1 >= self.patience


@dataclass
class SubmittedEpoch:
    """An epoch handed to the engine: its :class:`~dsvm.training.epoch.Outcome` and
    :class:`~dsvm.training.epoch.EpochSummary`, held where they are computed."""

    outcome: Any
    summary: Any
    submitted: float  # time.perf_counter() when it began to be handed over (in this
    # process, the epoch has run by the time the call returns)


def submit_epoch(engine: Engine, solver: LocalSolver, combiner: Combiner, source: Source,
                 classes: np.ndarray | None, held: Any, plan: FitPlan, epoch: int,
                 class_weight: np.ndarray | None = None) -> SubmittedEpoch:
    """One epoch: every chunk read once by one of the ``plan.n_streams`` streams, starting
    from ``held`` (the previous :class:`~dsvm.training.epoch.Outcome`, held by the engine:
    on a cluster a future on the worker that finalized it, or not computed yet). The new
    outcome is held where it is finalized; its summary is the only part that comes to the
    client (:meth:`Engine.fetch`). In this process it has run when this returns."""
    tic = time.perf_counter()
    order = epoch_chunk_order(plan.seed, epoch, source.n_chunks)
    start = engine.apply(Prepare(solver, source.n_samples), held, name="prepare")
    task = StreamPass(solver, combiner, classes, epoch, plan.seed, class_weight,
                      plan.shuffle_window, plan.held_out)
    outcome = engine.reduce(task, source, deal_chunks(order, plan.n_streams), combiner.combine,
                            name="pass", combine_name="combine", what=f"epoch {epoch + 1}",
                            inputs=[start], finish=Finish(solver, combiner, plan.held_out),
                            finish_inputs=[held, start], keep=True)
    return SubmittedEpoch(outcome, engine.apply(summary_of, outcome, name="summary"), tic)


def lagged_holdout(plan: FitPlan, history: list[dict[str, Any]],
                   counts: Any) -> dict[str, Any] | None:
    """Early stopping on a row fold (``plan.early_stopping``): the epoch's streams scored the
    model it started from, the model of the last record of ``history``, which gets its
    ``holdout_objective`` (the penalty plus the mean held-out loss) and is returned for the
    stopping rule. None otherwise, and on a fresh fit's first epoch (the calibrated start
    is not a model of the fit)."""
    if not plan.early_stopping or counts is None or counts.penalties is None:
        return None
    scored = counts.candidates[0]
    if scored.n_rows == 0 and plan.held_out is not None:
        raise ValueError(f"early_stopping: validation_fraction={plan.held_out.fold.fraction} "
                         "held out no row of the training data (each row is held out with "
                         "that probability); raise validation_fraction or pass more rows.")
    if not history:
        return None
    history[-1]["holdout_objective"] = float(counts.penalties[0]) + scored.mean_loss
    return history[-1]


def epoch_record(epoch: int, summary: EpochSummary, seconds: float,
                 val: float | None) -> dict[str, Any]:
    stats = summary.stats
    loss_mean = stats.loss_sum / max(stats.weight_sum, 1e-300)
    # rows per second of training: the streams' kernel compilation (first epoch) is left out
    training = max(seconds - stats.compile_seconds, 1e-9)
    return {
        "epoch": epoch + 1,
        "objective": summary.objective,
        # the exact objective of the model the epoch started from, on a fixed row sample,
        # and what that model was ("average", "iterate" or "pending")
        "sample_objective": summary.sampled[0],
        "returned_model": summary.sampled[1],
        "sample_rows": stats.probe_rows,
        "train_loss": loss_mean,
        "val_accuracy": val,
        "seconds": seconds,
        "compile_seconds": stats.compile_seconds,
        "rows_per_s": stats.n_rows / training,
        "n_rows": stats.n_rows,
        "t": summary.t,
        # averaged Pegasos: whether the model is its average's extrapolation
        "extrapolated": summary.extrapolated,
    }


# The model is held on the cluster from epoch to epoch; a worker lost with it is recomputed
# from the epochs since the state was last sent from the client (see DaskEngine.hold). Every
# ANCHOR_EPOCHS epochs it is sent again, which bounds that replay (and the task graph the
# scheduler keeps for it) for one gather and one upload every ANCHOR_EPOCHS epochs.
ANCHOR_EPOCHS = 8

# Whether the next epoch is handed to a cluster before this one is awaited (#12 item 4). Its
# tasks reach the scheduler while this one runs, so its graph update and the client's round
# trip for the summary are no longer between two epochs: its streams start as soon as the
# state they take is finalized. Only an epoch that will run anyway is sent ahead: not past the
# last, nor after one that may stop the fit or that sends the model again (ANCHOR_EPOCHS).
RUN_AHEAD = True


def stopping_rule(plan: FitPlan, history: list[dict[str, Any]], *, early: bool) -> StoppingRule:
    """The fit's stopping rule, replayed over ``history``: on the objective, or with early
    stopping on the held-out objective, even with tol=None (then: no gain at all)."""
    return StoppingRule((plan.tol or 0.0) if early else plan.tol, plan.n_iter_no_change,
                        history, key="holdout_objective" if early else None)


def _run_ahead(engine: Engine, another: bool, rule: StoppingRule) -> bool:
    """Whether to submit the next epoch before this one's summary is back: on an engine that
    runs ahead, when ``another`` epoch follows this one (not past the last, not after one
    that re-sends the model) and this one cannot stop the fit."""
    return RUN_AHEAD and engine.runs_ahead and another and not rule.may_stop_next()


def run_epochs(
    *,
    engine: Engine,
    solver: LocalSolver,
    combiner: Combiner,
    source: Source,
    classes: np.ndarray | None,
    state: SolverState,
    plan: FitPlan,
    first_epoch: int,
    class_weight: np.ndarray | None = None,
    n_epochs: int,
    validate: Callable[[SolverState], float] | None = None,
    holdout: Callable[[SolverState], float] | None = None,
    history: list[dict[str, Any]] | None = None,
    on_epoch: Callable[..., EpochDecision | None] | None = None,
) -> LoopResult:
    """Run up to ``n_epochs`` epochs starting at epoch number ``first_epoch``.

    ``validate(state)`` scores the validation data into ``history[i]["val_accuracy"]``;
    ``holdout(state)`` the objective on the chunks held out for early stopping (CoCoA+, BSGD;
    the other solvers' row fold is scored by the passes, ``plan.early_stopping``) into
    ``"holdout_objective"``, which the stopping rule then follows. ``on_epoch(state, history,
    converged)`` runs after every epoch (checkpoints, job progress). A callback with
    ``takes_held = True`` gets the held :class:`Outcome` (on a cluster a future) instead of
    the state, so that it works where the model is, and may return an
    :class:`EpochDecision`: a held value made from it (``engine.apply``) that the next epoch
    starts from instead (an epoch sent ahead from the old one is dropped and sent again), and
    a reason to stop. With a row fold (``plan.held_out``) a callback with
    ``takes_held_out = True`` also gets ``held_out=``, the epoch's held-out sums (of the
    models the epoch started from). The
    candidate grid of :mod:`dsvm.training.grid` scores its candidates from those, freezes
    some, and stops when all are frozen: K stacked models never come to the client between
    epochs. An epoch's ``seconds``
    run from the previous epoch's summary to its own (the next may be submitted early,
    :func:`_run_ahead`)."""
    history = list(history or [])
    progress = EpochProgress(n_epochs, plan.verbose)
    rule = stopping_rule(plan, history, early=holdout is not None or plan.early_stopping)
    converged, reason = False, f"{n_epochs} epoch(s) run"
    if plan.window_note and first_epoch == 0:
        progress.note(f"shuffle window: {plan.window_note}")
    held, anchored = engine.hold(Outcome(state), name="state"), first_epoch
    # the model comes to the client only for what asks for it (validation, early stopping,
    # checkpoints and hooks: every epoch; otherwise at the end)
    # (a callback with ``takes_held = True`` is given the held outcome instead of the state:
    # it works where the model is, and the model does not come here for it)
    takes_held = bool(getattr(on_epoch, "takes_held", False))
    wants_sums = bool(getattr(on_epoch, "takes_held_out", False))  # (the grid's tracker)
    wants_state = validate is not None or holdout is not None or (
        on_epoch is not None and not takes_held)
    last = first_epoch + n_epochs - 1

    def submit(epoch: int, start: Any) -> SubmittedEpoch:
        return submit_epoch(engine, solver, combiner, source, classes, start, plan, epoch,
                            class_weight)

    pending, done = None, None  # (the epoch sent ahead; when the last summary arrived)
    try:
        for epoch in range(first_epoch, last + 1):
            current = pending if pending is not None else submit(epoch, held)
            anchor = epoch + 1 - anchored >= ANCHOR_EPOCHS
            ahead = _run_ahead(engine, epoch < last and not anchor, rule)
            pending = submit(epoch + 1, current.outcome) if ahead else None
            summary = engine.fetch(current.summary, what=f"epoch {epoch + 1}")
            now = time.perf_counter()
            seconds, done = now - max(current.submitted, done or 0.0), now
            held = current.outcome
            if wants_state or anchor:
                state = engine.fetch(held, what=f"the model after epoch {epoch + 1}").state
                if anchor:
                    held, anchored = engine.hold(Outcome(state, summary), name="state"), epoch + 1
            record = epoch_record(epoch, summary, seconds,
                                  validate(state) if validate is not None else None)
            if holdout is not None:
                record["holdout_objective"] = holdout(state)
            scored = lagged_holdout(plan, history, summary.stats.held_out)
            history.append(record)
            progress.update(record, scored)
            converged = rule.observe_record(scored or record)
            if converged:
                reason = rule.reason(scored or record)
                logger.info("stopped after epoch %d: %s", epoch + 1, reason)
            if on_epoch is not None:
                sums = {"held_out": summary.stats.held_out} if wants_sums else {}
                decision = on_epoch(held if takes_held else state, history, converged, **sums)
                if decision is not None and decision.held is not None:
                    if pending is not None:  # sent ahead from the outcome being replaced
                        engine.release(pending.outcome, pending.summary)
                    held, pending = decision.held, None
                    if wants_state:
                        state = engine.fetch(held, what=f"the model after epoch {epoch + 1}").state
                if decision is not None and decision.stop and not converged:
                    converged, reason = True, decision.stop
                    logger.info("stopped after epoch %d: %s", epoch + 1, reason)
            if converged:
                break
        if not wants_state and n_epochs > 0:
            state = engine.fetch(held, what="the fitted model").state
    finally:
        if pending is not None:  # (an error, or an interrupt, while it was in flight)
            engine.release(pending.outcome, pending.summary)
        progress.close()
    return LoopResult(state=state, history=history, converged=converged, stop_reason=reason)
