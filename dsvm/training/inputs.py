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


def is_dask_frame(x: Any) -> bool:
    """A Dask DataFrame or Series (partitions, possibly of unknown length)."""
    return is_dask_collection(x) and hasattr(x, "map_partitions") and hasattr(x, "npartitions")


def is_parquet_ref(x: Any) -> bool:
    """A Parquet file, a folder of them, or a glob or URL of them (trained through
    dask.dataframe: each file's row groups are the chunks)."""
    if not isinstance(x, (str, os.PathLike)):
        return False
    text = os.fspath(x).rstrip("/")
    if text.endswith((".parquet", ".pq")) or "*.parquet" in text:
        return True
    return os.path.isdir(text) and any(name.endswith((".parquet", ".pq"))
                                       for name in os.listdir(text))


def _numeric_columns(frame: Any, what: str) -> None:
    bad = [(c, str(t)) for c, t in frame.dtypes.items() if getattr(t, "kind", "O") not in "biuf"]
    if bad:
        col, dtype = bad[0]
        raise ValueError(f"{what} column {col!r} has dtype {dtype}, not numbers; hash it into "
                         "numeric features with dsvm.convert(..., categorical=[...]), or drop it.")


def frame_source(X: Any, y: Any, sample_weight: Any, *, classify: bool,
                 text_classes: np.ndarray | None) -> tuple[DaskSource, np.ndarray | None]:
    """A Dask DataFrame (numeric columns as features) with labels from ``y``: a column name of
    ``X``, a Dask Series or an array. Every partition is a chunk that a task computes itself
    (a Parquet file's part is read by that worker); unknown partition lengths are counted on
    the cluster. The column names become the estimator's ``feature_names_in_``."""
    if isinstance(y, str):
        if y not in X.columns:
            raise ValueError(f"The label column {y!r} is not one of the columns "
                             f"{list(X.columns)}.")
        X, y = X.drop(columns=[y]), X[y]
    if y is None:
        raise ValueError("y is required with a DataFrame: a column name, a Series or an array.")
    _numeric_columns(X, "Feature")
    names = [str(c) for c in X.columns]
    # dask-expr may still merge partitions when it optimises (small Parquet files): fix the
    # partitioning first, so that the lengths counted match the chunks read
    X = X.optimize() if hasattr(X, "optimize") else X
    y = y.optimize() if is_dask_frame(y) and hasattr(y, "optimize") else y
    Xa = X.to_dask_array(lengths=True)
    ya = y.to_dask_array(lengths=True) if is_dask_frame(y) else y
    if sample_weight is not None and is_dask_frame(sample_weight):
        sample_weight = sample_weight.to_dask_array(lengths=True)
    source, text = dask_source(Xa, ya, sample_weight, classify=classify,
                               text_classes=text_classes)
    source.feature_names = names
    return source, text


def read_parquet(path: Any) -> Any:
    """A Parquet path, folder, glob or URL as a Dask DataFrame (read lazily, by the workers)."""
    import dask.dataframe as dd

    return dd.read_parquet(os.fspath(path))


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


def dataset_source(X: Any, y: Any, sample_weight: Any, purpose: str | None) -> DatasetSource:
    if y is not None:
        raise ValueError(
            "y must be None when X is a dataset path or Dataset: the labels are stored in it.")
    if sample_weight is not None:
        raise ValueError("sample_weight must be stored in the dataset when X is a dataset.")
    dataset = X if isinstance(X, Dataset) else open_dataset(X)
    if purpose is not None:
        dataset.require_labels(purpose)  # an unlabeled dataset's NaN labels must not train
    return DatasetSource(dataset)


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
              purpose: str | None = "train",
              ) -> tuple[Any, np.ndarray | None]:
    """(source, text label set or None) for user input ``X``/``y``/``sample_weight``.

    ``text_classes``: the label set of the fit so far, when its labels are text (a later
    ``partial_fit``, validation data, or ``partial_fit(classes=...)``).
    """
    if is_parquet_ref(X):
        X = read_parquet(X)
    elif is_dataset_ref(X):
        return dataset_source(X, y, sample_weight, purpose), text_classes
    if is_dask_frame(X):
        return frame_source(X, y, sample_weight, classify=classify, text_classes=text_classes)
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
                          text_classes=text_classes, purpose="validate a fit")
    return source


# What must agree between the hashing of the data a model was trained on and of the data it
# predicts (dsvm.data.hashing.HashSpec.attrs): the same tokens into the same features.
_HASHING_KEYS = ("scheme", "hash_bits", "categorical", "numeric", "token", "numeric_transform")


def hashing_of(x: Any) -> dict[str, Any] | None:
    """The hashing spec a dataset was converted with (its attribute ``hashing``, with the
    format it was converted from), or None: not hashed, or not a dataset."""
    if not is_dataset_ref(x) or is_parquet_ref(x):
        return None
    dataset = x if isinstance(x, Dataset) else open_dataset(x)
    spec = dataset.attrs.get("hashing")
    if not spec:
        return None
    # the raw layout it was converted from, so that new raw rows convert alike (data.rehash)
    fmt = (dataset.attrs.get("provenance") or {}).get("format")
    return {**spec, "format": fmt} if fmt else dict(spec)


def check_hashing(expected: dict[str, Any] | None, got: dict[str, Any] | None,
                  name: str) -> None:
    """Refuse data (``name``) whose categorical columns were hashed (spec ``got``, from
    :func:`hashing_of`) otherwise than the model's training data (``expected``): its features
    would mean other things, and predictions would be silently wrong."""
    if not got or not expected:
        return

    def key(spec: dict[str, Any], k: str) -> Any:  # hashed columns: any order, same tokens
        if k == "numeric_transform":  # specs written before it had none
            return spec.get(k, "none")
        return sorted(spec.get(k) or []) if k == "categorical" else spec.get(k)

    differ = [k for k in _HASHING_KEYS if key(got, k) != key(expected, k)]
    if differ:
        shown = ", ".join(f"{k}={got.get(k)!r} (the model's: {expected.get(k)!r})"
                          for k in differ)
        raise ValueError(f"{name}: its columns were hashed differently from the model's "
                         f"training data: {shown}. Convert it with the model's --categorical, "
                         f"--hash-bits and --numeric-transform.")
