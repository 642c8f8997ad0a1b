"""Scoring and predicting over sources: evaluation sums, decision values, prediction stores.

Every function takes an engine, so a dataset on a cluster is scored and predicted by tasks that
read their own chunks; only sums, decision values (``decision_values``, for data the caller
wants in memory) or row counts (``write_predictions``) come back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dsvm.data.sources import Source, map_source
from dsvm.engine.local import Engine, LocalEngine, spread
from dsvm.engine.tasks import Decide, Evaluate, WritePredictions
from dsvm.features.input_stage import input_stage_of
from dsvm.solvers.base import LocalSolver, SolverState
from dsvm.solvers.evaluation import EvalCounts, add_counts
from dsvm.training.inputs import validation_source
from dsvm.training.layout import in_space
from dsvm.training.record import FittedModel, text_classes
from dsvm.training.spec import FitSpec


def evaluate(engine: Engine, coef: np.ndarray, intercept: np.ndarray, source: Source,
             class_values: np.ndarray | None, loss: Any, *,
             constant: float | None = None) -> EvalCounts:
    """Loss and accuracy sums (regression: the sums behind R^2) of a model over ``source``;
    ``constant`` (a regression): also the loss of predicting it, in the same pass."""
    n_groups = 1 if isinstance(engine, LocalEngine) else 2 * engine.n_workers
    return engine.reduce(Evaluate(coef, intercept, class_values, loss, constant), source,
                         spread(source.n_chunks, n_groups), add_counts, name="evaluate",
                         what="evaluation")


def decision_values(engine: Engine, coef: np.ndarray, intercept: np.ndarray,
                    source: Source) -> np.ndarray:
    """Decision values (n_rows, n_outputs) of every row of ``source``, in order."""
    parts = list(engine.map(Decide(coef, intercept), source, range(source.n_chunks),
                            name="decision", what="prediction"))
    return np.concatenate(parts) if parts else np.zeros((0, coef.shape[0]))


def write_predictions(engine: Engine, coef: np.ndarray, intercept: np.ndarray, source: Source,
                      labels: np.ndarray | None, writer: Any) -> int:
    """Every chunk predicted and written into a prediction store by a task (only row counts
    come back); returns the rows written."""
    task = WritePredictions(coef, intercept, labels, writer)
    return sum(engine.map(task, source, range(source.n_chunks), name="write-predictions",
                          what="prediction"))


def predictor(solver: LocalSolver, state: SolverState,
              fmap: Any) -> tuple[np.ndarray, np.ndarray, Any]:
    """(coef, intercept, feature map or None) that predict for ``state``."""
    own = getattr(solver, "predictor", None)
    if own is not None:  # BSGD: its kernel expansion (over the columns it kept)
        coef, intercept, expansion = own(state)
        return coef, intercept, expansion.on_input(input_stage_of(fmap))
    coef, intercept = state.model()
    return coef, intercept, fmap


def validation_scorer(engine: Engine, spec: FitSpec, record: FittedModel, solver: LocalSolver,
                      validation: Any) -> Callable[[SolverState], float] | None:
    """What ``history_[i]["val_accuracy"]`` records after each epoch: accuracy on the
    validation data (R^2 for regressors); None without validation data."""
    if validation is None:
        return None
    text = text_classes(record.classes)
    source = validation_source(validation, classify=spec.classifies,
                               chunk_rows=spec.chunk_rows, text_classes=text,
                               width=record.n_features_in, names=record.feature_names)
    check_validation_features(source, record.n_features_in, record.feature_names)
    # the states scored are in the fit's feature ids and scaled units (training.layout,
    # training.scaling)
    source = in_space(source, record.layout)
    return source_scorer(engine, spec, record, solver, map_source(source, record.scaling))


def check_validation_features(source: Source, n_features: int,
                              names: list[str] | None = None) -> None:
    """The validation data has the training data's width, and its columns' names (a frame's,
    a CSV/Parquet header's kept at conversion) in the same order where both have names."""
    if source.n_features != n_features:
        raise ValueError(f"The validation data ({source.describe()}) has {source.n_features} "
                         f"features but the training data has {n_features}.")
    check_same_columns(names, source.feature_names, f"The validation data ({source.describe()})")


def check_same_columns(names: Any, got: list[str] | None, what: str) -> None:
    """Refuse rows named ``what`` whose column names ``got`` are not ``names`` (the model's),
    in order: read by position, every weight would meet another column's values."""
    if names is None or got is None or len(got) != len(names) or list(got) == list(names):
        return  # (a width that differs is refused by the checks of the width)
    names = [str(n) for n in names]
    at = next(i for i, (a, b) in enumerate(zip(got, names, strict=True)) if a != b)
    shown = ", ".join(map(repr, names[:8])) + (", ..." if len(names) > 8 else "")
    raise ValueError(f"{what}: its column {at} is {got[at]!r}, but the model was fitted with "
                     f"{names[at]!r} there; convert the rows with the columns in the order of "
                     f"its training data ({shown}).")


def source_scorer(engine: Engine, spec: FitSpec, record: FittedModel, solver: LocalSolver,
                  source: Source) -> Callable[[SolverState], float]:
    """Accuracy (R^2 for regressors) on ``source`` of the model a state predicts with."""

    def score(state: SolverState) -> float:
        coef, intercept, fmap = predictor(solver, state, record.feature_map)
        counts = evaluate(engine, coef, intercept, map_source(source, fmap),
                          record.class_values, spec.loss)
        return counts.accuracy if spec.classifies else counts.r2

    return score


def holdout_scorer(engine: Engine, spec: FitSpec, record: FittedModel, solver: LocalSolver,
                   source: Source) -> Callable[[SolverState], float]:
    """The objective (the penalty plus the mean loss) on held-out ``source`` of the model a state
    predicts with: what early stopping follows (smoother than accuracy, and what the fit
    minimises)."""
    from dsvm.training.probes import penalty_of

    def objective(state: SolverState) -> float:
        coef, intercept, fmap = predictor(solver, state, record.feature_map)
        counts = evaluate(engine, coef, intercept, map_source(source, fmap),
                          record.class_values, spec.loss)
        own = getattr(solver, "predictor", None)
        penalty = 0.0 if own is not None else penalty_of(solver, coef)
        return penalty + counts.mean_loss

    return objective
