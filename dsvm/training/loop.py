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
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dsvm.combine.base import Combiner
from dsvm.data.order import deal_chunks, epoch_chunk_order
from dsvm.data.sources import Source
from dsvm.engine.local import Engine, LocalEngine
from dsvm.engine.tasks import StreamPass
from dsvm.solvers.base import LocalSolver, SolverState
from dsvm.solvers.chunk_codes import ChunkCodes
from dsvm.solvers.held_out import HeldOutRows
from dsvm.training.driver import EpochDecision, EpochStep, Loop, Scoring, drive
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
    # the chunks' class codes, kept from epoch to epoch when the rows are arrays in this
    # process and train here (set by :func:`run_epochs`; dsvm.solvers.chunk_codes)
    known_codes: ChunkCodes | None = None


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
                 class_weight: np.ndarray | None = None, *,
                 next_runs: bool = False) -> SubmittedEpoch:
    """One epoch: every chunk read once by one of the ``plan.n_streams`` streams, starting
    from ``held`` (the previous :class:`~dsvm.training.epoch.Outcome`, held by the engine:
    on a cluster a future on the worker that finalized it, or not computed yet). The new
    outcome is held where it is finalized; its summary is the only part that comes to the
    client (:meth:`Engine.fetch`). In this process it has run when this returns.
    ``next_runs``: the next epoch will run (its streams' first windows may be read ahead)."""
    tic = time.perf_counter()
    streams = deal_chunks(epoch_chunk_order(plan.seed, epoch, source.n_chunks), plan.n_streams)
    following: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()
    if next_runs:
        then = deal_chunks(epoch_chunk_order(plan.seed, epoch + 1, source.n_chunks),
                           plan.n_streams)
        following = tuple((tuple(a), tuple(b)) for a, b in zip(streams, then))
    start = engine.apply(Prepare(solver, source.n_samples), held, name="prepare")
    task = StreamPass(solver, combiner, classes, epoch, plan.seed, class_weight,
                      plan.shuffle_window, plan.held_out, plan.known_codes, following)
    outcome = engine.reduce(task, source, streams, combiner.combine,
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


@dataclass
class EpochTask:
    """What every epoch of a stochastic fit (or of the CV grid) runs: the solver, how partials
    combine, the rows and their classes and weights, the plan."""

    engine: Engine
    solver: LocalSolver
    combiner: Combiner
    source: Source
    classes: np.ndarray | None
    class_weight: np.ndarray | None
    plan: FitPlan

    def submit(self, epoch: int, start: Any, *, next_runs: bool = False) -> SubmittedEpoch:
        # (through the module's name: tests watch the epochs submitted and recorded)
        return submit_epoch(self.engine, self.solver, self.combiner, self.source, self.classes,
                            start, self.plan, epoch, self.class_weight, next_runs=next_runs)


class StochasticEpochs:
    """The stochastic family's :class:`~dsvm.training.driver.EpochStrategy`: the state is
    held by the engine from epoch to epoch and comes here only for what asks for it
    (``wants_state``: validation, early stopping on chunks, a callback that takes the state;
    otherwise at the end). On a cluster the next epoch is submitted while one runs when it will
    run anyway (:func:`_run_ahead`); every ANCHOR_EPOCHS epochs the model is sent again. An
    epoch's ``seconds`` run from the previous epoch's summary to its own."""

    def __init__(self, task: EpochTask, state: SolverState, rule: StoppingRule, *,
                 first_epoch: int, n_epochs: int, wants_state: bool) -> None:
        self.task, self.state, self.rule = task, state, rule
        self.first, self.n_epochs, self.wants_state = first_epoch, n_epochs, wants_state
        self.held: Any = None
        self.pending: SubmittedEpoch | None = None  # the epoch sent ahead
        self.epoch = first_epoch  # the epoch running (or last run)
        self.current: SubmittedEpoch | None = None  # and what it was submitted as

    def epochs(self, loop: Loop) -> Generator[EpochStep, None, None]:
        engine, first = self.task.engine, self.first
        self.held, anchored = engine.hold(Outcome(self.state), name="state"), first
        last = first + self.n_epochs - 1
        done = None  # when the last summary arrived
        try:
            for epoch in range(first, last + 1):
                self.epoch = epoch
                current = self.pending if self.pending is not None else self.task.submit(
                    epoch, self.held, next_runs=epoch < last and not self.rule.may_stop_next())
                self.current = current  # (held as long as the fit's frames are, an error's too)
                anchor = epoch + 1 - anchored >= ANCHOR_EPOCHS
                ahead = _run_ahead(engine, epoch < last and not anchor, self.rule)
                self.pending = self.task.submit(epoch + 1, current.outcome) if ahead else None
                summary = engine.fetch(current.summary, what=f"epoch {epoch + 1}")
                now = time.perf_counter()
                seconds, done = now - max(current.submitted, done or 0.0), now
                self.held = current.outcome
                if self.wants_state or anchor:
                    self.state = self.fetch(epoch)
                    if anchor:
                        self.held = engine.hold(Outcome(self.state, summary), name="state")
                        anchored = epoch + 1
                record = epoch_record(epoch, summary, seconds, None)
                scored = lagged_holdout(self.task.plan, loop.history, summary.stats.held_out)
                yield EpochStep(epoch, record, self.state if self.wants_state else None,
                                self.held, scored, extra={"held_out": summary.stats.held_out})
                if loop.converged:
                    break
            if not self.wants_state and self.n_epochs > 0:
                self.state = engine.fetch(self.held, what="the fitted model").state
        finally:
            if self.pending is not None:  # (an error, or an interrupt, while it was in flight)
                engine.release(self.pending.outcome, self.pending.summary)

    def fetch(self, epoch: int) -> SolverState:
        held = self.task.engine.fetch(self.held, what=f"the model after epoch {epoch + 1}")
        return held.state  # type: ignore[no-any-return]

    def adopt(self, held: Any) -> None:
        """Go on from ``held`` (a callback's, made from the held outcome): an epoch sent ahead
        from the outcome it replaces is dropped and sent again."""
        if self.pending is not None:
            self.task.engine.release(self.pending.outcome, self.pending.summary)
        self.held, self.pending = held, None
        if self.wants_state:
            self.state = self.fetch(self.epoch)


class RuleStopping:
    """The stochastic family's stopping decision: :class:`StoppingRule` on the epoch's record
    (or, with early stopping on a row fold, on the earlier record its passes scored)."""

    def __init__(self, rule: StoppingRule) -> None:
        self.rule = rule

    def decide(self, step: EpochStep, loop: Loop) -> str:
        tracked = step.scored or step.record
        return self.rule.reason(tracked) if self.rule.observe_record(tracked) else ""

    def announce(self, epoch: int, reason: str) -> None:
        logger.info("stopped after epoch %d: %s", epoch, reason)


class OnEpoch:
    """``on_epoch`` of :func:`run_epochs` as a callback of the loop: given the state, or the
    held outcome (``takes_held``), and the epoch's held-out sums (``takes_held_out``)."""

    def __init__(self, on_epoch: Callable[..., EpochDecision | None]) -> None:
        self.on_epoch = on_epoch
        self.takes_held = bool(getattr(on_epoch, "takes_held", False))
        self.takes_sums = bool(getattr(on_epoch, "takes_held_out", False))  # (the grid's)

    def __call__(self, step: EpochStep, loop: Loop) -> EpochDecision | None:
        sums = {"held_out": step.extra["held_out"]} if self.takes_sums else {}
        model = step.held if self.takes_held else step.state
        return self.on_epoch(model, loop.history, loop.converged, **sums)


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
    """Run up to ``n_epochs`` epochs starting at epoch number ``first_epoch``
    (:class:`StochasticEpochs` in :func:`dsvm.training.driver.drive`).

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
    models the epoch started from). The candidate grid of :mod:`dsvm.training.grid` scores its
    candidates from those, freezes some, and stops when all are frozen: K stacked models never
    come to the client between epochs."""
    history = list(history or [])
    if plan.known_codes is None and isinstance(engine, LocalEngine):
        held = engine.holds(source)
        if source.in_memory or held:  # (the same blocks every epoch: codes made once)
            plan.known_codes = ChunkCodes(held=held)
    progress = EpochProgress(n_epochs, plan.verbose)
    rule = stopping_rule(plan, history, early=holdout is not None or plan.early_stopping)
    if plan.window_note and first_epoch == 0:
        progress.note(f"shuffle window: {plan.window_note}")
    callback = None if on_epoch is None else OnEpoch(on_epoch)
    wants_state = validate is not None or holdout is not None or (
        callback is not None and not callback.takes_held)
    task = EpochTask(engine, solver, combiner, source, classes, class_weight, plan)
    epochs = StochasticEpochs(task, state, rule, first_epoch=first_epoch, n_epochs=n_epochs,
                              wants_state=wants_state)
    loop = drive(epochs, history=history, progress=progress, stopping=RuleStopping(rule),
                 callbacks=() if callback is None else (callback,),
                 scoring=Scoring(validate, holdout), reason=f"{n_epochs} epoch(s) run")
    return LoopResult(state=epochs.state, history=loop.history, converged=loop.converged,
                      stop_reason=loop.reason)
