"""``SVMClassifier(solver="nesvm").fit``: the full-gradient loop wired to the estimator.

NESVM is not a per-row stochastic pass, so it does not go through the epoch driver: each
iteration is one exact data pass (:class:`dsvm.distributed.gradient.GradientOracle`), and the
client applies Eq. 33-35 (:func:`dsvm.solvers.nesvm.nesvm_minimize`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from dsvm.distributed.gradient import GradientOracle
from dsvm.distributed.progress import EpochProgress
from dsvm.distributed.sources import Source
from dsvm.exceptions import ConvergenceWarning
from dsvm.solvers.base import SolverState, n_outputs_for
from dsvm.solvers.nesvm import NesvmProblem, NesvmSettings, nesvm_minimize


def nesvm_problem(est: Any) -> NesvmProblem:
    return NesvmProblem(loss=est.loss, penalty=est.penalty, alpha=float(est.alpha),
                        fit_intercept=bool(est.fit_intercept))


def starting_point(est: Any, init: Any, n_outputs: int, n_features: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """theta^0: ``init`` (a fitted model), else this estimator's model when ``warm_start``,
    else zeros (the paper's w^0 = 0)."""
    model = init
    if model is None and getattr(est, "warm_start", False) and hasattr(est, "coef_"):
        model = est
    if model is None:
        return np.zeros((n_outputs, n_features)), np.zeros(n_outputs)
    coef = np.asarray(getattr(model, "coef_", None), dtype=np.float64)
    intercept = np.asarray(getattr(model, "intercept_", np.zeros(n_outputs)), dtype=np.float64)
    coef = np.atleast_2d(coef)
    intercept = np.atleast_1d(intercept)
    if coef.shape != (n_outputs, n_features) or intercept.shape != (n_outputs,):
        raise ValueError(
            f"The initial model has coef_ of shape {coef.shape} and intercept_ of shape "
            f"{intercept.shape}; this fit needs ({n_outputs}, {n_features}) and ({n_outputs},)."
        )
    return coef.copy(), intercept.copy()


def fit_nesvm(est: Any, engine: Any, source: Source, *, init: Any = None,
              validation: Any = None) -> None:
    """Fit ``est`` (an SVMClassifier with solver="nesvm") on ``source``; sets the fitted
    attributes (``coef_``, ``intercept_``, ``n_iter_`` = passes, ``history_``, ``state_``)."""
    values = np.unique(np.asarray(source.label_values()))
    previous_classes = getattr(est, "classes_", None)
    keep = init is None and est.warm_start and previous_classes is not None
    if len(values) < 2:
        raise ValueError(
            f"The training data ({source.describe()}) has one class only ({values.tolist()}); "
            "a classifier needs at least two."
        )
    if init is not None and hasattr(init, "classes_"):
        values = np.asarray(init.classes_)
    elif keep:
        values = np.asarray(previous_classes)
    coef0, intercept0 = starting_point(est, init, n_outputs_for(len(values)), source.n_features)
    est.classes_ = values
    est.n_features_in_ = source.n_features
    problem = nesvm_problem(est)
    # tol is Algorithm 1's epsilon on the paper's objective, which is ours divided by alpha
    tol = None if est.tol is None else float(est.tol) * float(est.alpha)
    settings = NesvmSettings(mu=float(est.mu), mu0=None if est.mu0 is None else float(est.mu0),
                             tol=tol, max_passes=int(est.max_epochs))
    _warn_if_homotopy_cannot_finish(settings, type(est).__name__)
    oracle = GradientOracle(engine, source, problem, est._classes64, n_tasks=est.n_streams)
    progress = EpochProgress(settings.max_passes, int(est.verbose))
    val_source = None if validation is None else est._validation_source(validation)

    def on_pass(record: dict[str, Any], coef: np.ndarray, intercept: np.ndarray) -> None:
        record["val_accuracy"] = None
        if val_source is not None:
            # the model that fit would return now: the solver's best measured point
            counts = engine.evaluate(coef, intercept, val_source,
                                     est._classes64, "hinge")
            record["val_accuracy"] = counts.n_correct / max(counts.n_rows, 1)
        progress.update(record)

    try:
        result = nesvm_minimize(oracle, problem, settings, coef0, intercept0, on_pass=on_pass)
    finally:
        progress.close()
    dtype = source.dtype
    est.state_ = SolverState(coef=result.coef.astype(dtype), intercept=result.intercept.astype(dtype),
                             t=float(result.n_passes))
    est.history_ = result.history
    est.n_iter_ = result.n_passes
    est._publish()
    if est.tol is not None and not result.converged:
        warnings.warn(
            f"{type(est).__name__}(solver='nesvm') used max_epochs={est.max_epochs} data passes "
            f"before |F_mu(w^k+1) - F_mu(w^k)| fell below tol={est.tol}; consider more passes.",
            ConvergenceWarning, stacklevel=3,
        )


def _warn_if_homotopy_cannot_finish(settings: NesvmSettings, who: str) -> None:
    """Eq. 44's mu_t = mu0 / (t + 1) takes about mu0 / mu stages and each stage takes at least
    one pass: with fewer passes than stages the fit ends before it reaches the target mu."""
    stages = len(settings.schedule())
    if stages > settings.max_passes:
        warnings.warn(
            f"{who}(solver='nesvm', mu0={settings.mu0}, mu={settings.mu}): homotopy's schedule "
            f"mu0/(t+1) has {stages} stages of at least one pass each, more than "
            f"max_epochs={settings.max_passes}; the fit will stop before reaching mu. Use a "
            "smaller mu0 or more passes (with the default steps plain NESVM, mu0=None, "
            "measured as fast or faster; see dsvm/solvers/nesvm.py).",
            ConvergenceWarning, stacklevel=4,
        )
