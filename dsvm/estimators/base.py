"""What every dsvm estimator shares: parameters to a fit spec, fitting through the training
layer, publishing the fitted attributes, decision values, evaluation, saving, display.

The subclasses (:class:`~dsvm.estimators.classifier.SVMClassifier`,
:class:`~dsvm.estimators.regressor.SVMRegressor`) add their parameters, their constraints and
what differs between classification and regression (labels, ``predict``, ``score``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, clone

from dsvm._validation import validate_params
from dsvm.estimators import persistence
from dsvm.estimators.param_names import accepted_parameters, unknown_parameter_error
from dsvm.estimators.validation import (
    check_fit_input,
    check_partial_fit_classes,
    check_predict_input,
    labels_to_check,
    refuse_rows_without_columns,
)
from dsvm.training import FitSpec, FittedModel, predicting, scoring
from dsvm.training import trainer as _training
from dsvm.training.cluster import compute
from dsvm.training.evaluation import check_same_columns
from dsvm.training.inputs import (
    check_hashing,
    check_text_columns,
    fill_values_of,
    frame_and_label,
    frame_and_weight,
    frame_hashing,
    hashed_frame_names,
    hashed_rows,
    hashing_of,
    is_dask_collection,
    is_dask_frame,
    is_dataset_ref,
    is_pandas_frame,
    is_parquet_ref,
    label_column_of,
    native_labels,
    source_of,
    with_number_objects,
)
from dsvm.training.kernel_maps import check_kernel_solver
from dsvm.training.outcome import check as check_outcome
from dsvm.training.predicting import LinearModel, StoreRequest
from dsvm.training.scoring import EvalCounts

_FITTED = ("coef_", "intercept_", "classes_", "state_", "history_", "n_iter_", "t_",
           "feature_map_", "n_features_in_", "feature_names_in_", "hashing_", "fill_values_",
           "label_column_",
           "_fit_record",
           "outcome_", "stop_reason_", "solver_", "scaling_")


# scikit-learn's checks that a stochastic estimator cannot pass, each with its reason (given to
# sklearn.utils.estimator_checks' expected_failed_checks: declared, never skipped silently).
# A row of weight 2 is one step of twice the size where a repeated row is two steps at two
# different points of the random row order: equal only in expectation, never to the 1e-7 the
# check asks (scikit-learn's own SGDClassifier declares the same).
_WEIGHT_IS_NOT_REPETITION = ("stochastic passes: a weight of 2 is one step of double size, a "
                             "repeated row two steps at other points of the row order")
EXPECTED_FAILED_CHECKS = {
    "check_sample_weight_equivalence_on_dense_data": _WEIGHT_IS_NOT_REPETITION,
    "check_sample_weight_equivalence_on_sparse_data": _WEIGHT_IS_NOT_REPETITION,
}


def expected_failed_checks(estimator: Any) -> dict[str, str]:
    """The scikit-learn checks ``estimator`` is known to fail, with the reasons."""
    return dict(EXPECTED_FAILED_CHECKS)


def _name_of(X: Any) -> str:
    """How an error names a dataset given as a path or URL, or opened."""
    return str(getattr(X, "url", None) or X)


def in_memory(X: Any) -> bool:
    """NumPy, SciPy or pandas input (trained in this process), not a dataset or dask."""
    return not (is_dataset_ref(X) or is_dask_collection(X))


def check_frame_columns(est: Any, X: Any) -> None:
    """A Dask DataFrame to predict has the columns the estimator was fitted on, in order."""
    names = getattr(est, "feature_names_in_", None)
    columns = [str(c) for c in X.columns]
    if names is not None and columns != list(names):
        raise ValueError(f"The feature names should match those that were passed during fit: "
                         f"got {columns}, expected {list(names)}.")


def check_dataset_columns(est: Any, names: list[str] | None, url: str) -> None:
    """A dataset converted from a CSV/Parquet header has the columns the estimator was fitted
    on (``names``: as read, in the model's order where they were in another)."""
    check_same_columns(getattr(est, "feature_names_in_", None), names, url)


def hashed_validation(validation: Any, hashing: dict[str, Any] | None) -> Any:
    """``validation`` with the text columns of a pandas frame hashed as the training frame's
    were: (frame, y) was taken as an array of its own columns (4 features against the fit's
    2^18 + 3)."""
    if hashing and isinstance(validation, tuple) and is_pandas_frame(validation[0]):
        return (hashed_rows(validation[0], hashing), *validation[1:])
    return validation


def check_validation_frame(est: Any, validation: Any) -> None:
    """A pandas validation frame has the columns of the frame fitted, in order (its rows are
    read by position, as the training frame's were)."""
    X = validation[0] if isinstance(validation, tuple) else validation
    if hasattr(X, "columns") and in_memory(X):
        check_same_columns(getattr(est, "feature_names_in_", None),
                           [str(c) for c in X.columns], "The validation data")


class SVMBase(BaseEstimator):
    """Shared machinery of the dsvm estimators (not used directly)."""

    _task: ClassVar[str]
    _parameter_constraints: ClassVar[dict[str, Any]]

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # before __init__, so that scikit-learn's names (C=, max_iter=) are told dsvm's
        error = unknown_parameter_error(cls.__name__, kwargs, accepted_parameters(cls))
        if error is not None:
            raise error
        return super().__new__(cls)

    # -- parameters ------------------------------------------------------------------------------
    def _validate(self) -> None:
        params = self.get_params(deep=False)
        validate_params(type(self).__name__, params, self._parameter_constraints)
        check_kernel_solver(self.kernel, self.solver)

    def _spec(self) -> FitSpec:
        return FitSpec.from_params(type(self).__name__, self._task, self.get_params(deep=False))

    def __sklearn_clone__(self) -> SVMBase:
        # A live Client cannot be deep-copied (nor should it be): the clone shares it, as
        # lightgbm.dask does; every other parameter is cloned as scikit-learn would.
        params = self.get_params(deep=False)
        client = params.pop("client", None)
        new = type(self)(**{k: clone(v, safe=False) for k, v in params.items()})
        new.client = client
        return new

    # -- fitting ---------------------------------------------------------------------------------
    def _reset(self) -> None:
        for attr in _FITTED:
            self.__dict__.pop(attr, None)

    def _publish(self, record: FittedModel, names: np.ndarray | None = None) -> None:
        """The fitted attributes of ``record`` (kept whole for a later ``partial_fit``);
        ``names``: the columns of a pandas DataFrame it hashed."""
        self._fit_record = record
        self.coef_ = record.coef
        self.intercept_ = record.intercept
        if record.classes is not None:
            self.classes_ = record.classes
        self.n_features_in_ = record.n_features_in
        if record.feature_names is not None:  # a Dask DataFrame's columns
            self.feature_names_in_ = np.asarray(record.feature_names, dtype=object)
        elif names is not None:
            self.feature_names_in_ = names
        self.n_iter_ = record.n_iter
        self.t_ = record.t
        self.history_ = record.history
        self.state_ = record.state
        self.feature_map_ = record.feature_map
        self.seed_ = record.seed
        self.n_streams_ = record.n_streams
        self.n_samples_fit_ = record.n_samples
        self.stop_reason_ = record.stop_reason
        self.solver_ = record.solver  # what solver="auto" chose
        self.scaling_ = record.scaling  # how the rows were scaled (None: as given)
        if record.outcome is not None:  # a fit's; partial_fit keeps the last fit's
            self.outcome_ = record.outcome

    def _fit(self, X: Any, y: Any, sample_weight: Any, validation: Any, init: Any,
             resume: bool) -> SVMBase:
        self._validate()
        warm = self if getattr(self, "warm_start", False) and hasattr(self, "coef_") else None
        if warm is None:  # (a warm start continues the fitted attributes, e.g. _fit_record)
            self._reset()
        label_column = label_column_of(X, y)
        X, y = frame_and_label(X, y)
        X, sample_weight = frame_and_weight(X, sample_weight)
        X = with_number_objects(X)
        hashing = hashing_of(X) or frame_hashing(X, y)  # a DataFrame's text/category columns
        check_text_columns(X, y)
        names = hashed_frame_names(X, hashing)
        if in_memory(X):
            X, y, sample_weight = check_fit_input(self, hashed_rows(X, hashing), y,
                                                  sample_weight, reset=True)
            check_validation_frame(self, validation)
        validation = hashed_validation(validation, hashing)
        spec = self._spec()
        record = self._train(spec, X, y, sample_weight=sample_weight,
                             validation=validation, init=init, resume=resume, warm=warm)
        self._publish(record, names)
        self._keep_hashing(hashing)
        fill = fill_values_of(X)
        if fill is not None:  # (dsvm eval/predict fill raw rows' holes with the same means)
            self.fill_values_ = fill
        if label_column is not None:  # (dsvm eval finds it among raw rows' columns)
            self.label_column_ = label_column
        # a failed fit warns (FitFailedWarning); its model is published for inspection
        check_outcome(spec, record.outcome)
        return self

    def _train(self, spec: FitSpec, X: Any, y: Any, **fit_args: Any) -> FittedModel:
        """The training layer's fit (the CV estimators train their grid instead)."""
        return _training.fit(spec, X, y, **fit_args)

    def _keep_hashing(self, spec: dict[str, Any] | None) -> None:
        """The hashing spec of the training dataset, kept (and saved) so that data hashed
        otherwise is refused at prediction time."""
        if spec is not None:
            self.hashing_ = spec

    def _partial_fit(self, X: Any, y: Any, classes: Any, sample_weight: Any,
                     validation: Any) -> SVMBase:
        self._validate()
        X, y = frame_and_label(X, y)
        X, sample_weight = frame_and_weight(X, sample_weight)
        if self._task == "classification":  # scikit-learn's rules for classes=
            check_partial_fit_classes(self, labels_to_check(X, y), classes)
        X = with_number_objects(X)
        hashing = hashing_of(X) or frame_hashing(X, y)  # checked before any step is taken
        if hashing is not None:
            check_hashing(getattr(self, "hashing_", None), hashing,
                          "The DataFrame" if hashing_of(X) is None else _name_of(X))
        names = hashed_frame_names(X, hashing)
        if is_dask_frame(X):  # its columns, as a pandas batch's are (scikit-learn's rule)
            check_frame_columns(self, X)
            names = np.asarray([str(c) for c in X.columns], dtype=object) \
                if names is None else names
        if in_memory(X):
            with warnings.catch_warnings():
                if hashing is not None:  # (its columns were checked by name: check_hashing;
                    # a model of a Dask frame knows their names, which hashed rows lack)
                    warnings.filterwarnings("ignore", "X does not have valid feature names")
                X, y, sample_weight = check_fit_input(self, hashed_rows(X, hashing), y,
                                                      sample_weight,
                                                      reset=not hasattr(self, "_fit_record"))
        record = _training.partial_fit(self._spec(), getattr(self, "_fit_record", None), X, y,
                                       classes=classes, sample_weight=sample_weight,
                                       validation=validation)
        self._publish(record, names)
        self._keep_hashing(hashing)
        return self

    # -- prediction ------------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' first.")

    def _check_features(self, n_features: int) -> None:
        if n_features != self.n_features_in_:
            raise ValueError(  # scikit-learn's wording, which its checks match
                f"X has {n_features} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input.")

    def _model(self) -> LinearModel:
        """What the fitted estimator predicts with (its weights and its feature map)."""
        return LinearModel(self.coef_, self.intercept_, getattr(self, "feature_map_", None))

    def _class_values(self) -> np.ndarray | None:
        """The float64 class values the kernels see (None: a regressor)."""
        classes = getattr(self, "classes_", None)
        if classes is None:
            return None
        if classes.dtype.kind not in "biuf":  # labels of any type: their indices
            return np.arange(len(classes), dtype=np.float64)
        return np.asarray(classes, dtype=np.float64)

    def _dataset_source(self, X: Any, y: Any = None, purpose: str | None = None) -> Any:
        hashing = getattr(self, "hashing_", None)
        if hashing and is_pandas_frame(X):  # (a frame's text columns, as predict hashes them)
            X = hashed_rows(X, hashing)
        text = getattr(self, "classes_", None)
        text = text if text is not None and text.dtype.kind not in "biuf" else None
        source, named = source_of(X, y, classify=self._task == "classification",
                                  chunk_rows=self.chunk_rows, text_classes=text,
                                  purpose=purpose, width=self.n_features_in_,
                                  names=getattr(self, "feature_names_in_", None))
        if text is None and named is not None and purpose is not None:  # a dataset's names
            raise ValueError(f"{source.describe()} has text labels "
                             f"{np.asarray(named).tolist()}, but this model's classes are "
                             f"numbers {self.classes_.tolist()}.")
        self._check_features(source.n_features)
        dataset = getattr(source, "dataset", None)  # opened already: no second read
        if dataset is not None:
            check_hashing(getattr(self, "hashing_", None), hashing_of(dataset), dataset.url)
            check_dataset_columns(self, source.feature_names, dataset.url)
        return source

    def _decision(self, X: Any) -> Any:
        """Decision values (n_samples,) for one output, (n_samples, n_classes) for several;
        dask input gives a lazy dask array, a dataset path a NumPy array."""
        self._check_fitted()
        model = self._model()
        hashing = getattr(self, "hashing_", None)
        if is_dask_frame(X):
            check_frame_columns(self, X)
            return predicting.decision_frame(X, model, hashing)
        if is_dask_collection(X):
            self._check_features(X.shape[1])
            return predicting.decision_dask(X, model)
        if is_parquet_ref(X):
            raise ValueError(f"To predict a Parquet file, read it as a Dask DataFrame "
                             f"(dask.dataframe.read_parquet({os.fspath(X)!r})) and pass its "
                             "feature columns.")
        if is_dataset_ref(X):
            scores = predicting.decision_source(self._dataset_source(X), model,
                                                client=self.client, n_workers=self.n_workers)
        else:  # a DataFrame the model hashes is checked as it is hashed
            hashed = hashing and is_pandas_frame(X)
            if hashing and not hashed:
                refuse_rows_without_columns(hashing, X, self.n_features_in_)
            X = hashed_rows(X, hashing) if hashed else check_predict_input(self, X)
            scores = predicting.decision_arrays(X, model)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def _stored_labels(self) -> np.ndarray | None:
        """What ``write_predictions`` writes per predicted index (None: decision values)."""
        return None

    def write_predictions(self, X: Any, path: str | os.PathLike, *, decision: bool = False,
                          overwrite: bool = False, storage_options: dict | None = None) -> str:
        """Predict a dataset into a zarr prediction store at ``path``, written by the workers.

        Each chunk of the dataset ``X`` (a path, URL or :class:`dsvm.Dataset`) is read,
        predicted and written into ``path`` by one task: the predictions never pass through
        this process, so a dataset of any size can be predicted (``predict`` returns them in
        memory instead). ``decision=True`` writes decision values instead of labels. Read the
        result with :func:`dsvm.read_predictions` or zarr (layout: :mod:`dsvm.data.predictions`).
        Returns the store's URL; a failed prediction leaves nothing at ``path``.
        """
        self._check_fitted()
        if not is_dataset_ref(X):
            raise TypeError("write_predictions needs a dataset path, URL or dsvm.Dataset; for "
                            "arrays use predict() or decision_function() "
                            f"(got {type(X).__name__}).")
        request = StoreRequest(path, None if decision else self._stored_labels(),
                               np.asarray(getattr(self, "classes_", np.zeros(0))),
                               overwrite, storage_options)
        return predicting.write_predictions(self._dataset_source(X), self._model(), request,
                                            client=self.client, n_workers=self.n_workers)

    # -- evaluation ------------------------------------------------------------------------------
    def _penalty(self) -> float:
        """The regulariser's value (L2, L1 or elastic net) at the model as it was trained: at
        ``coef_`` folded back into the units the fit scaled the columns to (``scaling_``),
        as the fit's objective has it, else at ``coef_``. The penalty of the raw-unit
        ``coef_`` was another number: ``dsvm eval`` of a model on its own training data said
        0.434 where the fit had published 0.162."""
        scaling = getattr(self, "scaling_", None)
        if scaling is None:
            return scoring.penalty(self, self.coef_)
        coef, _ = scaling.fold(np.asarray(self.coef_, dtype=np.float64),
                               np.asarray(self.intercept_, dtype=np.float64))
        return scoring.penalty(self, coef)

    def _eval_counts(self, X: Any, y: Any) -> EvalCounts:
        """Evaluation sums over data (through the fitted map), summed by tasks on the workers
        for a dataset."""
        self._check_fitted()
        X, y = frame_and_label(X, y)
        return scoring.evaluate_source(self._dataset_source(X, y, "evaluate a model"),
                                       self._model(), class_values=self._class_values(),
                                       loss=self._spec().loss, client=self.client,
                                       n_workers=self.n_workers)

    def _score_with(self, metric: Callable[..., float], key: str, X: Any, y: Any,
                    sample_weight: Any) -> float:
        """``metric(y, predict(X))``; on a dataset, ``evaluate(X)[key]`` (summed on workers)."""
        self._check_fitted()
        X, y = frame_and_label(X, y)
        X, sample_weight = frame_and_weight(X, sample_weight)
        if is_dataset_ref(X):  # (a Parquet path's label column: y)
            return float(self.evaluate(X, y)[key])  # type: ignore[attr-defined]
        pred = self.predict(X)  # type: ignore[attr-defined]
        if is_dask_collection(pred):
            if is_dask_collection(y):
                pred, y = compute(pred, y, what="scoring")
            else:
                (pred,) = compute(pred, what="scoring")
        return float(metric(native_labels(y), pred, sample_weight=sample_weight))

    # -- persistence and display -----------------------------------------------------------------
    def save(self, path: str | os.PathLike, storage_options: dict | None = None, *,
             overwrite: bool = True) -> None:
        """Save the fitted model (no pickle) to a path or fsspec URL; load it back with
        :func:`dsvm.load`. A model file there is replaced (``overwrite=False``: refused);
        anything else is never replaced (FileExistsError)."""
        self._check_fitted()
        persistence.save(self, path, storage_options, overwrite=overwrite)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        if state.get("client") is not None and not isinstance(state["client"], str):
            state["client"] = None  # a live Client does not travel
        return state

    def _repr_html_(self) -> str:
        from dsvm.estimators._html import estimator_html

        return estimator_html(self)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        # scikit-learn's bundle (its parameter diagram) would take precedence in Jupyter
        return {"text/plain": repr(self), "text/html": self._repr_html_()}

    def plot_history(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the per-epoch history (objective, and validation accuracy when recorded).

        Needs matplotlib (``pip install dsvm[plot]``); returns the matplotlib Axes.
        """
        from dsvm.estimators.plotting import plot_history

        return plot_history(self, ax=ax, **kwargs)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
