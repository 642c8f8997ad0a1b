"""What a fit returns: a plain record of the fitted model and of the fit that made it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dsvm.data.feature_layout import FeatureLayout
from dsvm.features.maps import FeatureMap
from dsvm.features.scaling import Scaling
from dsvm.solvers.base import SolverState


def text_classes(classes: np.ndarray | None) -> np.ndarray | None:
    """``classes`` when they are text labels (the rows' codes are then their indices), else
    None (numbers, or a regressor's none)."""
    return classes if classes is not None and classes.dtype.kind not in "biuf" else None


# The ``solver`` of a model file's record (dsvm.estimators.loading): its model continues as a
# stochastic fit's start, as another solver's model does (training.stochastic)
LOADED = "a model file"


@dataclass
class FittedModel:
    """A fitted model and everything needed to continue its fit.

    coef, intercept : what predicts, in the data's dtype ((K, d) and (K,)); for a kernel map
        or BSGD's expansion, in the mapped space of ``feature_map``.
    classes : the labels as given (numbers or text), None for a regressor.
    class_values : float64 values the kernels see for ``classes`` (the labels themselves when
        numeric, their indices otherwise); None for a regressor.
    state : the solver's state (iterate, averages, counters) that a later ``partial_fit``
        continues from.

    """

    coef: np.ndarray
    intercept: np.ndarray
    state: SolverState
    classes: np.ndarray | None
    class_values: np.ndarray | None
    n_features_in: int
    n_samples: int
    seed: int
    n_streams: int
    feature_map: FeatureMap | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    converged: bool = False
    resolved: dict[str, Any] = field(default_factory=dict)  # e.g. gamma="scale" -> its value
    class_weight: np.ndarray | None = None  # per class, in the order of ``classes``
    feature_names: list[str] | None = None  # a DataFrame's columns (feature_names_in_)
    stop_reason: str = ""  # why the last fit (or partial_fit) stopped, in words
    outcome: Any = None  # a fit's training.outcome.FitOutcome (None after partial_fit)
    # the scaling the rows were trained through (features.scaling): ``state`` is in its units,
    # ``coef``/``intercept`` are folded back into raw units (training.scaling.unfold_record)
    scaling: Scaling | None = None
    # the feature ids ``state`` is in (training.layout): a renumbered dataset's, or None for the
    # user's; ``coef`` is published in the user's ids (training.layout.to_user_ids)
    layout: FeatureLayout | None = None
    solver: str = ""  # the solver that ran (what solver="auto" chose: training.auto_solver)

    @property
    def n_iter(self) -> int:
        return len(self.history)

    @property
    def t(self) -> float:
        return float(self.state.t)
