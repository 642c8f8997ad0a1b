"""The data of a fit, prepared once for every solver: the source of its rows (any input), the
text labels, the scaling stage's view of the rows, and the engine that runs the tasks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dsvm.data.feature_layout import FeatureLayout
from dsvm.data.sources import Source
from dsvm.engine.local import Engine
from dsvm.features.scaling import Scaling
from dsvm.training.record import FittedModel


@dataclass
class FitData:
    """What every solver's fit starts from (:func:`dsvm.training.trainer.fit` makes it)."""

    engine: Engine
    source: Source  # the training rows as the solver reads them (through the scaling, if any)
    text: np.ndarray | None  # the label set when the labels are text, else None
    scaling: Scaling | None = None
    # the fit a stochastic warm start continues (the estimator's last), or None
    continues: FittedModel | None = None
    # the feature ids the fit trains in (training.layout; None: the user's)
    layout: FeatureLayout | None = None

    @property
    def feature_names(self) -> list[str] | None:
        """A DataFrame's columns (``feature_names_in_``), else None."""
        return self.source.feature_names
