"""``SVMRegressor``: linear support vector regression by the same distributed stochastic passes.

It shares the classifier's machinery (sources, engines, the epoch driver, the combine, the model
format) and differs where regression differs: the kernels read the float targets themselves
instead of class codes (``classes=None`` all the way down, see :mod:`dsvm.solvers.targets`),
there is one output, ``predict`` is the decision value and ``score`` is R^2.
"""

from __future__ import annotations

import numbers
import os
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from dsvm._validation import AnyOf, InstanceOf, Interval, NoneOr, Options
from dsvm.data.order import draw_seed
from dsvm.distributed.sources import DatasetSource, Source
from dsvm import _kernel_estimator as kern
from dsvm.distributed.feature_maps import map_source
from dsvm.estimators import SVMClassifier

REGRESSION_SOLVERS = ("sgd", "pegasos", "asset", "asset*")
REGRESSION_LOSSES = ("epsilon_insensitive", "squared")


class SVMRegressor(RegressorMixin, BaseEstimator):
    """Linear SVR: minimises ``penalty(w) + mean_i loss(y_i, w.x_i + b)`` by stochastic passes.

    Parameters
    ----------
    solver : {"sgd", "pegasos", "asset", "asset*"}, default="sgd"
        ``"sgd"``: averaged SGD (Bottou's schedule). ``"pegasos"``: step 1/(alpha t), no
        projection (the ball needs the targets' range). ``"asset"``/``"asset*"``: ASSET with the
        epsilon-insensitive subgradients of its Table 1 (:mod:`dsvm.solvers.asset`).
    loss : {"epsilon_insensitive", "squared"}, default="epsilon_insensitive"
        ``max(0, |y - p| - epsilon)`` (LinearSVR's loss) or ``(y - p)^2``.
    alpha : float, default=1e-4
        Regularisation strength lambda (``alpha = 1 / (n C)`` for LinearSVR's C). Values must
        be in the range (0, inf).
    penalty : {"l2", "l1", "elasticnet"}, default="l2"
        Non-L2 penalties with solver ``"sgd"`` only (FOLOS prox steps).
    l1_ratio : float, default=0.15
    epsilon : float, default=0.0
        Half-width of the insensitive tube. Values must be in the range [0, inf).
    kernel, n_components, gamma
        A Gaussian-kernel feature map ("rff" or "nystroem", or a :class:`dsvm.RFF` /
        :class:`dsvm.Nystroem`) applied to each chunk on the worker that reads it, as in
        :class:`dsvm.SVMClassifier`; ``"linear"`` (the default) trains on the features as they
        are.
    fit_intercept, max_epochs, tol, n_iter_no_change, batch_size, average, rho, n_streams,
    chunk_rows, n_workers, random_state, verbose, client, checkpoint
        As in :class:`dsvm.SVMClassifier` (``fit(..., resume=True)`` continues from
        ``checkpoint``).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    n_features_in_, n_iter_, t_, history_
        As in :class:`dsvm.SVMClassifier` (``history_[i]["val_accuracy"]`` holds the
        validation R^2).

    Examples
    --------
    >>> import numpy as np
    >>> from dsvm import SVMRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)); y = X @ [1.0, -2.0, 0.5] + 0.3
    >>> reg = SVMRegressor(alpha=1e-5, max_epochs=20, random_state=0).fit(X, y)
    >>> float(reg.score(X, y)) > 0.99
    True
    """

    _parameter_constraints: dict[str, Any] = {
        "solver": Options(REGRESSION_SOLVERS),
        "loss": Options(REGRESSION_LOSSES),
        "alpha": Interval(numbers.Real, 0.0, None, "neither"),
        "penalty": Options(("l2", "l1", "elasticnet")),
        "l1_ratio": Interval(numbers.Real, 0.0, 1.0, "both"),
        "epsilon": Interval(numbers.Real, 0.0, None, "left"),
        "kernel": SVMClassifier._parameter_constraints["kernel"],
        "n_components": Interval(numbers.Integral, 1, None, "left"),
        "gamma": Interval(numbers.Real, 0.0, None, "neither"),
        "fit_intercept": InstanceOf((bool,), "a bool"),
        "max_epochs": Interval(numbers.Integral, 1, None, "left"),
        "tol": NoneOr(Interval(numbers.Real, 0.0, None, "left")),
        "n_iter_no_change": Interval(numbers.Integral, 1, None, "left"),
        "batch_size": Interval(numbers.Integral, 1, None, "left"),
        "average": InstanceOf((bool,), "a bool"),
        "rho": Interval(numbers.Real, 0.0, 1.0, "left"),
        "n_streams": NoneOr(Interval(numbers.Integral, 1, None, "left")),
        "chunk_rows": Interval(numbers.Integral, 1, None, "left"),
        "n_workers": NoneOr(Interval(numbers.Integral, 1, None, "left")),
        "random_state": AnyOf(
            (NoneOr(Interval(numbers.Integral, 0, None, "left")),
             InstanceOf((np.random.Generator,), "a Generator")),
            "an int in the range [0, inf), a numpy Generator or None",
        ),
        "verbose": Interval(numbers.Integral, 0, None, "left"),
        "checkpoint": SVMClassifier._parameter_constraints["checkpoint"],
    }

    def __init__(
        self,
        *,
        solver: str = "sgd",
        loss: str = "epsilon_insensitive",
        alpha: float = 1e-4,
        penalty: str = "l2",
        l1_ratio: float = 0.15,
        epsilon: float = 0.0,
        kernel: Any = "linear",
        n_components: int = 1024,
        gamma: float = 1.0,
        fit_intercept: bool = True,
        max_epochs: int = 10,
        tol: float | None = 1e-3,
        n_iter_no_change: int = 3,
        batch_size: int = 1,
        average: bool = True,
        rho: float = 0.5,
        n_streams: int | None = None,
        chunk_rows: int = 65536,
        n_workers: int | None = None,
        random_state: int | np.random.Generator | None = None,
        verbose: int = 0,
        client: Any = None,
        checkpoint: str | os.PathLike | None = None,
    ) -> None:
        self.solver = solver
        self.loss = loss
        self.alpha = alpha
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.epsilon = epsilon
        self.kernel = kernel
        self.n_components = n_components
        self.gamma = gamma
        self.fit_intercept = fit_intercept
        self.max_epochs = max_epochs
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.batch_size = batch_size
        self.average = average
        self.rho = rho
        self.n_streams = n_streams
        self.chunk_rows = chunk_rows
        self.n_workers = n_workers
        self.random_state = random_state
        self.verbose = verbose
        self.client = client
        self.checkpoint = checkpoint

    # The classifier's machinery, shared as is: parameters, sources, engines, the epoch loop,
    # publishing the model, decision values. (Plain functions borrowed as methods: no
    # ClassifierMixin in this class's ancestry, so scikit-learn sees a regressor.)
    _validate = SVMClassifier._validate
    _make_solver = SVMClassifier._make_solver
    _kernel_source = SVMClassifier._kernel_source
    _make_combiner = SVMClassifier._make_combiner
    _predictor = SVMClassifier._predictor
    _map_input = SVMClassifier._map_input
    _source = SVMClassifier._source
    _engine = SVMClassifier._engine
    _predict_engine = SVMClassifier._predict_engine
    fit = SVMClassifier.fit
    _check_features = SVMClassifier._check_features
    _run = SVMClassifier._run
    _validation_source = SVMClassifier._validation_source
    _loss_spec = SVMClassifier._loss_spec
    _penalty = SVMClassifier._penalty
    _publish = SVMClassifier._publish
    _check_fitted = SVMClassifier._check_fitted
    decision_function = SVMClassifier.decision_function
    write_predictions = SVMClassifier.write_predictions
    _score_with = SVMClassifier._score_with
    _eval_counts = SVMClassifier._eval_counts
    __getstate__ = SVMClassifier.__getstate__
    _more_tags = SVMClassifier._more_tags
    _resume_checkpoint = SVMClassifier._resume_checkpoint
    _restore = SVMClassifier._restore
    _epoch_callback = SVMClassifier._epoch_callback
    _repr_html_ = SVMClassifier._repr_html_
    _repr_mimebundle_ = SVMClassifier._repr_mimebundle_
    plot_history = SVMClassifier.plot_history

    def partial_fit(
        self, X: Any, y: Any = None, *, sample_weight: Any = None, validation: Any = None
    ) -> SVMRegressor:
        """One epoch over the data, continuing the schedule and state of earlier calls."""
        SVMClassifier.partial_fit(self, X, y, sample_weight=sample_weight,  # type: ignore[arg-type]
                                  validation=validation)
        return self

    _classes64 = None  # no classes: the kernels read the targets (solvers.targets)

    def _start(self, engine: Any, source: Source, classes: Any, seed: int | None = None) -> None:
        if isinstance(source, DatasetSource) and source.dataset.classes is not None:
            n_values = len(source.dataset.classes)
            if n_values <= 2:
                raise ValueError(
                    f"The training data ({source.describe()}) has {n_values} distinct target "
                    f"values ({list(source.dataset.classes)}): a classification dataset? "
                    "Use SVMClassifier (dsvm train --task classification)."
                )
        self.n_features_in_ = getattr(source, "n_input_features", source.n_features)
        self.n_samples_fit_ = source.n_samples
        self.seed_ = draw_seed(self.random_state) if seed is None else int(seed)
        self.n_streams_ = int(self.n_streams or engine.n_workers)
        solver = self._make_solver()
        state = solver.init_state(source.n_features, 1, source.dtype)
        self.state_ = engine.calibrate(solver, state, source, None, chunk=0)
        self.n_iter_ = 0
        self.history_: list[dict[str, Any]] = []

    def _validation_score(self, engine: Any, source: Source, state: Any) -> float:
        coef, intercept, fmap = self._predictor(state)
        return r2_of(engine.evaluate(coef, intercept, map_source(source, fmap), None,
                                     self._loss_spec()))

    # -- prediction ------------------------------------------------------------------------------
    def predict(self, X: Any) -> Any:
        """Predicted targets (n_samples,); dask input gives a lazy dask array."""
        return self.decision_function(X)

    def _prediction_labels(self) -> None:
        """A regressor's predictions are its decision values (write_predictions)."""
        return None

    def score(self, X: Any, y: Any = None, sample_weight: Any = None) -> float:
        """R^2; ``X`` may be a dataset path (then ``y`` is None) or arrays."""
        from sklearn.metrics import r2_score

        return self._score_with(r2_score, "r2", X, y, sample_weight)

    def evaluate(self, X: Any, y: Any = None) -> dict[str, float]:
        """R^2, mean squared error, mean loss and objective (this model's loss and penalty)."""
        c, mean_loss = self._eval_counts(X, y)
        return {
            "r2": r2_of(c),
            "mse": c.sq_err / max(c.n_rows, 1),
            "loss": mean_loss,
            "objective": self._penalty() + mean_loss,
            "n_samples": c.n_rows,
        }

    # -- persistence: the classifier's file format, with an empty ``classes`` -------------------
    save = SVMClassifier.save


def r2_of(counts: Any) -> float:
    """R^2 = 1 - SS_res / SS_tot from additive evaluation sums (NaN for constant targets)."""
    n = max(counts.n_rows, 1)
    ss_tot = counts.y_sq_sum - counts.y_sum * counts.y_sum / n
    if ss_tot <= 0.0:
        return float("nan")
    return 1.0 - counts.sq_err / ss_tot


def regressor_from_saved(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> SVMRegressor:
    """Rebuild a fitted regressor from :func:`dsvm.model.load_model_arrays` output."""
    from dsvm.exceptions import ModelFormatError

    est = SVMRegressor(**meta["params"])
    est.coef_ = arrays["coef"]
    est.intercept_ = arrays["intercept"]
    est.n_features_in_ = int(meta["n_features_in"])
    est.n_iter_ = int(meta["n_iter"])
    est.t_ = float(meta["t"])
    est.history_ = list(meta.get("history", []))
    est.feature_map_ = kern.map_from_saved(arrays, meta.get("feature_map"))
    n_inputs = est.n_features_in_ if est.feature_map_ is None else est.feature_map_.n_output_features
    if est.coef_.shape != (1, n_inputs):
        raise ModelFormatError(
            f"Model file is inconsistent: coef has shape {est.coef_.shape} but a regressor "
            f"with {n_inputs} (mapped) input features needs (1, {n_inputs})."
        )
    return est
