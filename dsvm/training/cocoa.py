"""A CoCoA+ fit: rounds of local dual coordinate descent whose changes of w are added.

Each epoch re-draws the chunk order and deals the chunks to ``n_streams`` streams (as the
stochastic solvers do); each stream's chunks are cut into ``rounds_per_epoch`` rounds. In a
round every stream runs :class:`dsvm.engine.cocoa_tasks.CocoaRound` over its chunks of
the round (one task each, sigma' = n_streams) and the engine adds their changes of w in a tree
on the workers (:mod:`dsvm.combine.adding`). The duals live in a :class:`DualStore` next to
the checkpoint (kept for resume) or in a scratch folder (removed at the end).

``history_[i]`` records the primal and dual objectives and the duality gap of the model and
duals epoch i started from (measured while its rows were read: no extra pass; with several
rounds per epoch each row's loss is measured at the model of its round, so the gap is an
estimate). ``tol`` stops the fit once the relative gap (gap / primal) is at most ``tol``; the
model returned is the one after that epoch, which has gone one more epoch up the dual.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator
from typing import Any, cast

import numpy as np

from dsvm.combine.adding import AddPartial, add_partials, added
from dsvm.data.duals import (
    AnyDualStore,
    DualStore,
    MemoryDualStore,
    dual_store_url,
    remove_store,
)
from dsvm.data.order import deal_chunks, epoch_chunk_order
from dsvm.data.sources import Source
from dsvm.engine.cocoa_tasks import CocoaRound
from dsvm.engine.local import Engine, LocalEngine
from dsvm.solvers.base import SolverState
from dsvm.solvers.cocoa import CocoaSolver, duality_gap
from dsvm.solvers.cocoa_grid import CocoaCandidates
from dsvm.training import outcome
from dsvm.training.callbacks import CheckpointEachEpoch, HooksEachEpoch
from dsvm.training.driver import EpochCallback, EpochStep, Loop, Scoring, drive
from dsvm.training.evaluation import holdout_scorer, validation_scorer
from dsvm.training.finish import finish_fit, publish_model
from dsvm.training.fitdata import FitData
from dsvm.training.loop import StoppingRule
from dsvm.training.memory import memory_window
from dsvm.training.prepare import prepare_fit, start_record
from dsvm.training.progress import EpochProgress
from dsvm.training.record import FittedModel
from dsvm.training.spec import FitSpec
from dsvm.training.window import Window

logger = logging.getLogger(__name__)


def check_cocoa(spec: FitSpec) -> None:
    """What CoCoA+ does not do, with the reason."""
    kernel = spec.kernel
    if not (isinstance(kernel, str) and kernel == "linear"):
        raise ValueError(f"solver='cocoa' trains linear models on the rows (its duals are the "
                         f"rows'); kernel={kernel!r} needs solver='sgd' or 'pegasos'.")


def scoring_for(spec: FitSpec, engine: Engine, record: FittedModel, bias: float,
                validation: Any, held: Any) -> tuple[Scoring, StoppingRule | None]:
    """What each epoch measures besides the duality gap (accuracy or R^2 on validation data,
    the objective on the chunks held out for early stopping), on the model CoCoA+ predicts
    with (the bias feature's weight times its value as the intercept); and the rule that stops
    on the held-out objective."""

    def predicting(score: Callable[[SolverState], float]) -> Callable[[SolverState], float]:
        return lambda state: score(SolverState(coef=state.coef,
                                               intercept=state.intercept * bias))

    solver = spec.make_solver(record.n_samples)
    validate = validation_scorer(engine, spec, record, solver, validation)
    validate = None if validate is None else predicting(validate)
    if held is None:
        return Scoring(validate), None
    # early stopping stops on the held-out objective even with tol=None (then: no gain at all)
    rule = StoppingRule(spec.tol or 0.0, spec.n_iter_no_change, record.history,
                        key="holdout_objective")
    return Scoring(validate, predicting(holdout_scorer(engine, spec, record, solver, held))), rule


def rounds_of(streams: list[list[int]], n_rounds: int) -> list[list[list[int]]]:
    """Each stream's chunks cut into ``n_rounds`` consecutive parts: the groups of each round."""
    cut = [np.array_split(np.asarray(s, dtype=np.int64), n_rounds) for s in streams]
    return [[[int(c) for c in parts[r]] for parts in cut] for r in range(n_rounds)]


def run_rounds(engine: Engine, solver: CocoaSolver, source: Source, record: FittedModel,
               store: AnyDualStore, epoch: int, window: int = 1,
               grid: CocoaCandidates | None = None) -> tuple[SolverState, AddPartial]:
    """One epoch's rounds (every chunk's duals updated once) from the record's model: the
    new state and the epoch's sums (gap terms, rows, steps; a grid's held-out sums), with
    ``grid`` K candidates at once (:mod:`dsvm.solvers.cocoa_grid`)."""
    state = record.state
    coef, intercept = state.coef, state.intercept
    n_streams = record.n_streams
    order = epoch_chunk_order(record.seed, epoch, source.n_chunks)
    n_candidates = 1 if grid is None else grid.n_candidates
    n_total = source.n_samples if grid is None or grid.n_train is None else grid.n_train
    total = AddPartial(np.zeros(0), np.zeros(0),
                       np.zeros(4) if grid is None else np.zeros((n_candidates, 4)))
    classes = record.class_values
    assert classes is not None  # CoCoA+ only classifies
    for r, groups in enumerate(rounds_of(deal_chunks(order, n_streams), solver.rounds_per_epoch)):
        task = CocoaRound(coef, intercept, solver, classes, store, epoch,
                          record.seed, float(n_streams), n_total, record.class_weight,
                          window, grid)
        partial = engine.reduce(task, source, [g for g in groups if g], add_partials,
                                name="cocoa-round", combine_name="cocoa-add",
                                what=f"epoch {epoch + 1}, round {r + 1}")
        if partial is not None:
            total.terms += partial.terms
            total.n_rows += partial.n_rows
            total.n_changed += partial.n_changed
            if partial.held_out is not None:
                total.held_out = partial.held_out if total.held_out is None \
                    else total.held_out + partial.held_out
        coef, intercept = added(coef, intercept, partial)
    return SolverState(coef=coef, intercept=intercept, t=state.t + total.n_rows), total


def run_epoch(engine: Engine, solver: CocoaSolver, source: Source, record: FittedModel,
              store: AnyDualStore, epoch: int, window: int = 1
              ) -> tuple[SolverState, dict[str, Any]]:
    """One epoch: every chunk's duals updated once. Returns the new state and its record."""
    tic = time.perf_counter()
    state = record.state
    new, total = run_rounds(engine, solver, source, record, store, epoch, window)
    terms, n_rows = total.terms, total.n_rows
    primal, dual = duality_gap(solver.alpha, state.coef, state.intercept, solver.bias, terms)
    seconds = time.perf_counter() - tic
    row = {
        "epoch": epoch + 1, "objective": primal, "dual_objective": dual,
        "duality_gap": primal - dual, "relative_gap": (primal - dual) / max(abs(primal), 1e-300),
        "train_loss": float(terms[3]) / max(n_rows, 1), "seconds": seconds,
        "rows_per_s": n_rows / max(seconds, 1e-9), "n_rows": n_rows,
        "dual_steps": total.n_changed, "val_accuracy": None, "t": float(state.t + n_rows),
    }
    return new, row


def fit_cocoa(spec: FitSpec, data: FitData, *, validation: Any = None,
              resume: bool = False) -> FittedModel:
    """Train with CoCoA+ for up to ``spec.max_epochs`` epochs (see the module notes)."""
    check_cocoa(spec)
    # CoCoA+ keeps w in float64 whatever the data's dtype (the running sum of the dual steps)
    p = prepare_fit(spec, data, resume=resume, state_dtype=np.dtype(np.float64),
                    announce_missing=False)
    spec, engine, source = p.spec, p.engine, p.rows
    record = start_record(p)
    # the registry types every solver as a LocalSolver; solver="cocoa" (check_cocoa) makes this
    solver = cast(CocoaSolver, spec.make_solver(source.n_samples))
    url, temporary = None, False
    if spec.checkpoint is None and isinstance(engine, LocalEngine):
        store: AnyDualStore = MemoryDualStore(record.state.n_outputs)  # (dsvm.data.duals)
    else:
        url, temporary = dual_store_url(spec.checkpoint)
        store = DualStore(url, record.state.n_outputs)
        if p.ckpt is None and not temporary:
            remove_store(url)  # a fresh fit: no duals of an earlier fit at this checkpoint
    try:
        if not p.done:
            scoring, rule = scoring_for(spec, engine, record, solver.bias, validation, p.held)
            run_epochs(spec, engine, solver, source, record, store, scoring, rule)
    finally:
        if temporary and url is not None:
            remove_store(url)
    # intercept_ = the bias feature's weight times its value
    record = publish_model(record, record.state.coef, record.state.intercept * solver.bias,
                           source.dtype)
    return finish_fit(spec, engine, record, p.source, reason=stop_reason(spec, record),
                      not_converged=None if spec.tol is None else not_converged)


# A relative duality gap still above this after max_epochs: the dual has hardly moved from
# zero (raw breast-cancer features: 1.0 every epoch), which unscaled features cause. Not
# read into fewer than STUCK_EPOCHS epochs: standard-normal features keep a gap of 0.53 over
# the first two (2,000 x 10, `dsvm train --epochs 2`), and came down to 0.012 by epoch 10.
STUCK_GAP = 0.5
STUCK_EPOCHS = 3
# ... and hardly moved since the second epoch (the first's gap is the zero model's, 1): one
# stream on 2,000 separable rows of 800 features went 1.0, 0.94, 0.74, 0.54 in 4 epochs, which
# more epochs finish, not scaling.
STUCK_MOVED = 0.9


def _streams_advice(record: FittedModel) -> str:
    """The other cause of a gap stuck near 1 with several streams: CoCoA+ adds the streams'
    changes, each damped by sigma' = the number of streams, and on rows with many features
    for their number (5,000 separable rows of 2,000 standard-normal features) those updates
    hold each other back: after 10 epochs the primal was 0.049 on 2 streams against 0.00038
    on one (LIBLINEAR's optimum 0.00035), though test accuracy was the same (0.840 / 0.832)."""
    k = int(getattr(record, "n_streams", 1) or 1)
    if k <= 1:
        return ""
    return (f"; or, with features on a common scale, the {k} streams' updates hold each other "
            "back (rows with many features for their number): n_streams=1 or solver='sgd' "
            "converge in fewer epochs there")


def stop_reason(spec: FitSpec, record: FittedModel) -> str:
    if not record.history:
        return "no epoch run"
    gap = record.history[-1]["relative_gap"]
    if record.converged and "holdout_objective" in record.history[-1] and gap > (spec.tol or 0):
        return (f"early stopping: the objective on the held-out chunks did not improve on its "
                f"best by more than tol={spec.tol} (relative) for {spec.n_iter_no_change} "
                "epochs")
    if record.converged:
        return (f"tol met: the relative duality gap {gap:.3g} of the model epoch "
                f"{record.n_iter} started from is at most tol={spec.tol:g}")
    return f"{outcome.max_epochs_reason(spec)}, relative duality gap {gap:.3g}"


def not_converged(spec: FitSpec, record: FittedModel) -> str | None:
    """The warning's text of a CoCoA+ fit that ran out of epochs with its duality gap above
    tol, naming unscaled features when the gap never came down."""
    gaps = [h["relative_gap"] for h in record.history]
    if not gaps:
        return None
    stuck = (len(gaps) >= STUCK_EPOCHS and min(gaps) > STUCK_GAP
             and gaps[-1] > STUCK_MOVED * gaps[1]  # (still coming down: more epochs)
             and not (record.outcome and record.outcome.scaled))
    why = (f" The gap stayed above {STUCK_GAP} in every epoch: "
           f"{outcome.api_advice(record.outcome, spec.estimator)}{_streams_advice(record)}."
           if stuck else " Consider more epochs (or more local_iters, or a larger alpha).")
    return (f"{spec.estimator}(solver='cocoa') stopped at max_epochs={spec.max_epochs} with a "
            f"relative duality gap of {gaps[-1]:.3g}, above tol={spec.tol}: it has not "
            f"converged.{why}")


def cocoa_window(requested: int | None, source: Source, engine: Engine, *, state_bytes: int,
                 n_streams: int | None = None, row_bytes: float = 0.0) -> Window:
    """The window of a CoCoA+ fit: by default every chunk of a stream, up to WINDOW_BYTES of
    rows (128 MB), where the stochastic solvers take 8 chunks.

    The local solver solves a window's block of the dual at a time and a stream's windows meet
    only through the model the next round starts from, so more windows per stream cost epochs:
    w8a in 1,024-row chunks (2 streams, lambda = 1/n, 50 local passes), the primal 1.7e-3 above
    LIBLINEAR's optimum after 10 epochs with windows of 8 chunks (4 per stream), within 1e-3 at
    epoch 4 with a stream's 25 chunks in one window (2.3e-4 after 10). Memory stays bounded by
    the cap, whatever the dataset's size, and by the workers' memory limit on a cluster
    (:func:`dsvm.training.memory.memory_window`; ``row_bytes``: the duals a window holds per
    row, which a grid of alphas counts, :mod:`dsvm.training.cocoa_grid`).
    """
    return memory_window(requested, source, engine, state_bytes=state_bytes,
                         n_streams=n_streams, default=max(1, int(source.n_chunks)),
                         row_bytes=row_bytes)


class CocoaStopping:
    """CoCoA+'s stopping decision: early stopping on the held-out objective (``rule``), else
    the duality gap (the step's own reason)."""

    def __init__(self, rule: StoppingRule | None) -> None:
        self.rule = rule

    def decide(self, step: EpochStep, loop: Loop) -> str:
        stopped = self.rule is not None and self.rule.observe_record(step.record)
        return "early stopping" if stopped else ""

    def announce(self, epoch: int, reason: str) -> None:
        logger.info("cocoa: stopped after epoch %d (%s)", epoch, reason)


class CocoaEpochs:
    """CoCoA+'s :class:`~dsvm.training.driver.EpochStrategy`: :func:`run_epoch` after
    :func:`run_epoch` from the record's model, which it updates, until ``spec.max_epochs``."""

    def __init__(self, spec: FitSpec, engine: Engine, solver: CocoaSolver, source: Source,
                 record: FittedModel, store: AnyDualStore, window: int) -> None:
        self.spec, self.engine, self.solver, self.source = spec, engine, solver, source
        self.record, self.store, self.window = record, store, window

    def epochs(self, loop: Loop) -> Generator[EpochStep, None, None]:
        tol = self.spec.tol
        for epoch in range(self.record.n_iter, self.spec.max_epochs):
            state, row = run_epoch(self.engine, self.solver, self.source, self.record,
                                   self.store, epoch, self.window)
            self.record.state = state
            gap = tol is not None and row["relative_gap"] <= tol
            yield EpochStep(epoch, row, state, stop="duality gap within tol" if gap else "")
            if loop.converged:
                break

    def adopt(self, held: Any) -> None:  # pragma: no cover (no CoCoA+ callback replaces it)
        raise NotImplementedError("a CoCoA+ fit goes on from its own model and duals")


def run_epochs(spec: FitSpec, engine: Engine, solver: CocoaSolver, source: Source,
               record: FittedModel, store: AnyDualStore, scoring: Scoring | None = None,
               rule: StoppingRule | None = None) -> None:
    """Up to ``spec.max_epochs`` epochs in :func:`dsvm.training.driver.drive`: the checkpoint
    (and the duals of its epoch kept) after each, then the hooks."""
    progress = EpochProgress(spec.max_epochs - record.n_iter, spec.verbose)
    plan = cocoa_window(spec.shuffle_window, source, engine, state_bytes=record.state.nbytes,
                        n_streams=record.n_streams)
    if record.n_iter == 0:
        progress.note(f"shuffle window: {plan.describe()}")
    callbacks: list[EpochCallback] = []
    if spec.checkpoint is not None:
        callbacks.append(CheckpointEachEpoch(spec, record, source))
    callbacks.append(HooksEachEpoch(spec))
    # version epoch + 1 of the duals is complete (and checkpointed)
    callbacks.append(lambda step, loop: store.drop(step.epoch))
    epochs = CocoaEpochs(spec, engine, solver, source, record, store, plan.chunks)
    loop = drive(epochs, history=record.history, progress=progress,
                 stopping=CocoaStopping(rule), callbacks=callbacks, scoring=scoring)
    record.converged = loop.converged

