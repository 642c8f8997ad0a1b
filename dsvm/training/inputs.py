"""From what the user passed (a dataset path, dask arrays, NumPy/SciPy arrays, a Dask or pandas
DataFrame) to a source.

Input decides where training runs (dask-ml's rule): in-memory arrays train in this process, a
dataset or dask arrays on a cluster. Labels of any type are accepted for classification: text
or object labels are replaced on the way in by their index in the sorted label set (compared as
text), which the estimator shows as ``classes_``; the kernels see numbers only. A DataFrame's
text and category columns are hashed as ``dsvm convert --categorical`` hashes them
(dsvm.data.frames); the estimator keeps that hashing (``hashing_``) to predict DataFrames.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from dsvm.data.frames import (
    FrameColumns,
    TextCount,
    check_missing,
    columns_of_hashing,
    count_numbers,
    frame_columns,
    is_number_dtype,
    objects_as_numbers,
    text_columns,
    warn_numbers_as_text,
)
from dsvm.data.model_columns import as_wide_as, in_model_columns
from dsvm.data.sources import ArraySource, DatasetSource, Source
from dsvm.data.zarr_store import Dataset, open_dataset
from dsvm.training.cluster import compute, held_if_spanning

if TYPE_CHECKING:  # (imported where dask input needs it: in-memory fits never load it)
    from dsvm.distributed.dask_source import DaskSource


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


def frame_source(X: Any, y: Any, sample_weight: Any, *, classify: bool,
                 text_classes: np.ndarray | None) -> tuple[DaskSource, np.ndarray | None]:
    """A Dask DataFrame with labels from ``y``: a column name of ``X``, a Dask Series (or a
    one-column DataFrame) or an array. Numeric columns are features as they are, text and
    category columns are hashed as ``dsvm convert --categorical`` hashes them
    (dsvm.data.frames). Every partition is a chunk that a task computes itself (a Parquet
    file's part is read by that worker). The column names become ``feature_names_in_``.

    X, y and sample_weight are cut from ONE collection (``X.assign(label=y)``) turned into one
    graph (``to_delayed``): dask-expr fuses small Parquet partitions by the columns each
    expression reads, so separate X and y expressions (or a length count beside them) could
    be partitioned differently; here every chunk, its row count and its labels come from the
    same partition. One pass over the data counts the rows and checks them first."""
    X, y = _features_and_labels(X, y)
    columns = frame_columns(list(X.columns), list(X.dtypes))
    joined, label, weight = _one_frame(X, y, sample_weight)
    (joined,) = held_if_spanning(joined)  # (a merge's partition cannot be computed alone)
    label_dtype = None if label is None else values_dtype(joined[label].dtype)
    text = label is not None and not is_number_dtype(label_dtype)
    if text and not classify:
        raise ValueError(f"y has dtype {joined[label].dtype}; regression targets must be "
                         "numbers.")
    parts = _summarised_parts(joined, columns, label, weight, text, classify,
                              text_columns(list(X.columns), list(X.dtypes)))
    Xa = _stacked(parts, columns.features, (columns.n_features,), columns.dtype,
                  columns.spec is not None)
    if label is not None:
        if text:
            text_classes = text_label_set(
                text_classes, lambda: np.concatenate([p.distinct for p in parts]))
        y = _stacked(parts, _frame_labels, (), np.dtype(np.float64), False, label, "label",
                     text_classes)
    if weight is not None:
        sample_weight = _stacked(parts, _frame_labels, (), np.dtype(np.float64), False,
                                 weight, "sample_weight", None)
    source, text_classes = dask_source(Xa, y, sample_weight, classify=classify,
                                       text_classes=text_classes, held=True)
    source.feature_names = [str(c) for c in X.columns]
    if classify and label is not None:  # counted by the first pass
        source.labels, source.class_counts = _class_counts(parts, text_classes if text else None)
        source.label_dtype = None if text else label_dtype_of(label_dtype)
    return source, text_classes


def values_dtype(dtype: Any) -> Any:
    """The dtype of a column's values: a category column's categories' (numbers or text), as
    pandas' own labels are read (``pd.Categorical([0, 10, 20])`` labels are numbers)."""
    categories = getattr(dtype, "categories", None)
    return dtype if categories is None else categories.dtype


def label_dtype_of(dtype: Any) -> np.dtype | None:
    """A frame's label column's dtype when it is NumPy's bool or an integer, for the classes a
    fit shows, as a pandas column's are (None: float64; scikit-learn shows the nullable
    ``Int64`` and ``boolean`` as floats too)."""
    return dtype if isinstance(dtype, np.dtype) and dtype.kind in "biu" else None


def _class_counts(parts: list[_Part], text_classes: np.ndarray | None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct labels as the fit sees them: numbers, or text as its codes; each part's
    rows of each) from the first pass's counts: neither needs a pass of its own (counting the
    classes per chunk, then their totals, cost two more reads of every partition)."""
    values = [p.distinct if text_classes is None else codes_of(p.distinct, text_classes)
              for p in parts]
    labels = np.unique(np.concatenate(values)).astype(np.float64)
    counts = np.zeros((len(parts), len(labels)), dtype=np.int64)
    for i, (v, part) in enumerate(zip(values, parts)):
        counts[i, np.searchsorted(labels, v)] = part.counts
    return labels, counts


def frame_and_label(X: Any, y: Any) -> tuple[Any, Any]:
    """``fit(df, "label")``, ``score(df, "label")``: a DataFrame (pandas or Dask) without its
    label column, and that column; any other input as given."""
    if not isinstance(y, str) or getattr(X, "ndim", 0) != 2 or not hasattr(X, "columns"):
        return X, y
    if y not in X.columns:
        raise ValueError(f"The label column {y!r} is not one of the columns {list(X.columns)}.")
    return X.drop(columns=[y]), X[y]


def frame_and_weight(X: Any, sample_weight: Any) -> tuple[Any, Any]:
    """``fit(df, "label", sample_weight="w")``: a DataFrame (pandas or Dask) without its
    weight column, and that column; any other input as given."""
    if not isinstance(sample_weight, str):
        return X, sample_weight
    if getattr(X, "ndim", 0) != 2 or not hasattr(X, "columns"):
        raise ValueError(f"sample_weight={sample_weight!r} names a column, but X is a "
                         f"{type(X).__name__}, not a DataFrame; pass the weights as an array.")
    if sample_weight not in X.columns:
        raise ValueError(f"The sample_weight column {sample_weight!r} is not one of the "
                         f"columns {list(X.columns)}.")
    return X.drop(columns=[sample_weight]), X[sample_weight]


def _features_and_labels(X: Any, y: Any) -> tuple[Any, Any]:
    """(features, labels) of ``fit(X, y)``: ``y`` a column name of ``X``, a one-column frame
    (its column), or labels as given."""
    if isinstance(y, str):
        return frame_and_label(X, y)
    if y is None:
        raise ValueError("y is required with a DataFrame: a column name, a Series or an array.")
    return X, (_one_column(y, "y") if is_dask_frame(y) else y)


def _one_column(part: Any, what: str) -> Any:
    """A Dask Series as given; a one-column Dask DataFrame as its column."""
    if getattr(part, "ndim", 1) != 2:
        return part
    if len(part.columns) != 1:
        raise ValueError(f"{what} is a DataFrame of {len(part.columns)} columns "
                         f"{list(part.columns)}; pass one column (a Series).")
    return part[part.columns[0]]


def _one_frame(X: Any, y: Any, sample_weight: Any) -> tuple[Any, str | None, str | None]:
    """``X`` with the Dask labels and weights as extra columns (their names, or None where
    they are arrays, handled as arrays)."""
    extra: dict[str, Any] = {}
    names: list[str | None] = []
    for what, part in (("y", y), ("sample_weight", sample_weight)):
        if not is_dask_frame(part):
            names.append(None)
            continue
        _check_aligned(X, part, what)
        name = f"__dsvm_{what}__"
        while name in X.columns:
            name += "_"
        extra[name] = part
        names.append(name)
    return (X.assign(**extra) if extra else X), names[0], names[1]


def _check_aligned(X: Any, other: Any, what: str) -> None:
    """Refuse a Dask ``other`` (y, sample_weight) whose rows may not be X's, row for row: dask
    would pair partitions of unknown divisions blindly, and mix rows without a word."""
    if other.npartitions == X.npartitions:
        if X.known_divisions and other.known_divisions and X.divisions == other.divisions:
            return
        if _co_aligned(X, other):
            return
    raise ValueError(
        f"X and {what} are Dask collections that do not come from one DataFrame (X: "
        f"{X.npartitions} partitions, {what}: {other.npartitions}; not the same divisions): "
        f"their rows cannot be paired. Take both from one frame (X = df[features], "
        f"{what} = df[column]) or pass the frame with the label's name: fit(df, 'label').")


def _co_aligned(a: Any, b: Any) -> bool:
    """Whether dask-expr itself pairs ``a`` and ``b`` partition by partition: the same
    sources through blockwise steps only (filters, projections, dropna, assign)."""
    try:
        from dask.dataframe.dask_expr._expr import are_co_aligned
    except ImportError:  # a dask without dask-expr: trust known divisions only
        return False
    return bool(are_co_aligned(a.expr, b.expr))


@dataclass
class _Part:
    """One non-empty partition of a frame: its delayed data, rows, distinct class labels."""

    data: Any
    where: str
    n_rows: int
    distinct: np.ndarray
    counts: np.ndarray  # the rows of each distinct label


def _summarised_parts(joined: Any, columns: FrameColumns, label: str | None,
                      weight: str | None, text: bool, classify: bool,
                      text_cols: list[str]) -> list[_Part]:
    """The non-empty partitions of ``joined`` (one graph), counted and checked on the
    cluster: only row counts, distinct class labels and the counts of numbers in a sample of
    the text columns (:func:`dsvm.data.frames.warn_numbers_as_text`) come back."""
    import dask

    data = joined.to_delayed()
    wheres = [f"Dask DataFrame partition {i}" for i in range(len(data))]
    summaries = compute(*(dask.delayed(_summary)(d, columns.numeric, label, weight, text,
                                                 classify, w, text_cols)
                          for d, w in zip(data, wheres)), what="counting the DataFrame's rows")
    warn_numbers_as_text([s[3] for s in summaries])
    parts = [_Part(d, w, n, distinct, counts)
             for d, w, (n, distinct, counts, _) in zip(data, wheres, summaries) if n]
    if not parts:
        raise ValueError("The DataFrame has no rows (every partition is empty).")
    return parts


def _summary(part: Any, numeric: list[str], label: str | None, weight: str | None,
             text: bool, classify: bool, where: str, text_cols: list[str]
             ) -> tuple[int, np.ndarray, np.ndarray, dict[str, TextCount]]:
    """(rows, distinct class labels: text, or numbers, and the rows of each, the numbers among
    a sample of each text column) of a partition, whose values are checked on the way."""
    check_missing(part, numeric, where)
    distinct, counts = np.zeros(0), np.zeros(0, dtype=np.int64)
    if label is not None:
        _present(part, label, "label", where)
        if text:
            distinct, counts = np.unique(part[label].to_numpy().astype(str), return_counts=True)
        elif classify:  # (regression targets: as many as rows, not brought back)
            distinct, counts = np.unique(part[label].to_numpy(dtype=np.float64),
                                         return_counts=True)
    if weight is not None:
        _present(part, weight, "sample_weight", where)
    return len(part), distinct, counts, count_numbers(part, text_cols, where)


def _present(part: Any, name: str, what: str, where: str) -> None:
    missing = np.flatnonzero(part[name].isna().to_numpy())
    if missing.size:
        raise ValueError(f"{where}, row {int(missing[0])}: missing {what} (NaN/NA); drop "
                         "those rows first (df.dropna(subset=[...])).")


def _frame_labels(part: Any, where: str, name: str, what: str,
                  text_classes: np.ndarray | None) -> np.ndarray:
    """Column ``name`` of a partition as float64; text labels: their index in
    ``text_classes``. A missing value: an error naming the partition and row."""
    _present(part, name, what, where)
    if text_classes is not None:
        return codes_of(part[name].to_numpy(), text_classes)
    return part[name].to_numpy(dtype=np.float64)


def _stacked(parts: list[_Part], fn: Callable[..., Any], width: tuple[int, ...],
             dtype: np.dtype, sparse: bool, *args: Any) -> Any:
    """One dask array of ``fn(partition, where, *args)`` over the partitions, whose row
    counts are known: block i is computed from partition i alone."""
    import dask
    import dask.array as da

    meta = sp.csr_matrix((0, width[0]), dtype=dtype) if sparse else np.empty((0,) + width, dtype)
    blocks = [da.from_delayed(dask.delayed(fn)(p.data, p.where, *args), shape=(p.n_rows,) + width,
                              dtype=dtype, meta=meta) for p in parts]
    return da.concatenate(blocks, axis=0)


def is_pandas_frame(x: Any) -> bool:
    return type(x).__module__.startswith("pandas") and hasattr(x, "columns")


def frame_hashing(X: Any, y: Any = None) -> dict[str, Any] | None:
    """The hashing of a DataFrame's text and category columns (pandas or Dask, the label
    column ``y`` left out) as ``fit`` hashes them; None: none, or not a DataFrame."""
    if not (is_pandas_frame(X) or is_dask_frame(X)) or getattr(X, "ndim", 2) != 2:
        return None
    if isinstance(y, str) and y in X.columns:
        X = X.drop(columns=[y])
    return frame_columns(list(X.columns), list(X.dtypes)).hashing()


def with_number_objects(X: Any) -> Any:
    """A pandas DataFrame with its columns of numbers held as Python objects (Decimal) as
    float64 (:func:`dsvm.data.frames.objects_as_numbers`); anything else as it is."""
    if not is_pandas_frame(X) or getattr(X, "ndim", 2) != 2:
        return X
    return objects_as_numbers(X)


def check_text_columns(X: Any, y: Any = None) -> None:
    """Warn of a pandas DataFrame's text columns that hold numbers but for a few values (a
    Dask DataFrame's are counted by the first pass over it instead)."""
    if not is_pandas_frame(X) or getattr(X, "ndim", 2) != 2:
        return
    if isinstance(y, str) and y in X.columns:
        X = X.drop(columns=[y])
    columns = text_columns(list(X.columns), list(X.dtypes))
    if columns:
        warn_numbers_as_text([count_numbers(X, columns, "DataFrame")])
    warn_written_index(X)


# The name pandas gives the unnamed first column of a CSV: the index to_csv wrote.
READ_BACK_INDEX = "Unnamed: 0"


def warn_written_index(X: Any) -> None:
    """Warn of a pandas DataFrame's column ``Unnamed: 0`` that counts the rows: the index
    ``to_csv`` wrote, read back by ``read_csv`` as a feature (a row counter; on rows in time
    order, their time)."""
    if READ_BACK_INDEX not in X.columns:
        return
    values = X[READ_BACK_INDEX].to_numpy()
    if values.dtype.kind in "iu" and len(values) > 1 and np.all(np.diff(values) == 1):
        import warnings

        warnings.warn(f"The column {READ_BACK_INDEX!r} counts the rows: the index to_csv wrote, "
                      "read back as a feature; pd.read_csv(..., index_col=0) keeps it out (or "
                      "write the file with index=False)", UserWarning, stacklevel=5)


def hashed_frame_names(X: Any, hashing: dict[str, Any] | None) -> np.ndarray | None:
    """The columns of a pandas DataFrame whose text a model hashes (its ``feature_names_in_``,
    as a Dask DataFrame's are), else None: the hashed rows it trains on have no names."""
    if not hashing or not is_pandas_frame(X):
        return None
    return np.asarray([str(c) for c in X.columns], dtype=object)


def hashed_rows(X: Any, hashing: dict[str, Any] | None) -> Any:
    """A pandas DataFrame as the rows a model hashing ``hashing`` sees (CSR, the text and
    category columns hashed); anything else, or nothing to hash, as it is."""
    if not hashing or not is_pandas_frame(X):
        return X
    return frame_columns_of(X, hashing).features(X, "DataFrame")


def frame_columns_of(X: Any, hashing: dict[str, Any] | None) -> FrameColumns:
    """How a model turns a DataFrame ``X`` into its features: its hashing (the columns it
    names must be there), or X's numeric columns as they are."""
    if not hashing:
        columns = frame_columns(list(X.columns), list(X.dtypes))
        if columns.spec is not None:
            raise ValueError(f"Column {columns.hashed[0]!r} has dtype "
                             f"{X.dtypes[columns.hashed[0]]}, not numbers, and this model "
                             "was trained without hashed columns.")
        return columns
    columns = columns_of_hashing(hashing)
    named = {str(c) for c in X.columns}
    absent = [c for c in columns.numeric + columns.hashed if c not in named]
    if absent:
        raise ValueError(f"The DataFrame lacks column {absent[0]!r}, which the model's "
                         f"hashing names (numeric {columns.numeric}, hashed "
                         f"{columns.hashed}); its columns are {list(X.columns)}.")
    return columns


def read_parquet(path: Any) -> Any:
    """A Parquet path, folder, glob or URL as a Dask DataFrame (read lazily, by the workers)."""
    import dask.dataframe as dd

    return dd.read_parquet(os.fspath(path))


def parquet_label(path: Any, y: Any, purpose: str | None) -> Any:
    """``y`` of ``fit(path)`` for a Parquet path: as given, else the one column named like a
    label (label, target, class; y; click), as ``dsvm convert`` takes it; none: an error
    naming the path and its columns (``purpose`` None, predicting: no label needed)."""
    if y is not None or purpose is None:
        return y
    from dsvm.data.label_column import named_label
    from dsvm.data.parquet_source import column_names

    columns = column_names(path)
    label = named_label(columns)
    if label is None:
        raise ValueError(f"{os.fspath(path)}: no column is named like a label (label, target, "
                         f"class, y, click); its columns are {columns[:12]}: pass the label "
                         f"column's name as y, e.g. fit({os.fspath(path)!r}, {columns[-1]!r}).")
    return label


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


def native_dtype(distinct: Any) -> np.dtype | None:
    """The dtype of labels held as Python objects that are all bools, or all numbers (a Dask
    array of a pyarrow ``bool`` column is one of objects: ``(df.y == "yes").to_dask_array()``),
    so that they are classes as the same values in a NumPy array are, not text ('True'); None
    for text or anything else."""
    values = list(np.asarray(distinct, dtype=object).ravel())
    if not values or any(isinstance(v, (str, bytes)) for v in values):
        return None
    try:
        dtype = np.asarray(values).dtype
    except (TypeError, ValueError):
        return None
    return dtype if dtype.kind in "biuf" else None


def native_labels(y: Any) -> np.ndarray:
    """``y`` as a NumPy array; labels held as Python objects that are all bools or all
    numbers in their own dtype (:func:`native_dtype`)."""
    y = np.asarray(y)
    if y.dtype.kind != "O":
        return y
    native = native_dtype(list(dict.fromkeys(y.ravel().tolist())))
    return y if native is None else y.astype(native)


def text_label_set(known: np.ndarray | None, distinct: Callable[[], Any]) -> np.ndarray:
    """The sorted text label set of a fit: ``known`` if given, else of ``distinct()``."""
    if known is not None:
        return known
    return np.unique(np.asarray(distinct()).astype(str))


def dataset_source(X: Any, y: Any, sample_weight: Any, purpose: str | None, *,
                   classify: bool = True, text_classes: np.ndarray | None = None,
                   ) -> tuple[DatasetSource, np.ndarray | None]:
    """(source, text label set or None) of a dataset. Text labels (its ``label_names``) are
    classes: refused for regression; with ``text_classes`` (a fitted model's, or the label
    set of a fit so far) the stored codes are read as codes of those, by name, and a name
    outside them is refused. ``purpose`` None: the labels are not read (predict)."""
    if y is not None:
        raise ValueError(
            "y must be None when X is a dataset path or Dataset: the labels are stored in it.")
    if sample_weight is not None:
        raise ValueError("sample_weight must be stored in the dataset when X is a dataset.")
    dataset = X if isinstance(X, Dataset) else open_dataset(X)
    if purpose is None:
        return DatasetSource(dataset), text_classes
    dataset.require_labels(purpose)  # an unlabeled dataset's NaN labels must not train
    names = dataset.label_names
    if names is None and text_classes is not None:
        # numbers cannot be matched to names: comparing them to the names' positions would
        # score a hand-made mapping silently right or wrong
        raise ValueError(
            f"Dataset {dataset.url} has numeric labels {np.asarray(dataset.classes).tolist()}, "
            f"but the classes are text {np.asarray(text_classes).astype(str).tolist()}: convert "
            "the data with its text labels (dsvm convert keeps them as names, matched by name).")
    if names is None:
        return DatasetSource(dataset), text_classes
    if not classify:
        raise ValueError(
            f"Dataset {dataset.url} has text labels {names} (its label_names): its labels are "
            "classes, not regression targets; train a classifier (SVMClassifier, dsvm train "
            "--task classification).")
    if text_classes is None:
        return DatasetSource(dataset), np.asarray(names)
    return DatasetSource(dataset, recode_of(names, text_classes, dataset.url)), text_classes


def recode_of(names: list[str], known: np.ndarray, where: str) -> np.ndarray | None:
    """``table[i]``: the position in ``known`` (sorted) of label ``names[i]``; None when they
    coincide. A name outside ``known`` is an error naming ``where`` and the label."""
    known_text = np.asarray(known).astype(str)
    unseen = [n for n in names if n not in set(known_text.tolist())]
    if unseen:
        raise ValueError(f"{where}: label {unseen[0]!r} is not one of the classes "
                         f"{known_text.tolist()} the model was trained on.")
    table = np.searchsorted(known_text, np.asarray(names, dtype=str)).astype(np.float64)
    return None if np.array_equal(table, np.arange(len(names))) else table


def dask_source(X: Any, y: Any, sample_weight: Any, *, classify: bool,
                text_classes: np.ndarray | None, held: bool = False,
                ) -> tuple[DaskSource, np.ndarray | None]:
    """``held``: the arrays are a frame's partitions, each computed from one (the frame was
    held already where it was a merge): not checked again."""
    import dask.array as da

    from dsvm.distributed.dask_source import DaskSource

    if not held:  # (before anything computes them: a merge's shuffle runs once)
        X, y, sample_weight = held_if_spanning(X, y, sample_weight)
        y, sample_weight = _series_as_array(y, "y"), _series_as_array(sample_weight,
                                                                      "sample_weight")
    if not is_dask_collection(y):
        y = da.from_array(np.asarray(y), chunks=(X.chunks[0],))
    distinct = None  # (objects: their distinct values, computed once for both uses)
    if y.dtype.kind == "O" and text_classes is None:
        distinct = compute(da.unique(y), what="finding the labels")[0]
        native = native_dtype(distinct)
        y = y if native is None else y.astype(native)
    if classify and y.dtype.kind not in "biuf":
        text_classes = text_label_set(
            text_classes, lambda: distinct if distinct is not None else
            compute(da.unique(y), what="finding the labels")[0])
        y = y.map_blocks(codes_of, text_classes, dtype=np.float64)
    if sample_weight is not None and not is_dask_collection(sample_weight):
        sample_weight = da.from_array(np.asarray(sample_weight), chunks=(X.chunks[0],))
    source = DaskSource(X, y, sample_weight)
    if classify and text_classes is not None:
        source.label_names = np.asarray(text_classes)
    return source, text_classes


def _series_as_array(part: Any, what: str) -> Any:
    """A Dask Series (or one-column DataFrame) beside a Dask array X, as a Dask array: its
    rows pair with X's by position, as a NumPy y's do (the chunks' lengths are counted on the
    cluster, then y is cut as X is: :class:`dsvm.distributed.dask_source.DaskSource`)."""
    return _one_column(part, what).to_dask_array() if is_dask_frame(part) else part


def array_source(X: Any, y: Any, sample_weight: Any, *, classify: bool, chunk_rows: int,
                 text_classes: np.ndarray | None) -> tuple[ArraySource, np.ndarray | None]:
    X = X if sp.issparse(X) else np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}.")
    y_arr = np.asarray(y) if text_classes is not None else native_labels(y)
    if classify and y_arr.dtype.kind not in "biuf":
        text_classes = text_label_set(text_classes, lambda: y_arr)
        y_arr = codes_of(y_arr, text_classes)
    if y_arr.dtype.kind not in "biuf":
        raise ValueError(f"y must hold numeric labels; got dtype {y_arr.dtype}.")
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    return ArraySource(X, y_arr, sw, chunk_rows=int(chunk_rows)), text_classes


def source_of(X: Any, y: Any = None, sample_weight: Any = None, *, classify: bool = True,
              chunk_rows: int = 65536, text_classes: np.ndarray | None = None,
              purpose: str | None = "train", width: int | None = None,
              names: Any = None) -> tuple[Source, np.ndarray | None]:
    """(source, text label set or None) for user input ``X``/``y``/``sample_weight``.

    ``text_classes``: the label set of the fit so far, when its labels are text (a later
    ``partial_fit``, validation data, or ``partial_fit(classes=...)``). ``width``: the
    number of features of the model that scores the rows: a dataset of an svmlight test file
    whose rows stop short of it is seen over it (:func:`dsvm.data.model_columns.as_wide_as`);
    ``names``: that model's columns, a dataset's in another order read in its order
    (:func:`dsvm.data.model_columns.in_model_columns`).
    """
    if is_parquet_ref(X):
        X, y = read_parquet(X), parquet_label(X, y, purpose)
    elif is_dataset_ref(X):
        stored, text = dataset_source(X, y, sample_weight, purpose, classify=classify,
                                      text_classes=text_classes)
        source = in_model_columns(stored, names)
        return (source if width is None else as_wide_as(source, width)), text
    if is_dask_frame(X):
        return frame_source(X, y, sample_weight, classify=classify, text_classes=text_classes)
    if y is None:
        raise ValueError("y is required when X is an array (it is stored in datasets only).")
    if is_dask_collection(X):
        return dask_source(X, y, sample_weight, classify=classify, text_classes=text_classes)
    return array_source(X, y, sample_weight, classify=classify, chunk_rows=chunk_rows,
                        text_classes=text_classes)


def validation_source(validation: Any, *, classify: bool, chunk_rows: int,
                      text_classes: np.ndarray | None, width: int | None = None,
                      names: Any = None) -> Source:
    """The source of ``fit(..., validation=...)``: a dataset, or an ``(X, y)`` pair
    (``width``, ``names``: as :func:`source_of` takes them)."""
    if isinstance(validation, tuple) and len(validation) == 2:
        source, _ = source_of(validation[0], validation[1], classify=classify,
                              chunk_rows=chunk_rows, text_classes=text_classes, width=width,
                              names=names)
        return source
    source, _ = source_of(validation, None, classify=classify, chunk_rows=chunk_rows,
                          text_classes=text_classes, purpose="validate a fit", width=width,
                          names=names)
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


def label_column_of(X: Any, y: Any) -> str | None:
    """The name of the training data's label column, for raw rows at prediction time (``dsvm
    eval`` finds it among their columns): ``fit(frame, "price")``'s, a named Series', or a
    dataset's converted from a CSV/Parquet header (its provenance); None otherwise."""
    if isinstance(y, str):
        return y
    name = getattr(y, "name", None)
    if isinstance(name, str) and name and not name.startswith("__dsvm_"):
        return name
    if y is not None or not is_dataset_ref(X) or is_parquet_ref(X):
        return None
    dataset = X if isinstance(X, Dataset) else open_dataset(X)
    column = (dataset.attrs.get("provenance") or {}).get("label_column")
    return column if isinstance(column, str) and dataset.attrs.get("feature_names") else None


def fill_values_of(x: Any) -> dict[str, float] | None:
    """The columns' means a dataset's missing values were filled with at conversion
    (``fill_missing="mean"``: its attribute ``fill_values``), or None."""
    if not is_dataset_ref(x) or is_parquet_ref(x):
        return None
    dataset = x if isinstance(x, Dataset) else open_dataset(x)
    values = dataset.attrs.get("fill_values")
    return {str(k): float(v) for k, v in values.items()} if values else None


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
