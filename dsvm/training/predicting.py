"""Prediction, the estimators' way in: decision values of every kind of input, and prediction
stores written by the workers.

The estimators check the input (scikit-learn's rules, the features, the hashing) and pick its
kind; what is computed, and where, is decided here, so that they reach no layer below training:
NumPy/SciPy rows are predicted in this process (through the fitted feature map, if any); dask
input gives a lazy dask array computed chunk by chunk where it lives (dask-ml's
``ParallelPostFit``); a dataset is predicted by tasks that read their own chunks
(:mod:`dsvm.training.evaluation`), in this process unless a cluster was given or is active
(:func:`dsvm.training.engines.prediction_engine`).
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import block_from_arrays
from dsvm.data.predictions import PredictionStore
from dsvm.data.sources import Source, map_source
from dsvm.solvers.objective import decision_block
from dsvm.training import evaluation
from dsvm.training.engines import prediction_engine
from dsvm.training.inputs import frame_columns_of, is_dask_collection
from dsvm.training.layout import model_for


class LinearModel(NamedTuple):
    """What a fitted estimator predicts with: ``coef`` (K, d), ``intercept`` (K,) and the
    fitted feature map its rows go through first (None: the features as they are)."""

    coef: np.ndarray
    intercept: np.ndarray
    feature_map: Any = None


def decision_numpy(X: Any, coef: np.ndarray, intercept: np.ndarray,
                   keep_2d: bool = False) -> np.ndarray:
    """Decision values of in-memory rows: (n,) for one output, else (n, K)."""
    scores = decision_block(coef, intercept, block_from_arrays(X, np.zeros(X.shape[0])))
    if keep_2d or scores.shape[1] > 1:
        return scores
    return scores[:, 0]


def mapped_input(X: Any, fmap: Any) -> Any:
    """Arrays (or a lazy dask array) through the fitted feature map, if any."""
    if fmap is None:
        return X
    if is_dask_collection(X):
        return X.map_blocks(fmap.transform, dtype=X.dtype,
                            chunks=(X.chunks[0], (fmap.n_output_features,)))
    return fmap.transform(X)


def decision_arrays(X: Any, model: LinearModel) -> np.ndarray:
    """(n, K) decision values of NumPy/SciPy rows."""
    X = X if sp.issparse(X) else np.asarray(X)
    return decision_numpy(mapped_input(X, model.feature_map), model.coef, model.intercept,
                          keep_2d=True)


def decision_dask(X: Any, model: LinearModel) -> Any:
    """A lazy dask array of decision values, one task per chunk of ``X``."""
    X = mapped_input(X, model.feature_map)
    n_out = model.coef.shape[0]
    return X.map_blocks(
        decision_numpy, model.coef, model.intercept, dtype=np.float64,
        chunks=(X.chunks[0], (n_out,)) if n_out > 1 else (X.chunks[0],),
        drop_axis=None if n_out > 1 else 1,
    )


def decision_frame(X: Any, model: LinearModel, hashing: dict[str, Any] | None) -> Any:
    """Decision values of a Dask DataFrame, partition by partition on the workers: a Dask
    Series for one output, a Dask DataFrame of one column per output otherwise (same
    partitions and index as ``X``). ``hashing``: the model's (text columns hashed by it)."""
    import pandas as pd

    columns = frame_columns_of(X, hashing)
    coef, intercept, fmap = model
    n_out = coef.shape[0]

    def one(part: Any, partition_info: Any = None) -> Any:
        where = f"Dask DataFrame partition {(partition_info or {}).get('number', '?')}"
        values = decision_numpy(mapped_input(columns.features(part, where), fmap), coef,
                                intercept, keep_2d=True)
        if n_out == 1:
            return pd.Series(values[:, 0], index=part.index, name="decision")
        return pd.DataFrame(values, index=part.index, columns=[f"decision_{k}"
                                                                for k in range(n_out)])

    meta = (pd.Series([], dtype=np.float64, name="decision") if n_out == 1 else
            pd.DataFrame({f"decision_{k}": pd.Series([], dtype=np.float64)
                          for k in range(n_out)}))
    return X.map_partitions(one, meta=meta)


def decision_source(source: Source, model: LinearModel, *, client: Any = None,
                    n_workers: int | None = None) -> np.ndarray:
    """(n, K) decision values of every row of a dataset's ``source``, in order, computed by
    tasks that read their own chunks (``client``/``n_workers``: the estimator's)."""
    model, source = model_for(source, model)  # a renumbered store: in its ids
    mapped = map_source(source, model.feature_map)
    with prediction_engine(mapped, client, n_workers) as engine:
        return evaluation.decision_values(engine, model.coef, model.intercept, mapped)


class StoreRequest(NamedTuple):
    """Where and what ``write_predictions`` writes: the store's path or URL, the value stored
    per predicted class index (None: decision values), the model's classes (empty for a
    regressor), whether an existing prediction store may be replaced, and fsspec options."""

    path: str | os.PathLike
    labels: np.ndarray | None
    classes: np.ndarray
    overwrite: bool = False
    storage_options: dict | None = None


# Names of files in another format than the zarr store write_predictions writes: a folder of
# zarr arrays named p.parquet was written, which pandas then failed to read ("Parquet magic
# bytes not found").
OTHER_FORMATS = (".parquet", ".pq", ".csv", ".tsv", ".txt", ".npy", ".npz", ".json")


def check_store_name(path: Any) -> None:
    """Refuse a prediction store's ``path`` whose name says another format."""
    name = os.fspath(path).rstrip("/")
    suffix = os.path.splitext(name)[1].lower()
    if suffix in OTHER_FORMATS:
        raise ValueError(
            f"write_predictions writes a zarr store, and {name} names a {suffix} file: give a "
            "path ending in .zarr (dsvm predict --out p.parquet/.csv/.npy writes those "
            "formats; in Python, write predict()'s values yourself).")


def write_predictions(source: Source, model: LinearModel, request: StoreRequest, *,
                      client: Any = None, n_workers: int | None = None) -> str:
    """Predict a dataset's ``source`` into a zarr prediction store, each chunk read,
    predicted and written by one task (only row counts come back); returns the store's URL.
    A failed prediction leaves nothing at ``request.path``."""
    if source.dataset is None:  # (a Parquet path is a dataset path too, but not a store)
        raise TypeError(f"write_predictions needs a zarr dataset; got {source.describe()}.")
    check_store_name(request.path)
    store = PredictionStore(
        request.path, n_rows=source.n_samples, chunk_rows=source.dataset.chunk_n_rows(0),
        kind="decision" if request.labels is None else "labels", classes=request.classes,
        n_outputs=model.coef.shape[0], source=source.describe(), overwrite=request.overwrite,
        storage_options=request.storage_options)
    model, source = model_for(source, model)  # a renumbered store: in its ids
    mapped = map_source(source, model.feature_map)
    try:
        with prediction_engine(mapped, client, n_workers) as engine:
            written = evaluation.write_predictions(engine, model.coef, model.intercept, mapped,
                                                   request.labels, store.writer())
    except BaseException:
        store.abort()
        raise
    return store.finish(written, source.n_samples)
