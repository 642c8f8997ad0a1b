"""Evaluation, the estimators' way in: a fitted model's loss, accuracy and R^2 sums over a
dataset or arrays, and its regulariser's value.

The sums are computed by tasks that read their own chunks (only the sums come back), in this
process unless a cluster was given or is active, as for prediction
(:mod:`dsvm.training.predicting`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dsvm.data.sources import Source, map_source
from dsvm.solvers.evaluation import EvalCounts
from dsvm.solvers.penalties import penalty_value
from dsvm.training import evaluation
from dsvm.training.engines import prediction_engine
from dsvm.training.layout import model_for
from dsvm.training.predicting import LinearModel

__all__ = ["EvalCounts", "evaluate_source", "penalty"]


def evaluate_source(source: Source, model: LinearModel, *, class_values: np.ndarray | None,
                    loss: Any, client: Any = None, n_workers: int | None = None) -> EvalCounts:
    """Evaluation sums of ``model`` over ``source`` (through its feature map): loss and accuracy
    for a classifier (``class_values``: the float class values the kernels see), the sums
    behind R^2 for a regressor (``class_values`` None). ``loss``: the fit spec's."""
    model, source = model_for(source, model)  # a renumbered store: in its ids
    mapped = map_source(source, model.feature_map)
    with prediction_engine(mapped, client, n_workers) as engine:
        return evaluation.evaluate(engine, model.coef, model.intercept, mapped, class_values,
                                   loss)


def penalty(params: Any, coef: np.ndarray) -> float:
    """The regulariser's value at ``coef`` (L2, L1 or elastic net) for the parameters
    ``params`` (anything with ``alpha``, ``penalty`` and ``l1_ratio``: an estimator)."""
    return penalty_value(params, coef)
