"""Model files: a fitted linear model (or kernel expansion) with the parameters that made it.

The file is the npz + JSON envelope of :mod:`dsvm.io.envelope`: arrays ``coef``, ``intercept``,
``classes`` (empty for a regressor) and ``map.*`` (a fitted feature map, if any); the JSON
document holds the estimator's name and parameters, the history and the map's description.
:func:`load_model_record` returns a :class:`ModelRecord`; :func:`dsvm.load` turns it into an
estimator.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dsvm.data.location import MODEL, check_replaceable
from dsvm.exceptions import ModelFormatError
from dsvm.io.envelope import decode, encode, read_bytes, write_bytes

MODEL_FORMAT = "dsvm-model"
MODEL_VERSION = 1
_MAP_PREFIX = "map."
_SCALING_PREFIX = "scaling."


@dataclass
class ModelRecord:
    """Everything a model file holds, as plain values."""

    estimator: str
    params: dict[str, Any]
    coef: np.ndarray
    intercept: np.ndarray
    classes: np.ndarray
    n_features_in: int
    n_iter: int
    t: float
    history: list[dict[str, Any]] = field(default_factory=list)
    map_meta: dict[str, Any] | None = None
    map_arrays: dict[str, np.ndarray] = field(default_factory=dict)
    extra_meta: dict[str, Any] = field(default_factory=dict)
    # the scaling of the training rows (its per-column factor and shift; the rest is in
    # extra_meta["fit"]["scaling"]): what the model's objective is measured in
    scaling_arrays: dict[str, np.ndarray] = field(default_factory=dict)


def save_model_record(path: str | os.PathLike, record: ModelRecord,
                      storage_options: dict | None = None, *, overwrite: bool = True) -> None:
    """Write ``record`` to a local path or fsspec URL, atomically. It replaces a model file
    there (unless ``overwrite`` is false), never anything else (FileExistsError)."""
    check_replaceable(os.fspath(path), MODEL, overwrite=overwrite,
                      storage_options=storage_options)
    arrays = {"coef": record.coef, "intercept": record.intercept, "classes": record.classes}
    arrays.update({_MAP_PREFIX + k: v for k, v in record.map_arrays.items()})
    arrays.update({_SCALING_PREFIX + k: v for k, v in record.scaling_arrays.items()})
    meta = {
        **record.extra_meta,
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "estimator": record.estimator,
        "params": record.params,
        "n_features_in": int(record.n_features_in),
        "n_iter": int(record.n_iter),
        "t": float(record.t),
        "dtype": str(np.asarray(record.coef).dtype),
        "history": record.history,
        "feature_map": record.map_meta,
    }
    write_bytes(path, encode(arrays, meta), storage_options)


def load_model_record(path: str | os.PathLike, storage_options: dict | None = None) -> ModelRecord:
    """Read a model file; refuse (:class:`ModelFormatError`) anything that is not one, or one
    whose coefficients are not finite."""
    path = os.fspath(path)
    arrays, meta = decode(read_bytes(path, "model file", storage_options), path=path,
                          fmt=MODEL_FORMAT, version=MODEL_VERSION, what="model",
                          required=("coef", "intercept", "classes"))
    for name in ("coef", "intercept"):
        values = arrays[name]
        if values.dtype.kind != "f" or not np.all(np.isfinite(values)):
            raise ModelFormatError(f"{path}: the model's {name} holds non-finite values or is "
                                   f"not floating point ({values.dtype}); the file is corrupt.")
    try:
        record = ModelRecord(
            estimator=str(meta["estimator"]), params=dict(meta["params"]),
            coef=arrays["coef"], intercept=arrays["intercept"], classes=arrays["classes"],
            n_features_in=int(meta["n_features_in"]), n_iter=int(meta["n_iter"]),
            t=float(meta["t"]), history=list(meta.get("history", [])),
            map_meta=meta.get("feature_map"),
            map_arrays={k[len(_MAP_PREFIX):]: v for k, v in arrays.items()
                        if k.startswith(_MAP_PREFIX)},
            scaling_arrays={k[len(_SCALING_PREFIX):]: v for k, v in arrays.items()
                            if k.startswith(_SCALING_PREFIX)},
            extra_meta={k: v for k, v in meta.items() if k in ("hashing", "fit", "grid",
                                                                  "feature_names",
                                                                  "fill_values",
                                                                  "label_column")},
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFormatError(f"{path}: the model's description is incomplete or malformed "
                               f"({type(exc).__name__}: {exc}).") from None
    return record
