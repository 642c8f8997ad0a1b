"""Checking in-memory input the way scikit-learn does (its public ``validate_data``).

NumPy, SciPy and pandas input is validated here before any work starts: shapes, dtypes, empty
data, complex values, ``y`` of shape (n, 1) (a warning, then raveled), continuous targets given
to a classifier, non-finite values (named by row and column), sample weights, and at predict
time the number of features and their names (``n_features_in_``, ``feature_names_in_``).
Datasets and dask collections are checked by the data layer and the tasks that read them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from dsvm.training.inputs import native_labels

_FLOATS = [np.float64, np.float32]


def _all_finite(values: np.ndarray) -> bool:
    """True when every value is finite, in one pass and no memory (scikit-learn's fast path):
    a finite sum proves it; a NaN, an infinity or an overflowing sum sends the caller to the
    exact search. ``~np.isfinite`` of 2,000,000 x 100 float32 made two 200 MB masks: 0.5 s of
    a 0.7 s fit of one epoch."""
    with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is no error here)
        return bool(np.isfinite(np.sum(values)))


def first_non_finite(X: Any) -> tuple[int, int, float] | None:
    """(row, column, value) of the first NaN or infinity of ``X`` (dense or CSR), or None."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if _all_finite(X.data):
            return None
        bad = np.flatnonzero(~np.isfinite(X.data))
        if not bad.size:
            return None
        row = int(np.searchsorted(X.indptr, bad[0], side="right") - 1)
        return row, int(X.indices[bad[0]]), float(X.data[bad[0]])
    if _all_finite(X):
        return None
    mask = ~np.isfinite(X)
    if not mask.any():
        return None
    row, col = np.argwhere(mask)[0]
    return int(row), int(col), float(X[row, col])


def first_text(X: Any) -> tuple[int, int, str] | None:
    """(row, column, value) of the first value that is not a number (text such as
    ``'Oslo'``) in the first column of the rows ``X`` that has one, or None. Searched only
    once numbers were refused: each column converted at once, a loop only over the one."""
    try:
        rows = np.asarray(X, dtype=object)
    except (TypeError, ValueError):
        return None
    if rows.ndim != 2:
        return None
    for c in range(rows.shape[1]):
        try:
            rows[:, c].astype(np.float64)
            continue
        except (TypeError, ValueError):
            pass
        for r, value in enumerate(rows[:, c]):
            try:
                float(value)
            except (TypeError, ValueError):
                return r, c, str(value)
    return None


def _numbers(est: Any, X: Any, *args: Any, fitting: bool, **kwargs: Any) -> Any:
    """scikit-learn's ``validate_data``, where rows with text in them are refused with the
    value, its row and column, and what to do instead."""
    try:
        return validate_data(est, X, *args, **kwargs)
    except ValueError as err:
        text = first_text(X)
        if text is None:
            raise
        row, col, value = text
        names = getattr(X, "columns", None)
        column = f"column {col}" + (f" ({names[col]!r})" if names is not None else "")
        todo = ("pass the rows as a pandas or Dask DataFrame, whose text columns dsvm hashes "
                "(one feature per column=value), or encode the column first (sklearn."
                "preprocessing.OneHotEncoder)" if fitting else
                "this model was trained on numbers only")
        raise ValueError(f"X holds text: {value!r} at row {row}, {column} ({err}); {todo}.") \
            from None


def refuse_rows_without_columns(hashing: dict[str, Any], X: Any, n_features: int) -> None:
    """Rows that are not a DataFrame (an array, one row as a Series) given to a model that
    hashes text columns of one by name, and not its ``n_features`` hashed columns either:
    refused with the columns it needs."""
    if sp.issparse(X) or (np.ndim(X) == 2 and np.shape(X)[1] == n_features):
        return  # the rows hashed already (hashed_rows, a converted dataset's chunk)
    columns = [*hashing.get("numeric", []), *hashing["categorical"]]
    given = f"{type(X).__module__.split('.')[0]}.{type(X).__name__}"
    raise ValueError(f"This model hashes the text column(s) {list(hashing['categorical'])} of "
                     f"a DataFrame: predict a DataFrame with the columns {columns} (got a "
                     f"{given}; one row of a DataFrame df is df.iloc[[i]]).")


def check_finite(X: Any, name: str = "X", columns: Any = None) -> None:
    """Refuse a NaN or infinity, naming its row and column (by name too where ``X`` came
    from a DataFrame: ``columns``, its ``feature_names_in_``)."""
    found = first_non_finite(X)
    if found is not None:
        row, col, value = found
        kind = "NaN" if np.isnan(value) else "infinity"
        named = f" {str(columns[col])!r}" if columns is not None and col < len(columns) else ""
        raise ValueError(f"Input {name} contains {kind} at row {row}, column {col}{named} "
                         f"({value!r}); drop or impute those values before fitting (e.g. "
                         "sklearn.impute.SimpleImputer).")


def check_labels_present(y: Any) -> None:
    """Refuse a missing class label (None, NaN, pd.NA) by its row: among text labels it made
    NumPy's sort fail on comparing None with a string (a TypeError naming neither)."""
    import pandas as pd

    values = np.asarray(y).ravel()
    if values.dtype.kind not in "fO":  # (ints, bools, fixed-width text: nothing can be missing)
        return
    missing = np.asarray(pd.isna(values), dtype=bool)  # None, NaN, pd.NA, NaT alike
    if missing.any():
        row = int(np.argmax(missing))
        raise ValueError(f"Input y has a missing label ({values[row]!r}) at row {row} "
                         f"({int(missing.sum())} in all); drop those rows or give them a class.")


def check_sample_weight(sample_weight: Any, n_samples: int) -> np.ndarray | None:
    """Sample weights as float64 (n_samples,), refused when misshapen, negative, non-finite or
    all zero."""
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.ndim == 0:
        sw = np.full(n_samples, float(sw))
    if sw.shape != (n_samples,):
        raise ValueError(f"sample_weight.shape == {sw.shape}, expected ({n_samples},).")
    if not np.all(np.isfinite(sw)) or np.any(sw < 0):
        raise ValueError("sample_weight must hold finite, non-negative values; got "
                         f"{sw[~(np.isfinite(sw) & (sw >= 0))][0]!r}.")
    if not np.any(sw > 0):
        raise ValueError("Sample weights must contain at least one non-zero number; all are 0.")
    return sw


def check_fit_input(est: Any, X: Any, y: Any, sample_weight: Any, *,
                    reset: bool) -> tuple[Any, Any, np.ndarray | None]:
    """(X, y, sample_weight) of in-memory training input, checked; sets ``n_features_in_`` and
    ``feature_names_in_`` when ``reset``."""
    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is "
                         "None (it is stored in the dataset only when X is a dataset path).")
    classifier = est._task == "classification"
    if classifier:
        check_labels_present(y)
    X, y = _numbers(est, X, y, fitting=True, reset=reset, accept_sparse="csr", dtype=_FLOATS,
                    ensure_all_finite=False, y_numeric=not classifier)
    check_finite(X, columns=getattr(est, "feature_names_in_", None))
    if classifier:
        y = native_labels(y)  # (Python bools as objects: scikit-learn's "unknown" type)
        check_classification_targets(y)
    elif np.asarray(y).dtype.kind not in "biuf":
        raise ValueError(f"y must hold numeric labels (regression targets); got dtype "
                         f"{np.asarray(y).dtype}.")
    elif not np.all(np.isfinite(y)):
        raise ValueError("Input y contains NaN or infinity; regression targets must be finite.")
    return X, y, check_sample_weight(sample_weight, X.shape[0])


def check_predict_input(est: Any, X: Any) -> Any:
    """In-memory rows to predict, checked against what the estimator was fitted on."""
    X = _numbers(est, X, fitting=False, reset=False, accept_sparse="csr", dtype=_FLOATS,
                 ensure_all_finite=False)
    check_finite(X, columns=getattr(est, "feature_names_in_", None))
    return X


def check_partial_fit_classes(est: Any, y: Any, classes: Any) -> None:
    """scikit-learn's rules for ``classes`` in ``partial_fit``: required on the first call, the
    same set on later ones, at least two of them, and every label of ``y`` among them (``y``
    in memory, or the labels a dataset records; None: not known here, checked per chunk)."""
    fitted = getattr(est, "classes_", None) if hasattr(est, "_fit_record") else None
    if fitted is None and classes is None:
        raise ValueError("classes must be passed on the first call to partial_fit (every label "
                         "of the problem: the first data may not hold them all).")
    if classes is not None:
        given = np.unique(np.asarray(classes))
        if fitted is not None and not np.array_equal(given, np.asarray(fitted)):
            raise ValueError(f"`classes={given.tolist()}` is not the same as on the first call "
                             f"to partial_fit, was: {np.asarray(fitted).tolist()}.")
        if fitted is None and len(given) < 2:
            raise ValueError(f"classes={given.tolist()} given to partial_fit has one class only; "
                             "a classifier needs every label of the problem (at least two).")
    known = np.asarray(fitted if fitted is not None else np.unique(np.asarray(classes)))
    if y is None:
        return
    labels = np.unique(np.asarray(y))
    if known.dtype.kind not in "biuf" or labels.dtype.kind not in "biuf":
        known, labels = known.astype(str), labels.astype(str)
    outside = labels[~np.isin(labels, known)]
    if outside.size:
        where = "given to partial_fit" if fitted is None else "of the first partial_fit call"
        raise ValueError(f"y has label {outside.tolist()[0]!r} ({outside.size} label(s) in all), "
                         "which is "
                         f"not among the classes {known.tolist()} {where}; pass every label of "
                         "the problem as classes= on the first call.")


def labels_to_check(X: Any, y: Any) -> Any:
    """The labels ``partial_fit`` can check against its classes before any work: ``y`` in
    memory (a dataset's or a dask array's labels are checked per chunk by the tasks)."""
    from dsvm.training.inputs import is_dask_collection, is_dataset_ref

    if y is None or is_dataset_ref(X) or is_dask_collection(y):
        return None
    return np.asarray(y).ravel()
