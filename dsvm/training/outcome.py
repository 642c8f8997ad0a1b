"""How a fit ended: why it stopped, what its published model measures, and whether it failed.

After the last epoch (pass, round) of a ``fit``, one evaluation pass over the training rows
measures the model the estimator publishes: its exact objective (the penalty plus the mean loss,
what ``dsvm eval`` and ``evaluate`` print), its training accuracy (R^2 for a regressor) and, for
a regressor, the spread of the targets. This is the only extra read of the data: the per-epoch
numbers are estimates (the progressive objective of the iterates during a pass, or the objective
of the model the epoch started from on a fixed sample of rows), the published model is measured
by none of them. The pass computes no gradient, only decision values and losses (a fraction of
an epoch's cost); ``partial_fit`` (one epoch a call) does not pay it.

A fit has **failed** when its model is no better than a constant and its objective did not come
down:

* a classifier whose objective is not below the zero model's (hinge: 1 per output; the model
  every solver starts from) and whose training accuracy recovers less than
  ``MIN_GAIN`` of what separates the majority-class rate from 1 (raw breast-cancer features:
  objective 1.7e4, accuracy = the majority rate; a column of ~1e19 values: 0.51 on balanced
  classes). Raw digits (objective 70 against 10, accuracy 0.94) is no failure: the objective
  alone is not the test.
* a regressor whose training R^2 is at most 0: no better than predicting the targets' centre,
  the model it starts from (diabetes targets times 1000: R^2 -0.02). With the
  epsilon-insensitive loss (the default), also no better in that loss than predicting the
  constant it starts from, the targets' median (on the calibration rows): such a fit estimates
  a median, and on skewed targets (prices, durations) a good one has R^2 below 0 (a lognormal
  target: R^2 -0.04, mean loss 3.25 against 3.35 for the median's). "Better" is by more than
  ``d / n`` of the median's loss (at most :data:`MAX_CHANCE_GAIN`), what fitting ``d`` weights
  (the features the model uses: a hashed column's few categories, not its 2^18 columns) to
  ``n`` rows gains by chance: diabetes targets times 1000, unscaled, gain 0.0003-0.0007
  against 10 / 442; scaled, 0.31.

A failed fit warns with :class:`dsvm.exceptions.FitFailedWarning` (a ``ConvergenceWarning``,
as scikit-learn warns about fits that did not converge) that names the likely cause and the
fix, and publishes its model with ``outcome_.failed`` True; ``dsvm train`` exits 2 and saves
nothing without ``--keep-failed``. Not an exception: scikit-learn's estimator checks fit a few
rows of random labels, where no model beats a constant; ``warnings.simplefilter("error",
FitFailedWarning)`` makes it one. A classifier at or below the majority rate whose objective
did come down (a legitimate optimum on imbalanced data, or a fit stopped too soon) has not
failed but warns too (``ConvergenceWarning``): never a silent model at or below the majority
rate.
"""

from __future__ import annotations

import logging
import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from dsvm.data.sources import Source, map_source
from dsvm.engine.local import Engine
from dsvm.engine.tasks import StartingConstant, first
from dsvm.exceptions import ConvergenceWarning, FitFailedWarning, warn
from dsvm.solvers.evaluation import EvalCounts
from dsvm.solvers.penalties import penalty_value
from dsvm.solvers.targets import pointwise_losses
from dsvm.training.class_weights import class_counts
from dsvm.training.evaluation import evaluate
from dsvm.training.record import FittedModel
from dsvm.training.spec import FitSpec

logger = logging.getLogger(__name__)

# A classifier whose objective did not come down must recover at least this share of the gap
# between the majority-class rate and 1 (a balanced problem: accuracy >= 0.55) not to fail.
MIN_GAIN = 0.1
# The most a regressor's chance gain over the median's loss (d weights on n rows: d / n) is
# taken to be, for more weights than rows.
MAX_CHANCE_GAIN = 0.05
# More classes than this, all numbers: the advice of a failed classifier names regression (a
# count of bike rentals, 0-62, trained as 63 classes: accuracy 0.003, R^2 0.75 as a regressor).
MANY_NUMBER_CLASSES = 10
# Targets spread wider than this (standard deviation) are named as the likely cause of a
# regressor's failure: with unit-scale features, w must grow to their scale, which the
# regulariser and the step schedule (Pegasos' ball of radius 1/sqrt(alpha)) hold back.
LARGE_TARGETS = 100.0


@dataclass(frozen=True)
class FitOutcome:
    """The end of a fit: why it stopped and what its published model measures.

    stop_reason : why the fit stopped (max_epochs reached, tol met on what, early stopping).
    objective : the published model's exact objective on the training rows (penalty + mean
        loss), None where the penalty is not measured (BSGD's kernel expansion).
    loss : its mean loss on the training rows.
    start_objective : the zero model's objective (classifiers), None for regressors.
    score : training accuracy (R^2 for a regressor).
    baseline : the majority-class rate (0 for R^2: predicting the mean); None if unknown.
    n_rows : training rows measured.
    target_spread : a regressor's standard deviation of the targets.
    constant_loss : a regressor's mean loss (epsilon-insensitive) of predicting the constant it
        started from, the targets' median; None for other losses.
    chance_gain : the share of ``constant_loss`` a model must remove to be better than it.
    numeric_classes : a classifier's classes when they are numbers, more than
        ``MANY_NUMBER_CLASSES`` of them (a count or an amount taken for classes?); else 0.
    """

    task: str
    stop_reason: str
    objective: float | None
    loss: float
    start_objective: float | None
    score: float
    baseline: float | None
    n_rows: int
    target_spread: float | None = None
    scaled: bool = False  # whether the fit scaled the columns (training.scaling)
    constant_loss: float | None = None
    chance_gain: float = 0.0
    numeric_classes: int = 0

    @property
    def classifies(self) -> bool:
        return self.task == "classification"

    @property
    def score_name(self) -> str:
        return "accuracy" if self.classifies else "R^2"

    @property
    def gain(self) -> float | None:
        """The share of the possible improvement over the constant model the model achieves
        (classifier: (accuracy - majority) / (1 - majority); regressor: R^2)."""
        if self.baseline is None or not math.isfinite(self.score):
            return None
        if not self.classifies:
            return self.score
        return (self.score - self.baseline) / max(1.0 - self.baseline, 1e-12)

    @property
    def beats_constant_loss(self) -> bool:
        """Whether a regressor's mean loss is below that of the constant it started from."""
        return self.constant_loss is not None and \
            self.loss < self.constant_loss * (1.0 - self.chance_gain)

    @property
    def uphill(self) -> bool:
        """Whether the objective ended no lower than the zero model's (or is not finite)."""
        if self.objective is None or self.start_objective is None:
            return False
        return not (self.objective < self.start_objective)

    @property
    def failed(self) -> bool:
        """Uphill and barely above the majority rate (classifiers), no better than the mean
        (regressors), or diverged (a score or objective that overflowed)."""
        if not math.isfinite(self.score) or (self.objective is not None
                                             and not math.isfinite(self.objective)):
            return True
        gain = self.gain
        if gain is None:
            return False
        if self.classifies:
            return self.uphill and gain < MIN_GAIN
        return gain <= 0.0 and not self.beats_constant_loss

    @property
    def at_or_below_constant(self) -> bool:
        gain = self.gain
        return gain is not None and gain <= 0.0 and not self.beats_constant_loss

    @property
    def cause(self) -> str:
        """"targets" (a regressor's targets in large units) or "features" (unscaled)."""
        if not self.classifies and (self.target_spread or 0.0) > LARGE_TARGETS:
            return "targets"
        return "features"

    def baseline_text(self) -> str:
        if self.classifies:
            return "" if self.baseline is None else f" (majority class {self.baseline:.4f})"
        return " (0 = predicting the mean)" + self.constant_text()

    def constant_text(self) -> str:
        """A regressor's mean loss beside that of predicting the targets' median."""
        if self.constant_loss is None:
            return ""
        return (f", mean epsilon-insensitive loss {self.loss:.4g} against "
                f"{self.constant_loss:.4g} for predicting the median")

    def summary(self) -> str:
        """The published model's line (what ``verbose`` prints at the end of a fit)."""
        measured = (f"objective {self.objective:.6f}" if self.objective is not None
                    else f"mean loss {self.loss:.6f}")
        return (f"published model: {measured} on the {self.n_rows:,} training rows "
                f"(exact, one evaluation pass), training {self.score_name} {self.score:.4f}"
                + self.baseline_text())

    def problem(self) -> str:
        """What is wrong, in words for both the API and the command line."""
        score = f"training {self.score_name} {self.score:.4f}{self.baseline_text()}"
        if self.classifies:
            start = "" if self.start_objective is None else \
                f" against {self.start_objective:.4g} for the zero model it started from"
            # (BSGD's kernel expansion has no penalty measured: its mean loss, "nan" before)
            ended = (f"its mean loss ended at {self.loss:.4g}" if self.objective is None
                     else f"its objective ended at {self.objective:.4g}")
            return f"{ended}{start}, {score}"
        median = ", nor than the median" if self.constant_loss is not None else ""
        return f"its model is no better than predicting the mean{median}: {score}"

    def spread_text(self) -> str:
        return f"standard deviation {self.target_spread:.3g}" if self.target_spread else ""


def max_epochs_reason(spec: FitSpec, unit: str = "") -> str:
    """Why a fit that ran all its epochs (``unit``: "data passes" for NESVM) stopped."""
    rule = "" if spec.tol is not None else " (tol=None: no stopping rule)"
    return f"max_epochs={spec.max_epochs}{' ' + unit if unit else ''} reached{rule}"


def api_advice(outcome: FitOutcome, estimator: str) -> str:
    """What to do, in Python terms."""
    if outcome.numeric_classes:
        return (f"its {outcome.numeric_classes} classes are numbers: if they are a count or "
                "an amount, not classes, SVMRegressor regresses them; else "
                + _scaling_advice(outcome, estimator))
    return _scaling_advice(outcome, estimator)


def _scaling_advice(outcome: FitOutcome, estimator: str) -> str:
    if outcome.cause == "targets":
        return (f"the targets are in large units ({outcome.spread_text()}): scale=True "
                "scales them in the fit (or use sklearn.compose.TransformedTargetRegressor("
                f"{estimator}(...), transformer=sklearn.preprocessing.StandardScaler()))")
    if outcome.scaled:  # the fit scaled the columns: not the cause
        return ("the problem is hard at this alpha (the columns were scaled): a larger alpha, "
                "more max_epochs, or solver='auto'; or the features do not predict the target")
    # both causes are named: features within [-1, 1] (a9a) fail so too when a few epochs of
    # Pegasos at a small alpha have not settled, and the outcome does not see the features
    return ("the features are probably not scaled: scale=True scales them in the fit (the "
            "default, 'auto', only scales columns above 16 in magnitude), or increase alpha; "
            "or, with scaled features, its steps have not settled yet: more max_epochs or "
            "solver='auto'")


def zero_objective(spec: FitSpec, n_outputs: int) -> float | None:
    """The objective of the zero model for a classifier (every row's margin 0, the same loss
    for every row and output: hinge 1, logistic log 2); None for a regressor."""
    if not spec.classifies:
        return None
    ones = np.ones((1, n_outputs))
    return float(pointwise_losses(spec.loss, np.zeros((1, n_outputs)), ones).sum())


def majority_rate(source: Source, values: np.ndarray | None) -> float | None:
    """The share of the most frequent class (None when the source cannot say cheaply)."""
    if values is None:
        return None
    try:
        counts = class_counts(source, values)
    except (ValueError, TypeError):
        return None
    total = float(counts.sum())
    return float(counts.max()) / total if total > 0 else None


def target_spread(counts: EvalCounts) -> float:
    n = max(counts.n_rows, 1)
    mean = counts.y_sum / n
    return math.sqrt(max(counts.y_sq_sum / n - mean * mean, 0.0))


def measure(engine: Engine, spec: FitSpec, record: FittedModel, source: Source,
            stop_reason: str, *, penalized: bool = True) -> FitOutcome:
    """The outcome of ``record``'s published model on the (raw) training ``source``: one
    evaluation pass through the published feature map. ``penalized=False``: the published
    coefficients are no weight vector whose penalty the fit minimised (BSGD's expansion)."""
    constant = None if spec.classifies or spec.loss_name != "epsilon_insensitive" else \
        engine.reduce(StartingConstant(spec.loss_name), source, [[0]], first,
                      name="starting-constant")
    counts = evaluate(engine, record.coef, record.intercept,
                      map_source(source, record.feature_map), record.class_values, spec.loss,
                      constant=constant)
    loss = counts.mean_loss
    objective = None
    if penalized:
        penalty = penalty_value(spec, record.coef)  # (its alpha, penalty and l1_ratio)
        objective = penalty + loss
    if spec.classifies:
        return FitOutcome(spec.task, stop_reason, objective, loss,
                          zero_objective(spec, int(record.coef.shape[0])), counts.accuracy,
                          majority_rate(source, record.class_values), counts.n_rows,
                          scaled=scaled_features(record),
                          numeric_classes=many_number_classes(record.classes))
    return FitOutcome(spec.task, stop_reason, objective, loss, None, counts.r2, 0.0,
                      counts.n_rows, target_spread(counts), scaled=scaled_features(record),
                      constant_loss=None if constant is None else counts.constant_mean_loss,
                      chance_gain=min(weights_used(record.coef) / max(counts.n_rows, 1),
                                      MAX_CHANCE_GAIN))


def many_number_classes(classes: Any) -> int:
    """How many classes there are when they are numbers, more than ``MANY_NUMBER_CLASSES``
    of them; else 0."""
    values = np.asarray(classes if classes is not None else [])
    return len(values) if values.dtype.kind in "biuf" and len(values) > MANY_NUMBER_CLASSES \
        else 0


def weights_used(coef: np.ndarray) -> int:
    """The features a model gives a weight (d of the chance gain): a hashed text column is
    2^18 columns of which its few categories are used."""
    return int(np.count_nonzero(np.any(np.asarray(coef) != 0, axis=0)))


def scaled_features(record: FittedModel) -> bool:
    scaling = getattr(record, "scaling", None)
    return scaling is not None and scaling.scales_features


def report(spec: FitSpec, outcome: FitOutcome) -> None:
    """The end of a fit, in words: why it stopped and what the published model measures
    (stderr with ``verbose >= 1``; always logged at INFO)."""
    for line in (f"stopped: {outcome.stop_reason}", outcome.summary()):
        logger.info(line)
        if spec.verbose >= 1:
            print(line, file=sys.stderr, flush=True)


def check(spec: FitSpec, outcome: FitOutcome | None) -> None:
    """Warn (:class:`FitFailedWarning`) for a failed fit; warn (``ConvergenceWarning``) for a
    model at or below the constant one whose objective came down (see the module notes).
    None: nothing measured (partial_fit)."""
    if outcome is None:
        return
    who = spec.estimator
    advice = api_advice(outcome, who)
    if outcome.failed:
        warn(
            f"{who} failed to fit: {outcome.problem()}. Likely cause: {advice}. Its model "
            "predicts no better than a constant: do not use it (outcome_.failed is True).",
            FitFailedWarning)
        return
    if outcome.at_or_below_constant:
        warn(
            f"{who} predicts no better than a constant: {outcome.problem()}. If the classes are "
            f"this imbalanced, consider class_weight='balanced'; otherwise {advice}.",
            ConvergenceWarning)
