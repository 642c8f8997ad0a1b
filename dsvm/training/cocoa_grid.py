"""A grid of alphas trained by CoCoA+ in one read per epoch (``SVMClassifierCV(solver="cocoa")``,
#27): K dual vectors per row, not a warm-started path (:mod:`dsvm.solvers.cocoa_grid` says why).

Each round task reads its chunks once and runs the local dual coordinate steps of every
candidate that still trains, each against its own rows of the stacked round model and its own
columns of the chunk's duals (:class:`dsvm.engine.cocoa_tasks.CocoaRound` with ``grid``); the
changes of w are added element-wise on the stacked (K*m, d) model, as a single fit adds its
own. Everything a single CoCoA+ fit guarantees holds per candidate: a re-run task reads
version ``epoch`` of the same dual file and writes the same version ``epoch + 1``, so a lost
worker gives the same models; candidate k after e epochs is the fit of alpha_k alone on the
training rows after e epochs (the same chunk dealing, windows and coordinate orders).

Held-out scoring is the stochastic grid's (:mod:`dsvm.training.grid`): the rows a hash of
(seed, chunk, row) holds out of every chunk (``cv_fraction``, :class:`dsvm.data.fold.RowFold`)
have no duals and are never trained on; the task that reads a chunk scores them with the
round's models, so epoch e's pass measures the models after epoch e-1 (one epoch late), and
one pass over the held rows scores the final models. :class:`~dsvm.training.grid.GridTracker`
records the scores (``cv_results_``, ``history_``) and applies the held-out stopping rule.

Per-candidate stopping: a candidate stops costing compute (no dual steps, no gap terms; its
duals are carried to the next version unchanged and its change of w is zero) after the epoch
in which its relative duality gap was at most ``tol`` (CoCoA+'s own rule, measured at the
model the epoch started from, as a single fit stops) or its held-out objective stopped
improving (``n_iter_no_change`` epochs without a gain of ``tol``, relative). The fit stops
when every candidate has. Each epoch's history record has every candidate's primal and dual
objectives and duality gap (``grid_primal``, ``grid_dual``, ``grid_duality_gaps``,
``grid_relative_gaps``: a frozen candidate repeats its last) besides the held-out scores; its
``objective``/``dual_objective``/``duality_gap`` are the candidates' means and
``relative_gap`` the largest.

Checkpoints (``checkpoint=``, ``fit(..., resume=True)``): the stacked model and the history
after every epoch (:mod:`dsvm.training.grid_checkpoints`, whose replay rebuilds the scores,
rules and freezes), the K dual vectors at ``<checkpoint>.duals`` (the version the checkpoint
names kept), so a resumed grid ends as the uninterrupted one.

Not built (refused with the reason): ``cv=k`` folds, the ``l1_ratios``/``losses``/
``class_weights`` axes, ``rounds_per_epoch > 1`` (an epoch's held-out scores would mix its
rounds' models), and kernel maps (CoCoA+'s duals are the rows').
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Mapping
from typing import Any, cast

import numpy as np

from dsvm.combine.adding import AddPartial
from dsvm.data.duals import AnyDualStore, DualStore, MemoryDualStore, dual_store_url, remove_store
from dsvm.data.fold import fold_for
from dsvm.data.sources import Source
from dsvm.engine.local import LocalEngine
from dsvm.io.checkpoints import check_checkpoint_path
from dsvm.solvers.base import LocalSolver, SolverState, n_outputs_for
from dsvm.solvers.cocoa import CocoaSolver, duality_gap
from dsvm.solvers.cocoa_grid import CocoaCandidates
from dsvm.solvers.grid import ACTIVE, ETA0
from dsvm.solvers.held_out import HeldOutRows
from dsvm.training import grid_checkpoints as checkpoints
from dsvm.training import outcome
from dsvm.training.callbacks import HooksEachEpoch
from dsvm.training.cocoa import CocoaStopping, check_cocoa, cocoa_window, run_rounds
from dsvm.training.driver import EpochDecision, EpochStep, Loop, drive
from dsvm.training.engines import engine_for
from dsvm.training.finish import finish_fit, publish_model
from dsvm.training.fitdata import FitData
from dsvm.training.grid import (
    GridReport,
    GridTracker,
    check_memory,
    grid_rows,
)
from dsvm.training.grid_checkpoints import grid_params
from dsvm.training.layout import in_space, space_for, to_user_ids
from dsvm.training.memory import check_worker_memory
from dsvm.training.prepare import Prepared, check_memory_up_front, prepare_fit
from dsvm.training.progress import EpochProgress, format_grid
from dsvm.training.record import FittedModel
from dsvm.training.scaling import scale_stage, unfold_record
from dsvm.training.spec import FitSpec
from dsvm.training.streams import stream_stage

logger = logging.getLogger(__name__)

# Copies of a window's duals a round task holds at once: the chunks' as read, concatenated,
# each candidate's contiguous columns and the columns stacked back (counted, not measured).
DUAL_COPIES = 4
# Versions of every chunk's duals an in-process fit keeps (MemoryDualStore): the epoch's and
# the next, until the epoch ends.
KEPT_VERSIONS = 2
_DUAL_BYTES = 8  # float64


def check_cocoa_grid(spec: FitSpec, *, cv: Any, axes: Mapping[str, Any] | None) -> None:
    """What the CoCoA+ grid does not do, refused before any work with the reason."""
    check_cocoa(spec)
    if cv is not None:
        raise ValueError(f"cv={cv!r} with solver='cocoa': k folds would keep (k + 1) x K dual "
                         "vectors per row; the CoCoA+ grid scores a held-out share "
                         "(cv_fraction, cv=None).")
    given = sorted(k for k, v in (axes or {}).items() if v is not None)
    if given:
        raise ValueError(f"{given[0]}={dict(axes or {})[given[0]]!r} with solver='cocoa': its "
                         "grid has an alpha axis only (the candidates share one loss and "
                         "class weight); use solver='sgd' for the other axes.")
    if spec.early_stopping:
        raise ValueError("early_stopping=True: the grid holds out its own rows "
                         "(cv_fraction) and stops each candidate on them already.")
    rounds = int(spec.params.get("rounds_per_epoch", 1))
    if rounds > 1:
        raise ValueError(f"rounds_per_epoch={rounds} with a grid of alphas: an epoch's "
                         "held-out scores would mix its rounds' models; use 1.")


def dual_row_bytes(n_candidates: int, n_outputs: int, copies: int) -> int:
    """Bytes of ``copies`` copies of one row's K x m float64 duals."""
    return _DUAL_BYTES * int(n_candidates) * int(n_outputs) * int(copies)


def fit_cocoa_grid(spec: FitSpec, X: Any, y: Any = None, *, sample_weight: Any = None,
                   alphas: Any = "auto", n_alphas: int = 8, cv_fraction: float = 0.1,
                   cv: int | None = None, resume: bool = False,
                   axes: Mapping[str, Any] | None = None) -> tuple[FittedModel, GridReport]:
    """:func:`dsvm.training.grid.fit_grid` for ``solver="cocoa"`` (the same arguments and
    result): the K alphas in one read per epoch, with K dual vectors (see the module notes)."""
    check_cocoa_grid(spec, cv=cv, axes=axes)
    if spec.checkpoint is not None:  # before any work: checkpoint=notes.txt is refused now
        check_checkpoint_path(spec.checkpoint)
    with engine_for(X, spec.client, spec.n_workers) as engine:
        source, text, values = grid_rows(spec, X, y, sample_weight, alphas, n_alphas)
        spec = stream_stage(spec, engine, source)
        space = space_for(spec, source)
        source = in_space(source, space)
        check_memory_up_front(spec, engine, source, n_states=len(values),
                              row_bytes=dual_row_bytes(len(values), 1, DUAL_COPIES))
        spec, source, scaling = scale_stage(spec, engine, source)
        # (a checkpoint's seed, classes and model; CoCoA+ keeps w in float64)
        p = prepare_fit(spec, FitData(engine, source, text, scaling, None, space),
                        resume=resume, state_dtype=np.dtype(np.float64), announce_missing=False)
        if p.ckpt is not None:
            checkpoints.check_same_grid(spec, p.ckpt, values, cv_fraction)
        record, report = train_grid(p, values, cv_fraction)
    return to_user_ids(unfold_record(record)), report


def start_candidates(p: Prepared, alphas: np.ndarray,
                     cv_fraction: float) -> tuple[CocoaCandidates, SolverState]:
    """The K solvers with the rows held out of every chunk, and their stacked zero models
    (w = 0: every dual 0), after checking that K models and K dual vectors fit."""
    spec, engine, source = p.spec, p.engine, p.rows
    solvers = tuple(cast(CocoaSolver, spec.with_params(alpha=float(a)).make_solver(
        source.n_samples)) for a in alphas)
    assert p.values is not None  # (CoCoA+ classifies: check_cocoa's estimator)
    m = n_outputs_for(len(p.values))
    one = solvers[0].init_state(source.n_features, m, np.dtype(np.float64))
    in_memory = dual_row_bytes(len(alphas), m, KEPT_VERSIONS) * source.n_samples
    check_memory(engine, one.nbytes, alphas, row_bytes=in_memory)
    check_worker_memory(source, engine, state_bytes=one.nbytes * len(alphas),
                        n_streams=spec.n_streams,
                        row_bytes=dual_row_bytes(len(alphas), m, DUAL_COPIES))
    # (HeldOutRows reads a solver's alpha only: the penalty of the held-out objective)
    held = HeldOutRows(fold_for(p.seed, cv_fraction, source),
                       cast(tuple[LocalSolver, ...], solvers), p.values, spec.loss)
    state = SolverState(coef=np.zeros((len(alphas) * m, source.n_features)),
                        intercept=np.zeros(len(alphas) * m))
    return CocoaCandidates(solvers, held=held, n_train=training_rows(held, source)), state


def training_rows(held: HeldOutRows, source: Source) -> int:
    """The rows the candidates train on: every chunk's rows less those held out (the fold is
    a hash of the seed, chunk and row: counted here without reading a chunk)."""
    total = 0
    for chunk in range(source.n_chunks):
        n_rows = int(source.chunk_n_rows(chunk))
        total += n_rows - int(held.fold.held_mask(chunk, n_rows).sum())
    return total


def dual_store(p: Prepared, n_outputs: int) -> tuple[AnyDualStore, str | None]:
    """Where the K dual vectors live, as a single fit keeps its own (one file per chunk and
    version, a column block per candidate): ``<checkpoint>.duals`` (kept for resume; a fresh
    fit's first removes an earlier fit's), else this process's memory for a fit in it, else a
    scratch store the workers share. Returns the store and the url to remove at the end."""
    checkpoint = p.spec.checkpoint
    if checkpoint is None and isinstance(p.engine, LocalEngine):
        return MemoryDualStore(n_outputs), None
    url, temporary = dual_store_url(checkpoint)
    if p.ckpt is None and not temporary:
        remove_store(url)
    return DualStore(url, n_outputs), url if temporary else None


def train_grid(p: Prepared, alphas: np.ndarray,
               cv_fraction: float) -> tuple[FittedModel, GridReport]:
    """Train the candidates, score them, publish the best (the record, in the fit's units)."""
    spec, engine, source = p.spec, p.engine, p.rows
    grid, state = start_candidates(p, alphas, cv_fraction)
    record = p.model_record(state, n_streams=spec.n_streams or engine.n_workers)
    if p.ckpt is not None:  # its model, history and streams; the tracker replays the history
        checkpoints.restore(record, p.ckpt)
        record.n_streams = int(p.ckpt.n_streams)
    report = GridReport(np.asarray(alphas, np.float64), "accuracy", cv_fraction)
    assert grid.held is not None  # (start_candidates holds rows out)
    tracker = GridTracker(grid, engine, grid.held, spec, report)
    checkpoints.replay(tracker, record.history)
    store, url = dual_store(p, state.n_outputs)
    try:
        epochs = CocoaGridEpochs(p, record, store, grid.with_active(tracker.active), tracker)
        loop = Loop(record.history, converged=True, reason=resumed_reason(record.history))
        if not record.converged:
            loop = drive(epochs, history=record.history,
                         progress=EpochProgress(spec.max_epochs - len(record.history),
                                                spec.verbose),
                         stopping=CocoaStopping(None), callbacks=epoch_callbacks(
                             p, epochs, grid_params(spec, alphas, cv_fraction)))
    finally:
        if url is not None:
            remove_store(url)
    final = record.state
    bias = grid.solvers[0].bias
    tracker.finish(SolverState(coef=final.coef, intercept=final.intercept * bias),
                   record.history, source)
    report.state = SolverState(coef=final.coef, intercept=final.intercept,
                               extra={ACTIVE: epochs.grid.active.astype(np.float64),
                                      ETA0: np.zeros(grid.n_candidates)})
    logger.info("grid of %d alphas (cocoa), held-out accuracy:\n%s", grid.n_candidates,
                format_grid(report.table()))
    return publish_best(p, record, report, loop, bias), report


def epoch_callbacks(p: Prepared, epochs: CocoaGridEpochs, recorded: FitSpec) -> list[Any]:
    """After each epoch, in order: the freezes, the checkpoint (with ``checkpoint=``; the
    spec ``recorded`` names the grid), the hooks, then the duals' previous version dropped
    (the checkpoint names the new one)."""
    record, store = epochs.record, epochs.store
    callbacks: list[Any] = [epochs.freeze]
    if p.spec.checkpoint is not None:
        def save(step: EpochStep, loop: Loop) -> None:
            checkpoints.save(recorded, record.state, loop.history, loop.converged, record,
                             p.rows)

        callbacks.append(save)
    callbacks.append(HooksEachEpoch(p.spec))
    callbacks.append(lambda step, loop: store.drop(step.epoch))
    return callbacks


def resumed_reason(history: list[dict[str, Any]]) -> str:
    """Why a grid resumed from a converged checkpoint had stopped."""
    return str(history[-1].get("grid_stop", "converged")) if history else "no epoch run"


def publish_best(p: Prepared, record: FittedModel, report: GridReport, loop: Loop,
                 bias: float) -> FittedModel:
    """``record`` as the fit of the best candidate alone (its model, no refit), measured."""
    best = report.best_index
    own = report.candidate_state(best)
    record.state = SolverState(coef=own.coef, intercept=own.intercept, t=record.state.t)
    record = publish_model(record, own.coef, own.intercept * bias, p.rows.dtype)
    record.converged = loop.converged
    record.solver = "cocoa"
    chosen = p.spec.with_params(alpha=float(report.alphas[best]))
    reason = loop.reason if loop.converged else outcome.max_epochs_reason(chosen)
    return finish_fit(chosen, p.engine, record, p.source, reason=reason)


class CocoaGridEpochs:
    """The CoCoA+ grid's :class:`~dsvm.training.driver.EpochStrategy`: the rounds of every
    candidate still training, epoch after epoch; :meth:`freeze` (a callback of the loop)
    stops those whose gap or held-out objective says so."""

    def __init__(self, p: Prepared, record: FittedModel, store: AnyDualStore,
                 grid: CocoaCandidates, tracker: GridTracker) -> None:
        self.spec, self.engine, self.source = p.spec, p.engine, p.rows
        self.record, self.store, self.grid, self.tracker = record, store, grid, tracker
        self.solver = grid.solvers[0]  # (the passes, loss and bias every candidate shares)
        self.window = cocoa_window(self.spec.shuffle_window, self.source, self.engine,
                                   state_bytes=record.state.nbytes, n_streams=record.n_streams,
                                   row_bytes=dual_row_bytes(1, record.state.n_outputs,
                                                            DUAL_COPIES))
        last = record.history[-1] if record.history else {}  # (a resumed grid's last)
        k = grid.n_candidates
        self.primal = np.array(last.get("grid_primal", np.full(k, np.nan)), np.float64)
        self.dual = np.array(last.get("grid_dual", np.full(k, np.nan)), np.float64)

    def epochs(self, loop: Loop) -> Generator[EpochStep, None, None]:
        for epoch in range(len(self.record.history), self.spec.max_epochs):
            tic = time.perf_counter()
            start = self.record.state
            state, total = run_rounds(self.engine, self.solver, self.source, self.record,
                                      self.store, epoch, self.window.chunks, self.grid)
            self.record.state = state
            row = self.epoch_record(epoch, start, total, time.perf_counter() - tic)
            yield EpochStep(epoch, row, state, extra={"held_out": self.held_out(start, total)})
            if loop.converged:
                break

    def adopt(self, held: Any) -> None:  # pragma: no cover (no callback replaces the model)
        raise NotImplementedError("the CoCoA+ grid goes on from its own models and duals")

    def held_out(self, start: SolverState, total: AddPartial) -> Any:
        """The epoch's held-out sums (of the models it started from) with their penalties."""
        held = self.tracker.held_out
        start_models = SolverState(coef=start.coef, intercept=start.intercept * self.solver.bias)
        return held.with_penalties(total.held_out, start_models)

    def epoch_record(self, epoch: int, start: SolverState, total: AddPartial,
                     seconds: float) -> dict[str, Any]:
        """The epoch's history record: every candidate's objectives at the models the epoch
        started from (a frozen candidate's: its last), their means, the largest gap."""
        terms = total.terms.reshape(self.grid.n_candidates, 4)
        training = self.grid.training()
        for k in training:
            own = self.grid.rows(k, start.coef.shape[0])
            self.primal[k], self.dual[k] = duality_gap(
                self.grid.solvers[k].alpha, start.coef[own], start.intercept[own],
                self.solver.bias, terms[k])
        gaps = self.primal - self.dual
        relative = gaps / np.maximum(np.abs(self.primal), 1e-300)
        n_rows = total.n_rows
        loss = float(terms[training, 3].mean()) / max(n_rows, 1) if training else None
        return {
            "epoch": epoch + 1, "objective": float(np.mean(self.primal)),
            "dual_objective": float(np.mean(self.dual)), "duality_gap": float(np.mean(gaps)),
            "relative_gap": float(np.max(relative)), "grid_primal": self.primal.tolist(),
            "grid_dual": self.dual.tolist(), "grid_duality_gaps": gaps.tolist(),
            "grid_relative_gaps": relative.tolist(), "train_loss": loss,
            "seconds": seconds, "rows_per_s": n_rows / max(seconds, 1e-9), "n_rows": n_rows,
            "dual_steps": total.n_changed, "val_accuracy": None,
            "t": float(start.t + n_rows), "grid_active": len(training)}

    def freeze(self, step: EpochStep, loop: Loop) -> EpochDecision | None:
        """After an epoch: record the held-out scores (of the models before it), freeze the
        candidates whose held-out objective stopped improving or whose relative duality gap
        (at the model the epoch started from) is at most ``tol``; stop when none trains."""
        by_score = self.tracker.observe(loop.history, step.extra["held_out"])
        tol = self.spec.tol
        relative = np.asarray(step.record["grid_relative_gaps"])
        by_gap = [] if tol is None else [k for k in self.grid.training() if relative[k] <= tol]
        frozen = sorted(set(by_score) | set(by_gap))
        if not frozen:
            return None
        active = self.grid.active.copy()
        active[frozen] = False
        self.grid = self.grid.with_active(active)
        self.tracker.active[frozen] = False
        # (grid_counters: what dsvm.training.grid_checkpoints.replay reads of a freeze)
        step.record.update({"grid_frozen": frozen, "grid_frozen_on_gap": sorted(by_gap),
                            "grid_active": int(active.sum()),
                            "grid_counters": [float(self.record.state.t), 0.0]})
        logger.info("epoch %d: %s frozen (%s)", step.epoch + 1,
                    "; ".join(self.tracker.report.describe(k) for k in frozen),
                    "; ".join(f"alpha={self.grid.alphas[k]:.3g}: "
                              + ("gap within tol" if k in by_gap else "held-out objective")
                              for k in frozen))
        if active.any():
            return None
        step.record["grid_stop"] = (
            f"every candidate stopped: its relative duality gap at most tol={tol} or its "
            f"held-out objective no longer improving (by tol, for "
            f"{self.spec.n_iter_no_change} epochs)")
        return EpochDecision(stop=step.record["grid_stop"])
