"""Estimators to model files (the file format is :mod:`dsvm.io.models`); reading them back is
:mod:`dsvm.estimators.loading`, which sits above the estimator classes it builds."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from dsvm.io.models import ModelRecord, save_model_record
from dsvm.training.kernel_maps import map_parts
from dsvm.training.spec import FitSpec


def record_of(est: Any) -> ModelRecord:
    """The model file's content for a fitted estimator."""
    params = FitSpec.from_params(type(est).__name__, est._task,
                                 est.get_params(deep=False)).jsonable_params()
    arrays, meta = map_parts(getattr(est, "feature_map_", None))
    classes = getattr(est, "classes_", np.zeros(0, dtype=np.float64))  # none: a regressor
    extra: dict[str, Any] = {"fit": fit_meta(est)}
    if getattr(est, "hashing_", None):
        extra["hashing"] = est.hashing_
    if getattr(est, "fill_values_", None):
        extra["fill_values"] = est.fill_values_
    if getattr(est, "label_column_", None):
        extra["label_column"] = str(est.label_column_)
    names = getattr(est, "feature_names_in_", None)
    if names is not None:  # (predict checks a frame's columns; dsvm predict reads them by name)
        extra["feature_names"] = [str(n) for n in names]
    return ModelRecord(
        estimator=type(est).__name__, params=params, coef=est.coef_, intercept=est.intercept_,
        classes=classes, n_features_in=int(est.n_features_in_), n_iter=int(est.n_iter_),
        t=float(est.t_), history=est.history_, map_meta=meta, map_arrays=arrays,
        extra_meta=extra, scaling_arrays=scaling_arrays(getattr(est, "scaling_", None)))


def scaling_arrays(scaling: Any) -> dict[str, np.ndarray]:
    """The per-column arrays of a fit's scaling (none: it scaled nothing)."""
    if scaling is None:
        return {}
    arrays = {"factor": np.asarray(scaling.factor, dtype=np.float64)}
    if scaling.shift is not None:
        arrays["shift"] = np.asarray(scaling.shift, dtype=np.float64)
    return arrays


def fit_meta(est: Any) -> dict[str, Any]:
    """How the model was trained, beyond its parameters: the solver that ran (what
    ``solver="auto"`` chose) and the scaling of its rows (folded into ``coef_``)."""
    scaling = getattr(est, "scaling_", None)
    return {"solver": getattr(est, "solver_", None) or est.solver,
            "scaling": None if scaling is None else {**scaling.meta(),
                                                     "description": scaling.describe()}}


def save(est: Any, path: str | os.PathLike, storage_options: dict | None = None,
         extra_meta: dict[str, Any] | None = None, overwrite: bool = True) -> None:
    """``extra_meta``: more metadata to keep in the file (a CV estimator's candidates);
    ``overwrite``: whether a model file at ``path`` is replaced (never anything else)."""
    record = record_of(est)
    record.extra_meta.update(extra_meta or {})
    save_model_record(path, record, storage_options, overwrite=overwrite)
