"""What the estimators make of decision values: labels, stored labels, probabilities.

Decision values themselves (arrays, dask arrays, Dask DataFrames, datasets) are computed by the
training layer (:mod:`dsvm.training.predicting`); this module only turns them into what
``predict``, ``write_predictions`` and ``predict_proba`` return.
"""

from __future__ import annotations

from typing import Any

import numpy as np


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


def probabilities_of_frame(scores: Any, classes: np.ndarray, log: bool = False) -> Any:
    """Class probabilities (or their logarithms) of a Dask Series/DataFrame of logistic
    decision values: a Dask DataFrame with a column per class, on the rows' index, as
    :func:`labels_of_frame` gives a Series of labels."""
    import pandas as pd

    names = [c.item() if hasattr(c, "item") else c for c in classes]

    def one(part: Any) -> Any:
        proba = probabilities(part.to_numpy())
        return pd.DataFrame(np.log(proba) if log else proba, index=part.index, columns=names)

    return scores.map_partitions(one, meta=pd.DataFrame({c: pd.Series([], dtype=np.float64)
                                                         for c in names}))


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


def class_name(label: Any) -> str:
    """A class as the user wrote it, for what is said and keyed by name: 1, not 1.0 (numeric
    labels are kept as floats), or its text."""
    if isinstance(label, (float, np.floating)) and float(label).is_integer():
        return str(int(label))
    return str(label)
