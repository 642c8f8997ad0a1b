"""Prediction for every estimator and every input: arrays, dask arrays, datasets.

NumPy/SciPy input is predicted here (through the fitted feature map, if any); dask input gives a
lazy dask array computed chunk by chunk on the workers (dask-ml's ``ParallelPostFit``); a
dataset is predicted by tasks that read their own chunks (:mod:`dsvm.training.evaluation`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import block_from_arrays
from dsvm.data.frames import FrameColumns
from dsvm.solvers.objective import decision_block
from dsvm.training.inputs import is_dask_collection


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


def decision_dask(X: Any, coef: np.ndarray, intercept: np.ndarray, fmap: Any) -> Any:
    """A lazy dask array of decision values, one task per chunk of ``X``."""
    X = mapped_input(X, fmap)
    n_out = coef.shape[0]
    return X.map_blocks(
        decision_numpy, coef, intercept, dtype=np.float64,
        chunks=(X.chunks[0], (n_out,)) if n_out > 1 else (X.chunks[0],),
        drop_axis=None if n_out > 1 else 1,
    )


def decision_frame(X: Any, coef: np.ndarray, intercept: np.ndarray, fmap: Any,
                   columns: FrameColumns) -> Any:
    """Decision values of a Dask DataFrame, partition by partition on the workers: a Dask
    Series for one output, a Dask DataFrame of one column per output otherwise (same
    partitions and index as ``X``). ``columns``: its features (text columns hashed)."""
    import pandas as pd

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


def decision_arrays(X: Any, coef: np.ndarray, intercept: np.ndarray, fmap: Any) -> np.ndarray:
    """(n, K) decision values of NumPy/SciPy rows."""
    X = X if sp.issparse(X) else np.asarray(X)
    return decision_numpy(mapped_input(X, fmap), coef, intercept, keep_2d=True)


def labels_of(scores: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """The predicted labels: the sign for one output, else the largest decision value."""
    if scores.ndim == 1:
        return classes[(scores > 0).astype(np.intp)]
    return classes[np.argmax(scores, axis=1)]


def labels_of_frame(scores: Any, classes: np.ndarray) -> Any:
    """Predicted labels of a Dask Series/DataFrame of decision values: a Dask Series."""
    import pandas as pd

    def one(part: Any) -> Any:
        values = part.to_numpy()
        return pd.Series(labels_of(values, classes), index=part.index, name="label")

    return scores.map_partitions(one, meta=pd.Series([], dtype=classes.dtype, name="label"))


def stored_labels(classes: np.ndarray) -> np.ndarray:
    """What a prediction store holds for each class: the class values, or their indices when
    they are text (see :mod:`dsvm.data.predictions`)."""
    if classes.dtype.kind not in "biuf":
        return np.arange(len(classes), dtype=np.int32)
    return np.asarray(classes)


def probabilities(scores: np.ndarray) -> np.ndarray:
    """Class probabilities from logistic decision values: (1 - p, p) for one output, else the
    outputs' sigmoids normalised to sum to 1 (one-vs-rest)."""
    from scipy.special import expit

    if scores.ndim == 1:
        p = expit(scores)
        return np.column_stack([1.0 - p, p])
    p = expit(scores)
    return p / p.sum(axis=1, keepdims=True)
