"""The estimators' parameter constraints (checked in ``fit`` with scikit-learn's messages)."""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

import numpy as np

from dsvm._validation import AnyOf, InstanceOf, Interval, NoneOr, Options
from dsvm.training.choices import BSGD_MERGES, FEATURE_MAPS, KERNEL_NAMES

CLASSIFIER_SOLVERS = ("auto", "asset", "asset*", "bsgd", "cocoa", "nesvm", "pegasos", "sgd")
CLASSIFIER_LOSSES = ("hinge", "squared_hinge", "logistic", "smoothed_hinge", "squared")
REGRESSION_SOLVERS = ("auto", "sgd", "pegasos", "asset", "asset*")
REGRESSION_LOSSES = ("epsilon_insensitive", "squared")

_POSITIVE = Interval(numbers.Real, 0.0, None, "neither")
_COUNT = Interval(numbers.Integral, 1, None, "left")
# (inf is refused: gamma=inf made every kernel value 0, and the fit's weights non-finite)
_FINITE_POSITIVE = Interval(numbers.Real, 0.0, math.inf, "neither")
_BOOL = InstanceOf((bool,), "a bool")

# Parameters both estimators have, with the same meaning.
COMMON: dict[str, Any] = {
    "alpha": _POSITIVE,
    "penalty": Options(("l2", "l1", "elasticnet")),
    "l1_ratio": Interval(numbers.Real, 0.0, 1.0, "both"),
    "kernel": AnyOf((Options(KERNEL_NAMES), InstanceOf(FEATURE_MAPS, "")),
                    "a str among {'linear', 'nystroem', 'rff'} or an RFF or Nystroem"),
    "n_components": _COUNT,
    "gamma": AnyOf((Options(("scale",)), _FINITE_POSITIVE),
                   "a finite float above 0.0, or 'scale'"),
    "fit_intercept": _BOOL,
    "scale": AnyOf((Options(("auto",)), _BOOL), "'auto' or a bool"),
    "max_epochs": _COUNT,
    "tol": NoneOr(Interval(numbers.Real, 0.0, None, "left")),
    "n_iter_no_change": _COUNT,
    "early_stopping": _BOOL,
    "validation_fraction": Interval(numbers.Real, 0.0, 1.0, "neither"),
    "batch_size": _COUNT,
    "average": _BOOL,
    "rho": Interval(numbers.Real, 0.0, 1.0, "left"),
    "n_streams": NoneOr(_COUNT),
    "chunk_rows": _COUNT,
    "shuffle_window": NoneOr(_COUNT),
    "n_workers": NoneOr(_COUNT),
    "random_state": AnyOf(
        (NoneOr(Interval(numbers.Integral, 0, None, "left")),
         InstanceOf((np.random.Generator,), "a Generator")),
        "an int in the range [0, inf), a numpy Generator or None",
    ),
    "verbose": Interval(numbers.Integral, 0, None, "left"),
    "checkpoint": NoneOr(InstanceOf((str, os.PathLike), "a path or URL string")),
}

CLASSIFIER: dict[str, Any] = {
    **COMMON,
    "solver": Options(CLASSIFIER_SOLVERS),
    "loss": Options(CLASSIFIER_LOSSES),
    "mu": _POSITIVE,
    "mu0": NoneOr(_POSITIVE),
    "warm_start": _BOOL,
    "budget": Interval(numbers.Integral, 2, None, "left"),  # (a merge takes two vectors)
    "local_iters": _POSITIVE,
    "rounds_per_epoch": _COUNT,
    "merge": Options(BSGD_MERGES),
    "class_weight": AnyOf((NoneOr(Options(("balanced",))), InstanceOf((dict,), "a dict")),
                          "a dict, 'balanced' or None"),
}

REGRESSOR: dict[str, Any] = {
    **COMMON,
    "solver": Options(REGRESSION_SOLVERS),
    "loss": Options(REGRESSION_LOSSES),
    "epsilon": Interval(numbers.Real, 0.0, None, "left"),
}
