"""``SVMClassifierCV`` and ``SVMRegressorCV``: ``alpha`` (and optionally ``l1_ratio``, the loss
and the class weights) chosen from a grid trained in one read of the data per epoch (named as
scikit-learn's ``LogisticRegressionCV`` and ``RidgeCV``).

Every candidate trains in the same pass (their states stacked, :mod:`dsvm.solvers.grid`), is
scored on rows held out of every chunk, in the same pass, and stops on its own when it stops
improving there; the best is published as this estimator's model without training it again
(:mod:`dsvm.training.grid` says how, and why rows of every chunk rather than whole chunks are
held out: a label- or time-sorted store is scored as well as a shuffled one). The cost of a
grid of K alphas is one fit's reading of the data plus one pass to score the final models,
and K times the arithmetic of a pass ((k + 1) K times with ``cv=k``).

They take every parameter of :class:`~dsvm.SVMClassifier` / :class:`~dsvm.SVMRegressor`
except ``alpha``, and:

alphas : "auto" or array-like of float, default="auto"
    The candidates. ``"auto"``: ``n_alphas`` values log-spaced over 1e-3 .. 1e3 times
    1/n_samples (1/n is LIBLINEAR's C = 1; the grid covers C from 1e-3 to 1e3).
n_alphas : int, default=8
    Candidates of ``alphas="auto"``. Values must be in the range [1, inf).
cv_fraction : float, default=0.1
    Expected share of every chunk's rows held out for scoring (each row decided by a hash
    of the seed, its chunk and its position: the same rows on any cluster and resume).
    Values must be in the range (0.0, 1.0). Not used with ``cv=k``.
cv : int or None, default=None
    The number of folds, as ``LogisticRegressionCV(cv=...)``'s, but folds of rows: every row
    is in one of ``cv`` folds by the same hash (a share of every chunk in each fold, so a
    sorted store is scored fairly). For each fold the candidates train on the other rows and
    are scored on it, in the same read per epoch; a candidate's score (and its early
    stopping) is the mean over the folds. The published model of the chosen alpha is the one
    trained on all the rows, alongside: (cv + 1) x K models train, none twice. None: the
    ``cv_fraction`` share of held-out rows, the published model trained on the other rows.
    Values must be in the range [2, inf).
l1_ratios : array-like of float or None, default=None
    A grid axis, as ``LogisticRegressionCV(l1_ratios=...)``: the candidates are every alpha
    with every ratio (values in [0.0, 1.0]), in the same pass. Needs ``penalty="elasticnet"``
    and the SGD solver (FOLOS prox steps); ``l1_ratio`` is then not used. None: one ratio.
losses : list of str or None, default=None
    A grid axis of losses (among those of ``loss``: e.g. ``["hinge", "squared_hinge",
    "logistic"]``; the regressor's ``["epsilon_insensitive", "squared"]``); ``loss`` is then
    not used. None: one loss.
class_weights : list or None, default=None
    (SVMClassifierCV only.) A grid axis of class weights, each as ``class_weight`` takes it:
    e.g. ``[None, "balanced", {0: 1, 1: 5}]``; ``class_weight`` is then not used.

The candidates are the product of the axes given, alpha varying fastest (then ``l1_ratio``,
the loss, the class weight). All train in the same pass: the losses and class weights change
a step's gradient, never whether it is taken, so every candidate shares the step counters
(:mod:`dsvm.solvers.grid`); each candidate is the single fit of its parameters. Every
candidate is scored on the same held-out measure, accuracy (R^2 for the regressor), whatever
its loss or class weights: a class-weighted candidate is scored on plain accuracy, as
scikit-learn's ``GridSearchCV`` and ``LogisticRegressionCV`` score with the estimator's
``score`` (see :mod:`dsvm.training.grid_axes`). The cost grows with the number of candidates
in arithmetic and memory (the memory check counts them all), not in reads of the data.

``solver="auto"`` trains the grid with averaged SGD (``"pegasos"`` is accepted too).
``solver="cocoa"`` (classifier only) trains the K alphas in one read per epoch with K dual
vectors per row, not a warm-started path, which would read the data once per alpha
(:mod:`dsvm.solvers.cocoa_grid`): each candidate stops on its own relative duality gap
(``tol``) or held-out objective, and ``history_`` has every candidate's duality gap per epoch
(``grid_duality_gaps``, ``grid_relative_gaps``); with ``checkpoint=`` the duals are kept
beside it for ``resume=True``. It refuses ``cv=k``, the other axes and ``rounds_per_epoch >
1`` (:mod:`dsvm.training.cocoa_grid`). The other solvers cannot share a pass and are
refused.

Fitted attributes, besides the predicting ones of the base class (those of the best
candidate, in raw units): ``alpha_``, ``best_index_``, ``best_score_`` (held-out accuracy, or
R^2 for the regressor; the mean over the folds), ``cv_results_`` (``param_alpha``,
``split0_test_score`` .. ``split{cv-1}_test_score``, ``mean_test_score``,
``std_test_score``, ``rank_test_score``, ``test_score_by_epoch`` and
``test_objective_by_epoch`` of shape (n_alphas, n_epochs), means over the folds,
``n_epochs`` each candidate trained), ``alphas_`` and
``best_estimator_`` (a plain fitted estimator of the best alpha: what :meth:`save` writes,
with the candidates' table in the file's metadata). With other axes: ``cv_results_`` also has
``param_l1_ratio``, ``param_loss``, ``param_class_weight`` (those given; every ``param_*``
column and ``params``, the list of each candidate's parameters, has one entry per candidate),
and ``l1_ratio_``, ``loss_``, ``class_weight_`` are the chosen values (the fixed parameter
where it is not an axis; ``l1_ratio_`` None unless ``penalty="elasticnet"``), ``best_params_``
the chosen candidate's parameters. ``plot_path()`` plots the held-out score against alpha,
one line per combination of the other axes.

``kernel="rff"``/``"nystroem"``: one map, fitted once on the rows (unsupervised: no label is
read), and the K linear models on it.
"""

from __future__ import annotations

import inspect
import numbers
import os
from typing import Any, ClassVar

import numpy as np

from dsvm._validation import AnyOf, InstanceOf, Interval, NoneOr, Options
from dsvm.estimators import params, persistence
from dsvm.estimators.base import SVMBase
from dsvm.estimators.classifier import SVMClassifier
from dsvm.estimators.regressor import SVMRegressor
from dsvm.training import FitSpec, FittedModel
from dsvm.training.cocoa_grid import fit_cocoa_grid
from dsvm.training.grid import GridReport, fit_grid
from dsvm.training.grid_axes import AXES

_GRID_PARAMS: dict[str, Any] = {
    "alphas": AnyOf((Options(("auto",)), InstanceOf((list, tuple, np.ndarray), "array-like")),
                    "'auto' or an array-like of positive floats"),
    "n_alphas": Interval(numbers.Integral, 1, None, "left"),
    "cv_fraction": Interval(numbers.Real, 0.0, 1.0, "neither"),
    "cv": NoneOr(Interval(numbers.Integral, 2, None, "left")),
}
_LIST = InstanceOf((list, tuple, np.ndarray), "array-like")
_AXIS_PARAMS: dict[str, Any] = {"l1_ratios": NoneOr(_LIST), "losses": NoneOr(_LIST),
                                "class_weights": NoneOr(_LIST)}
_GRID_DEFAULTS = {"alphas": "auto", "n_alphas": 8, "cv_fraction": 0.1, "cv": None}
# the grid axes each estimator takes (class_weights: the classifier's only)
_CLASSIFIER_AXES = {"l1_ratios": None, "losses": None, "class_weights": None}
_REGRESSOR_AXES = {"l1_ratios": None, "losses": None}


def _grid_init(base: type, axes: dict[str, Any]) -> Any:
    """An ``__init__`` taking ``base``'s keyword parameters except ``alpha`` plus the grid's
    (``axes``: the axes it takes besides alpha), with the signature scikit-learn's
    ``get_params`` reads (so that a parameter added to the base estimator is one of the CV
    estimator's with no edit here)."""
    inherited = [p for name, p in inspect.signature(base).parameters.items()
                 if name != "alpha"]
    grid = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
            for name, default in {**_GRID_DEFAULTS, **axes}.items()]
    accepted = grid + inherited

    def __init__(self: Any, **kwargs: Any) -> None:
        for p in accepted:
            setattr(self, p.name, kwargs.pop(p.name, p.default))
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument {next(iter(kwargs))!r}")

    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *accepted])
    return __init__


class _GridSearch:
    """What the two CV estimators add to their base: the grid's fit and attributes."""

    _plain: ClassVar[type]  # the estimator of one alpha (best_estimator_, the saved model)
    _axes: ClassVar[dict[str, Any]]  # the grid axes it takes besides alpha (their defaults)

    def _plain_params(self) -> dict[str, Any]:
        """The parameters of the plain estimator (those of the grid left out)."""
        values = self.get_params(deep=False)  # type: ignore[attr-defined]
        for name in (*_GRID_DEFAULTS, *self._axes):
            values.pop(name)
        return values  # type: ignore[no-any-return]

    def _check_axes(self) -> None:
        """Each value of an axis as the parameter of one fit would take it (``losses`` as
        ``loss``, ...), named as scikit-learn names a parameter in its message."""
        constraints = self._parameter_constraints  # type: ignore[attr-defined]
        for many, one in AXES.items():
            values = getattr(self, many, None)
            if values is None:
                continue
            bad = [v for v in values if not constraints[one].is_satisfied_by(
                v.item() if isinstance(v, np.generic) else v)]
            if bad or len(values) == 0:
                raise ValueError(
                    f"The {many!r} parameter of {type(self).__name__} must list values of "
                    f"'{one}' ({constraints[one].describe()}). Got {bad[0] if bad else values!r} "
                    "instead.")

    def _spec(self) -> FitSpec:
        self._check_axes()
        values = self._plain_params()
        return FitSpec.from_params(type(self).__name__, self._task,  # type: ignore[attr-defined]
                                   {**values, "alpha": 1.0})  # (each candidate: its own)

    def fit(self, X: Any, y: Any = None, *, sample_weight: Any = None,
            resume: bool = False) -> Any:
        """Train every candidate in one read of the data per epoch, score them on the
        rows held out of every chunk (or k folds), publish the best. ``X`` as for the base
        estimator's ``fit``; ``resume=True`` continues from the ``checkpoint`` file when it
        exists (the same alphas, ``cv_fraction`` and ``cv``), and gives the uninterrupted
        grid's result."""
        self.__dict__.pop("best_estimator_", None)
        SVMBase._fit(self, X, y, sample_weight, None, None, resume)  # type: ignore[arg-type]
        # what the fit learnt of a DataFrame's columns, which the chosen model needs to
        # predict one (and its model file, which save writes from it): without them a saved
        # CV model of a frame with a text column refused that frame ("trained on numbers")
        for attr in _OF_THE_INPUT:
            if hasattr(self, attr):
                setattr(self.best_estimator_, attr, getattr(self, attr))
        return self

    def _train(self, spec: FitSpec, X: Any, y: Any, **fit_args: Any) -> FittedModel:
        """The base class's training call, here the grid's (:func:`fit_grid`)."""
        if fit_args.get("warm") is not None:
            raise ValueError("warm_start=True is not supported by the CV estimators: "
                             "every fit trains the whole grid.")
        axes = {many: getattr(self, many) for many in self._axes}
        # CoCoA+ keeps K dual vectors per row (dsvm.training.cocoa_grid); the others stack
        train = fit_cocoa_grid if spec.solver == "cocoa" else fit_grid
        record, report = train(spec, X, y, sample_weight=fit_args.get("sample_weight"),
                                  alphas=self.alphas, n_alphas=self.n_alphas,  # type: ignore
                                  cv_fraction=self.cv_fraction,  # type: ignore[attr-defined]
                                  cv=self.cv,  # type: ignore[attr-defined]
                                  resume=bool(fit_args.get("resume")), axes=axes)
        self._publish_grid(report, record)
        return record

    def _publish_grid(self, report: GridReport, record: FittedModel) -> None:
        self.cv_results_ = report.cv_results()
        self.alphas_ = report.the_axes.alphas.copy()
        self.best_index_ = report.best_index
        self.best_params_ = dict(self.cv_results_["params"][self.best_index_])
        self.alpha_ = float(self.best_params_["alpha"])
        self.best_score_ = float(report.final_scores[self.best_index_])
        self.grid_table_ = report.table()
        params = {**self._plain_params(), **self.best_params_}
        self.loss_ = params["loss"]
        self.l1_ratio_ = params["l1_ratio"] if params["penalty"] == "elasticnet" else None
        if "class_weight" in params:
            self.class_weight_ = params["class_weight"]
        best = self._plain(**params)
        best._publish(record)
        self.best_estimator_ = best

    def _penalty(self) -> float:
        """The chosen model's regulariser (at ``alpha_``: this estimator has no ``alpha``)."""
        self._check_fitted()  # type: ignore[attr-defined]
        return float(self.best_estimator_._penalty())

    def plot_path(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the held-out score against alpha, one line per combination of the other axes
        (needs matplotlib); returns the Axes."""
        from dsvm.estimators.plotting import plot_path

        return plot_path(self, ax=ax, **kwargs)

    @property
    def partial_fit(self) -> Any:  # type: ignore[override]
        # a property that raises AttributeError: hasattr(cv, "partial_fit") is False, as for
        # scikit-learn's LogisticRegressionCV (its checks call partial_fit where it exists)
        raise AttributeError(f"{type(self).__name__} has no partial_fit: the grid trains in "
                             "fit; continue the chosen model with best_estimator_.partial_fit.")

    def save(self, path: str | os.PathLike, storage_options: dict | None = None, *,
             overwrite: bool = True) -> None:
        """Save the best model as a plain model file (loadable by :func:`dsvm.load` and
        ``dsvm predict``), with the table of candidates in its metadata (``dsvm info``);
        ``overwrite`` as in :meth:`SVMClassifier.save`."""
        self._check_fitted()  # type: ignore[attr-defined]
        persistence.save(self.best_estimator_, path, storage_options,
                         extra_meta={"grid": self.grid_table_}, overwrite=overwrite)


# the fitted attributes SVMBase._fit sets from the input itself, not from the grid's record
_OF_THE_INPUT = ("hashing_", "fill_values_", "feature_names_in_", "label_column_")


# (fit takes no validation=, init= or resume=: the grid scores its own held-out rows)
class SVMClassifierCV(_GridSearch, SVMClassifier):  # type: ignore[misc]
    """:class:`~dsvm.SVMClassifier` with ``alpha`` chosen from a grid trained in one pass (see
    :mod:`dsvm.estimators.cv` for the parameters and fitted attributes)."""

    _plain = SVMClassifier
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **{k: v for k, v in params.CLASSIFIER.items() if k != "alpha"}, **_GRID_PARAMS,
        **_AXIS_PARAMS}
    _axes = _CLASSIFIER_AXES
    __init__ = _grid_init(SVMClassifier, _CLASSIFIER_AXES)


class SVMRegressorCV(_GridSearch, SVMRegressor):  # type: ignore[misc]
    """:class:`~dsvm.SVMRegressor` with ``alpha`` chosen from a grid trained in one pass (see
    :mod:`dsvm.estimators.cv`)."""

    _plain = SVMRegressor
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **{k: v for k, v in params.REGRESSOR.items() if k != "alpha"}, **_GRID_PARAMS,
        **{k: v for k, v in _AXIS_PARAMS.items() if k in _REGRESSOR_AXES}}
    _axes = _REGRESSOR_AXES
    __init__ = _grid_init(SVMRegressor, _REGRESSOR_AXES)
