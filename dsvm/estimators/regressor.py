"""``SVMRegressor``: linear support vector regression by the same distributed stochastic passes.

It shares the classifier's machinery (:class:`~dsvm.estimators.base.SVMBase`: the training
layer, the model format, decision values) and differs where regression differs: the kernels read
the float targets themselves instead of class codes, there is one output, ``predict`` is the
decision value and ``score`` is R^2.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np
from sklearn.base import RegressorMixin

from dsvm.estimators import params
from dsvm.estimators.base import SVMBase

REGRESSION_SOLVERS = params.REGRESSION_SOLVERS
REGRESSION_LOSSES = params.REGRESSION_LOSSES


class SVMRegressor(RegressorMixin, SVMBase):
    """Linear SVR: minimises ``penalty(w) + mean_i loss(y_i, w.x_i + b)`` by stochastic passes.

    Parameters
    ----------
    solver : {"auto", "sgd", "pegasos", "asset", "asset*"}, default="auto"
        ``"auto"``: ``"sgd"`` (:mod:`dsvm.training.auto_solver`; the choice is ``solver_``).
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
        are. ``gamma="scale"`` (the default): 1 / (n_features * X.var()).
    scale : "auto" or bool, default="auto"
        As for :class:`SVMClassifier`; a target larger than 16 in magnitude is also centred
        and divided by its standard deviation ("auto"), ``epsilon`` with it, and folded back
        (a kernel regressor too: its map keeps the columns' scaling, ``scaling_`` the
        target's).
    fit_intercept, max_epochs, tol, n_iter_no_change, early_stopping, validation_fraction,
    batch_size, average, rho, n_streams, shuffle_window, chunk_rows, n_workers, random_state,
    verbose, client, checkpoint
        As in :class:`dsvm.SVMClassifier` (``fit(..., resume=True)`` continues from
        ``checkpoint``).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    n_features_in_, n_iter_, t_, history_
        As in :class:`dsvm.SVMClassifier` (``history_[i]["val_accuracy"]`` holds the
        validation R^2).
    outcome_, stop_reason_
        The published model measured once after ``fit`` (objective, training R^2, the targets'
        spread) and why the fit stopped. A fit whose training R^2 is at most 0 (no better than
        predicting the mean; targets in large units, unscaled features) warns
        ``FitFailedWarning`` naming the cause and the fix (:mod:`dsvm.training.outcome`),
        unless, with the epsilon-insensitive loss, its loss is below that of predicting the
        targets' median (the centre that loss fits: on skewed targets, below the mean).

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

    _task: ClassVar[str] = "regression"
    _parameter_constraints: ClassVar[dict[str, Any]] = params.REGRESSOR

    def __init__(
        self,
        *,
        solver: str = "auto",
        loss: str = "epsilon_insensitive",
        alpha: float = 1e-4,
        penalty: str = "l2",
        l1_ratio: float = 0.15,
        epsilon: float = 0.0,
        kernel: Any = "linear",
        n_components: int = 1024,
        gamma: float | str = "scale",
        fit_intercept: bool = True,
        scale: str | bool = "auto",
        max_epochs: int = 10,
        tol: float | None = 1e-3,
        n_iter_no_change: int = 3,
        early_stopping: bool = False,
        validation_fraction: float = 0.1,
        batch_size: int = 1,
        average: bool = True,
        rho: float = 0.5,
        n_streams: int | None = None,
        chunk_rows: int = 65536,
        shuffle_window: int | None = None,
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
        self.scale = scale
        self.max_epochs = max_epochs
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.batch_size = batch_size
        self.average = average
        self.rho = rho
        self.n_streams = n_streams
        self.chunk_rows = chunk_rows
        self.shuffle_window = shuffle_window
        self.n_workers = n_workers
        self.random_state = random_state
        self.verbose = verbose
        self.client = client
        self.checkpoint = checkpoint

    def fit(self, X: Any, y: Any = None, *, sample_weight: Any = None, validation: Any = None,
            resume: bool = False) -> SVMRegressor:
        """Train from scratch for up to ``max_epochs`` epochs (see :meth:`SVMClassifier.fit`;
        ``history_[i]["val_accuracy"]`` holds the validation R^2)."""
        self._fit(X, y, sample_weight, validation, None, resume)
        return self

    def partial_fit(self, X: Any, y: Any = None, *, sample_weight: Any = None,
                    validation: Any = None) -> SVMRegressor:
        """One epoch over the data, continuing the schedule and state of earlier calls."""
        self._partial_fit(X, y, None, sample_weight, validation)
        return self

    def predict(self, X: Any) -> Any:
        """Predicted targets (n_samples,); dask input gives a lazy dask array, a dataset path a
        NumPy array."""
        return self._decision(X)

    def score(self, X: Any, y: Any = None, sample_weight: Any = None) -> float:
        """R^2; ``X`` may be a dataset path (then ``y`` is None) or arrays."""
        from sklearn.metrics import r2_score

        return self._score_with(r2_score, "r2", X, y, sample_weight)

    def evaluate(self, X: Any, y: Any = None) -> dict[str, float]:
        """R^2, mean squared error, mean loss and objective (this model's loss and penalty)."""
        c = self._eval_counts(X, y)
        return {"r2": c.r2, "mse": c.sq_err / max(c.n_rows, 1), "loss": c.mean_loss,
                "objective": self._penalty() + c.mean_loss / self._target_units(),
                "n_samples": c.n_rows}

    def _target_units(self) -> float:
        """How much larger the loss is in the target's units than in those the fit scaled
        it to (1: the target was not scaled): the objective is the fit's, in its units."""
        scaling = getattr(self, "scaling_", None)
        if scaling is None or not scaling.scales_target:
            return 1.0
        return float(scaling.y_scale) ** (2 if self.loss == "squared" else 1)
