"""From what the user passed (a dataset path, dask arrays, NumPy/SciPy arrays) to a source.

Input decides where training runs (dask-ml's rule): in-memory arrays train in this process, a
dataset or dask arrays on a cluster. Labels of any type are accepted for classification: text
or object labels are replaced on the way in by their index in the sorted label set (compared as
text), which the estimator shows as ``classes_``; the kernels see numbers only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from dsvm.data.zarr_store import Dataset, open_dataset
from dsvm.distributed.sources import ArraySource, DaskSource, DatasetSource


def is_dask_collection(x: Any) -> bool:
    return hasattr(x, "__dask_graph__") and hasattr(x, "to_delayed")


def is_dataset_ref(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike, Dataset))


def codes_of(y: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Float64 indices of labels ``y`` in the sorted label set ``known`` (compared as text)."""
    text = np.asarray(y).astype(str)
    idx = np.clip(np.searchsorted(known, text), 0, max(len(known) - 1, 0))
    bad = known[idx] != text
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"Label {np.asarray(y)[i].item()!r} (row {i}) is not one of the classes "
                         f"{known.tolist()} of this fit.")
    return idx.astype(np.float64)


def text_label_set(known: np.ndarray | None, distinct: Callable[[], Any]) -> np.ndarray:
    """The sorted text label set of a fit: ``known`` if given, else of ``distinct()``."""
    if known is not None:
        return known
    return np.unique(np.asarray(distinct()).astype(str))


def dataset_source(X: Any, y: Any, sample_weight: Any) -> DatasetSource:
    if y is not None:
        raise ValueError(
            "y must be None when X is a dataset path or Dataset: the labels are stored in it.")
    if sample_weight is not None:
        raise ValueError("sample_weight must be stored in the dataset when X is a dataset.")
    return DatasetSource(X if isinstance(X, Dataset) else open_dataset(X))


def dask_source(X: Any, y: Any, sample_weight: Any, *, classify: bool,
                text_classes: np.ndarray | None) -> tuple[DaskSource, np.ndarray | None]:
    import dask.array as da

    if not is_dask_collection(y):
        y = da.from_array(np.asarray(y), chunks=(X.chunks[0],))
    if classify and y.dtype.kind not in "biuf":
        text_classes = text_label_set(text_classes, lambda: da.unique(y).compute())
        y = y.map_blocks(codes_of, text_classes, dtype=np.float64)
    if sample_weight is not None and not is_dask_collection(sample_weight):
        sample_weight = da.from_array(np.asarray(sample_weight), chunks=(X.chunks[0],))
    return DaskSource(X, y, sample_weight), text_classes


def array_source(X: Any, y: Any, sample_weight: Any, *, classify: bool, chunk_rows: int,
                 text_classes: np.ndarray | None) -> tuple[ArraySource, np.ndarray | None]:
    X = X if sp.issparse(X) else np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}.")
    y_arr = np.asarray(y)
    if classify and y_arr.dtype.kind not in "biuf":
        text_classes = text_label_set(text_classes, lambda: y_arr)
        y_arr = codes_of(y_arr, text_classes)
    if y_arr.dtype.kind not in "biuf":
        raise ValueError(f"y must hold numeric labels; got dtype {y_arr.dtype}.")
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    return ArraySource(X, y_arr, sw, chunk_rows=int(chunk_rows)), text_classes


def source_of(X: Any, y: Any = None, sample_weight: Any = None, *, classify: bool = True,
              chunk_rows: int = 65536, text_classes: np.ndarray | None = None,
              ) -> tuple[Any, np.ndarray | None]:
    """(source, text label set or None) for user input ``X``/``y``/``sample_weight``.

    ``text_classes``: the label set of the fit so far, when its labels are text (a later
    ``partial_fit``, validation data, or ``partial_fit(classes=...)``).
    """
    if is_dataset_ref(X):
        return dataset_source(X, y, sample_weight), text_classes
    if y is None:
        raise ValueError("y is required when X is an array (it is stored in datasets only).")
    if is_dask_collection(X):
        return dask_source(X, y, sample_weight, classify=classify, text_classes=text_classes)
    return array_source(X, y, sample_weight, classify=classify, chunk_rows=chunk_rows,
                        text_classes=text_classes)


def validation_source(validation: Any, *, classify: bool, chunk_rows: int,
                      text_classes: np.ndarray | None) -> Any:
    """The source of ``fit(..., validation=...)``: a dataset, or an ``(X, y)`` pair."""
    if isinstance(validation, tuple) and len(validation) == 2:
        source, _ = source_of(validation[0], validation[1], classify=classify,
                              chunk_rows=chunk_rows, text_classes=text_classes)
        return source
    source, _ = source_of(validation, None, classify=classify, chunk_rows=chunk_rows,
                          text_classes=text_classes)
    return source
