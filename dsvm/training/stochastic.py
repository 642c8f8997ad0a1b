"""A stochastic fit from start to finish: source, feature map, start or resume, epochs, record.

``fit_stochastic`` is what ``fit`` and ``partial_fit`` of every estimator call for the
per-row solvers (pegasos, sgd, asset, bsgd): after the preparation every fit shares
(:mod:`dsvm.training.prepare`: resume, seed, hold-out, kernel map, classes, the start record),
or continuing an earlier fit, it runs the epoch loop with its stopping rule, checkpoints and
hooks, and ends as every fit does (:mod:`dsvm.training.finish`), returning a
:class:`~dsvm.training.record.FittedModel`. Only this layer composes solvers, combiners,
engines and checkpoints.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dsvm.combine import combiner_for
from dsvm.data.fold import RowFold
from dsvm.data.order import draw_seed
from dsvm.data.sources import Source, input_features, map_source
from dsvm.engine.hooks import EPOCH_HOOKS
from dsvm.engine.local import Engine
from dsvm.features.input_stage import input_stage_of
from dsvm.solvers.base import SolverState
from dsvm.solvers.held_out import HeldOutRows
from dsvm.training import outcome
from dsvm.training.callbacks import write_checkpoint
from dsvm.training.class_weights import class_weight_vector
from dsvm.training.engines import engine_for
from dsvm.training.evaluation import holdout_scorer, predictor, validation_scorer
from dsvm.training.finish import finish_fit, publish_model
from dsvm.training.fitdata import FitData
from dsvm.training.holdout import score_held_rows
from dsvm.training.inputs import source_of
from dsvm.training.layout import check_continuable, in_space, space_for
from dsvm.training.loop import FitPlan, lagged_holdout, run_epochs
from dsvm.training.memory import memory_window
from dsvm.training.prepare import (
    Prepared,
    class_values,
    prepare_fit,
    resolve_gamma,
    start_record,
    training_map,
)
from dsvm.training.record import LOADED, FittedModel, text_classes
from dsvm.training.scaling import scale_stage, warn_unscaled_batch
from dsvm.training.spec import FitSpec

logger = logging.getLogger(__name__)


@dataclass
class Fit:
    """A fit in progress: what stays fixed between its epochs (and partial_fit calls)."""

    spec: FitSpec
    source: Source  # the training rows, through the feature map
    record: FittedModel
    held_out: Source | None = None  # chunks held out for early stopping (BSGD), or None
    fold: RowFold | None = None  # or the rows of every chunk held out for it (data.fold)


def start(spec: FitSpec, engine: Engine, source: Source, *, classes: Any, text: np.ndarray | None,
          seed: int, fmap: Any) -> FittedModel:
    """A fresh fit on ``source`` (through ``fmap``): classes, the solver's first state,
    calibrated on the first chunk (``partial_fit``'s first call, a fit continuing another
    solver's model; :func:`dsvm.training.prepare.prepare_fit` prepares a ``fit``)."""
    shown, values = class_values(spec, source, classes, text)
    weights = class_weight_vector(spec.class_weight, shown, values, source)
    return start_record(Prepared(spec, engine, source, source, seed, None, shown, values,
                                 weights, fmap))


def resolved_params(spec: FitSpec) -> dict[str, Any]:
    """What the fit resolved and a later fit of the estimator reuses (gamma="scale")."""
    return {k: spec.params[k] for k in ("gamma",) if k in spec.params}


def epoch_callback(fit: Fit) -> Callable[[SolverState, list, bool], None] | None:
    """What runs after each epoch: the checkpoint write and any hooks (detached jobs)."""
    hooks = EPOCH_HOOKS.get()
    spec, record = fit.spec, fit.record
    if spec.checkpoint is None and not hooks:
        return None

    def on_epoch(state: SolverState, history: list, converged: bool) -> None:
        if spec.checkpoint is not None:
            write_checkpoint(spec, record, fit.source, state, history, converged)
        for hook in hooks:
            hook(spec, state, history, converged)

    return on_epoch


def run(fit: Fit, engine: Engine, n_epochs: int, validation: Any) -> FittedModel:
    """Run up to ``n_epochs`` more epochs of ``fit``; returns the updated record."""
    spec, record = fit.spec, fit.record
    solver = spec.make_solver(record.n_samples)
    window = memory_window(spec.shuffle_window, fit.source, engine,
                           state_bytes=record.state.nbytes, n_streams=record.n_streams)
    plan = FitPlan(seed=record.seed, n_streams=record.n_streams, tol=spec.tol,
                   n_iter_no_change=spec.n_iter_no_change, verbose=spec.verbose,
                   shuffle_window=window.chunks, window_note=window.describe())
    validate = validation_scorer(engine, spec, record, solver, validation)
    holdout = None if fit.held_out is None else holdout_scorer(engine, spec, record, solver,
                                                               fit.held_out)
    if fit.fold is not None:  # scored by the epochs' own passes (training.loop.lagged_holdout)
        plan.held_out = HeldOutRows(fit.fold, (solver,), record.class_values, spec.loss)
        plan.early_stopping = True
    result = run_epochs(
        engine=engine, solver=solver, combiner=combiner_for(solver), source=fit.source,
        classes=record.class_values, class_weight=record.class_weight, state=record.state,
        plan=plan, first_epoch=record.n_iter,
        n_epochs=n_epochs, validate=validate, holdout=holdout, history=record.history,
        on_epoch=epoch_callback(fit))
    if plan.held_out is not None and result.history:  # (the last model's, one epoch late)
        lagged_holdout(plan, result.history,
                       score_held_rows(engine, plan.held_out, fit.source, result.state))
    record = publish(record, result.state, solver, history=result.history,
                     converged=result.converged)
    record.stop_reason = result.stop_reason
    return record


def finish(spec: FitSpec, engine: Engine, record: FittedModel, source: Source, *,
           warn: bool) -> FittedModel:
    """The end of a stochastic fit (:func:`dsvm.training.finish.finish_fit`): the reason of a
    fit that ran out of epochs, BSGD's expansion measured without a penalty, and with ``warn``
    the ``ConvergenceWarning`` of a fit that ran out of epochs while still improving."""
    reason = record.stop_reason if record.converged else outcome.max_epochs_reason(spec)
    penalized = getattr(spec.make_solver(record.n_samples), "predictor", None) is None
    return finish_fit(spec, engine, record, source, reason=reason, penalized=penalized,
                      not_converged=still_improving if warn else None)


def still_improving(spec: FitSpec, record: FittedModel) -> str | None:
    """The warning's text of a stochastic fit that ran out of epochs (None after one epoch)."""
    if record.n_iter <= 1:
        return None
    return (f"{spec.estimator} stopped at max_epochs={spec.max_epochs} while its objective "
            f"still improved by more than tol={spec.tol} (relative) within "
            f"{spec.n_iter_no_change} epochs; it has not converged: consider more epochs.")


def publish(record: FittedModel, state: SolverState, solver: Any, *,
            history: list[dict[str, Any]], converged: bool) -> FittedModel:
    """The record with the model ``state`` predicts with (averages kept in float64 are
    published in the data's dtype)."""
    coef, intercept, fmap = predictor(solver, state, record.feature_map)
    publish_model(record, coef, intercept, state.coef.dtype)
    record.state, record.history, record.converged = state, history, converged
    record.feature_map = fmap
    return record


def fit_stochastic(spec: FitSpec, data: FitData, *, validation: Any = None,
                   resume: bool = False) -> FittedModel:
    """Train from scratch (or from ``spec.checkpoint`` with ``resume``) for up to
    ``spec.max_epochs`` epochs."""
    if data.continues is not None:
        return fit_warm(spec, data, data.continues, validation=validation)
    p = prepare_fit(spec, data, resume=resume, held_rows=True)
    spec, engine = p.spec, p.engine
    record = start_record(p)
    record.resolved = resolved_params(spec)
    remaining = spec.max_epochs - record.n_iter
    if remaining > 0 and not p.done:
        record = run(Fit(spec, p.rows, record, p.held, p.fold), engine, remaining, validation)
    else:
        solver = spec.make_solver(record.n_samples)
        record = publish(record, record.state, solver, history=record.history,
                         converged=record.converged)
        if record.converged:
            record.stop_reason = "the checkpoint's fit had converged"
    return finish(spec, engine, record, p.source, warn=spec.tol is not None)


def partial_fit_stochastic(spec: FitSpec, previous: FittedModel | None, X: Any, y: Any = None,
                           sample_weight: Any = None, *, classes: Any = None,
                           validation: Any = None) -> FittedModel:
    """One more epoch over ``X``, continuing ``previous`` (None: the first call)."""
    text = None if previous is None else text_classes(previous.classes)
    if previous is None and classes is not None and np.asarray(classes).dtype.kind not in "biuf":
        text = np.unique(np.asarray(classes).astype(str))  # the full label set, up front
    with engine_for(X, spec.client, spec.n_workers) as engine:
        source, text = source_of(X, y, sample_weight, classify=spec.classifies,
                                 chunk_rows=spec.chunk_rows, text_classes=text)
        # the rows in the feature ids the state is in (a renumbered store's: training.layout)
        if previous is not None:
            check_continuable(previous.layout, source, "partial_fit")
        # (a first call keeps every feature: later calls may bring rows with others)
        space = previous.layout if previous is not None else space_for(spec, source,
                                                                        fresh=False)
        source = in_space(source, space)
        if previous is None:
            warn_unscaled_batch(spec, engine, source)
            spec = resolve_gamma(spec, engine, source)
            seed = draw_seed(spec.random_state)
            fmap = training_map(spec, engine, source, seed)
            mapped = map_source(source, fmap)
            previous = start(spec, engine, mapped, classes=classes, text=text, seed=seed,
                             fmap=fmap)
            previous.layout = space
        else:
            spec = spec.with_params(**previous.resolved)
            spec, source, _ = scale_stage(spec, engine, source, continues=previous)
            mapped = map_source(source, _map_of_fit(spec, previous))
            if previous.solver not in ("", spec.solver):  # solver="auto" chose CoCoA+ for it
                previous = continued_from_model(spec, engine, mapped, previous)
        if input_features(mapped) != previous.n_features_in:
            raise ValueError(f"X has {input_features(mapped)} features, but {spec.estimator} "
                             f"is expecting {previous.n_features_in} features as input.")
        previous.resolved = resolved_params(spec)
        record = run(Fit(spec, mapped, previous), engine, 1, validation)
        record.stop_reason = record.stop_reason if record.converged else "one partial_fit epoch"
        record.outcome = None  # measured by fit only (one extra pass a call would double it)
        return record


def continued_from_model(spec: FitSpec, engine: Engine, source: Source,
                         other: FittedModel) -> FittedModel:
    """A stochastic fit that starts from the model of a fit by another solver: ``partial_fit``
    after a ``fit`` for which ``solver="auto"`` chose CoCoA+ (whose duals belong to the rows of
    that fit), or a warm start after a fit with another solver. The iterate and its average
    start at that model (CoCoA+'s bias feature's weight as the intercept), and the step
    counter at the steps (rows) it has seen, so that the steps continue small where a fresh
    schedule would start large and undo the fit."""
    if other.feature_map is not None and other.solver == LOADED:
        raise ValueError(
            "A kernel model loaded from a model file cannot be continued (partial_fit, "
            "warm_start): the file keeps its feature map and weights, not the fit's state. "
            "Continue it in the session that fitted it (or from its pickle), or fit afresh.")
    if other.feature_map is not None:
        raise ValueError(f"A {spec.solver!r} fit cannot continue the kernel model of a "
                         f"{other.solver!r} fit; fit it afresh (warm_start=False).")
    if other.solver == "cocoa":
        bias = 1.0 if spec.fit_intercept else 0.0
        coef, intercept = other.state.coef, other.state.intercept * bias
    else:
        coef, intercept = other.state.model()
    record = start(spec, engine, source, classes=other.classes,
                   text=text_classes(other.classes), seed=other.seed,
                   fmap=None)
    state = record.state
    state.coef[:], state.intercept[:] = coef, intercept
    if state.avg_coef is not None and state.avg_intercept is not None:
        state.avg_coef[:], state.avg_intercept[:] = state.coef, state.intercept
        state.n_avg = 1.0
    state.t = float(other.state.t)
    record.history, record.scaling = list(other.history), other.scaling
    record.layout = other.layout  # (the rows are seen in its ids: training.layout)
    record.resolved, record.feature_names = other.resolved, other.feature_names
    return record


def fit_warm(spec: FitSpec, data: FitData, previous: FittedModel, *,
             validation: Any = None) -> FittedModel:
    """``warm_start=True``: up to ``spec.max_epochs`` more epochs of the estimator's last fit,
    its state, schedule and scaling continued (as ``partial_fit`` continues it one epoch at a
    time); after a fit by another solver, from its model (:func:`continued_from_model`)."""
    engine, source = data.engine, data.source
    spec = spec.with_params(**previous.resolved)
    mapped = map_source(source, _map_of_fit(spec, previous))
    if input_features(mapped) != previous.n_features_in:
        raise ValueError(f"X has {input_features(mapped)} features, but {spec.estimator} is "
                         f"expecting {previous.n_features_in} features as input (warm_start).")
    if previous.solver not in ("", spec.solver):
        previous = continued_from_model(spec, engine, mapped, previous)
    record = run(Fit(spec, mapped, previous), engine, spec.max_epochs, validation)
    return finish(spec, engine, record, source, warn=spec.tol is not None)


def _map_of_fit(spec: FitSpec, record: FittedModel) -> Any:
    """The feature map the training rows go through: the kernel map of a fit with
    ``kernel=...``; none for BSGD, whose published map is its own kernel expansion."""
    kernel = spec.kernel
    if isinstance(kernel, str) and kernel == "linear":
        return input_stage_of(record.feature_map)  # (BSGD's support vectors' space)
    return record.feature_map

