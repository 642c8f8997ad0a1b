"""Model files back to fitted estimators (saving is :mod:`dsvm.estimators.persistence`).

This module imports the estimator classes, so it sits above them; keeping it apart from saving is
what lets the classes' base import ``persistence`` without an import cycle."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from dsvm._validation import validate_params
from dsvm.estimators.classifier import SVMClassifier
from dsvm.estimators.regressor import SVMRegressor
from dsvm.exceptions import ModelFormatError
from dsvm.io.models import ModelRecord, load_model_record
from dsvm.training.kernel_maps import map_from_parts
from dsvm.training.model_files import continuable
from dsvm.training.scaling import scaling_of
from dsvm.training.spec import params_from_json


def estimator_of(record: ModelRecord, path: str) -> Any:
    """A fitted estimator from a model file's record; refuses parameters that are not valid."""
    kinds: dict[str, Any] = {"SVMClassifier": SVMClassifier, "SVMRegressor": SVMRegressor}
    cls = kinds.get(record.estimator)
    if cls is None:
        raise ModelFormatError(f"{path}: unknown estimator {record.estimator!r} in model file.")
    try:
        est = cls(**params_from_json(record.params))
        validate_params(cls.__name__, est.get_params(deep=False), cls._parameter_constraints)
    except (TypeError, ValueError) as exc:
        raise ModelFormatError(f"{path}: the model's parameters are not valid: {exc}") from None
    est.coef_ = record.coef
    est.intercept_ = record.intercept
    if cls is SVMClassifier:
        est.classes_ = record.classes
    est.n_features_in_ = record.n_features_in
    est.n_iter_ = record.n_iter
    est.t_ = record.t
    est.history_ = list(record.history)
    est.feature_map_ = map_from_parts(record.map_arrays, record.map_meta)
    fit = record.extra_meta.get("fit") or {}
    est.solver_ = fit.get("solver") or est.solver  # what solver="auto" chose
    est.scaling_ = scaling_of(fit.get("scaling"), record.scaling_arrays)
    if record.extra_meta.get("hashing"):  # the training data's hashing spec (check_hashing)
        est.hashing_ = dict(record.extra_meta["hashing"])
    if record.extra_meta.get("fill_values"):  # its means for missing values (dsvm.data.fill)
        est.fill_values_ = {str(k): float(v) for k, v in record.extra_meta["fill_values"].items()}
    if record.extra_meta.get("label_column"):  # the training data's, for raw rows to score
        est.label_column_ = str(record.extra_meta["label_column"])
    if record.extra_meta.get("feature_names"):  # a DataFrame's columns, as fit() saw them
        est.feature_names_in_ = np.asarray(record.extra_meta["feature_names"], dtype=object)
    _check_shapes(est, path)
    est._fit_record = continuable(est)  # (partial_fit, warm_start)
    return est



def _check_shapes(est: Any, path: str) -> None:
    fmap = est.feature_map_
    n_inputs = est.n_features_in_ if fmap is None else fmap.n_output_features
    n_outputs = 1 if not hasattr(est, "classes_") or len(est.classes_) <= 2 else len(est.classes_)
    if est.coef_.ndim != 2 or est.coef_.shape[1] != n_inputs or est.coef_.shape[0] != n_outputs \
            or est.intercept_.shape != (n_outputs,):
        raise ModelFormatError(
            f"{path}: the model file is inconsistent: coef has shape {est.coef_.shape} and "
            f"intercept {est.intercept_.shape}, but {n_outputs} output(s) over {n_inputs} "
            f"(mapped) input features need ({n_outputs}, {n_inputs}) and ({n_outputs},).")


def load(path: str | os.PathLike, storage_options: dict | None = None) -> Any:
    """Load a model saved with ``estimator.save(path)`` (a path or fsspec URL); returns the
    fitted estimator."""
    return estimator_of(load_model_record(path, storage_options), os.fspath(path))
