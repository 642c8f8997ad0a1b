"""Missing feature values filled at conversion: one number, or each column's mean.

``fill_missing=0`` puts 0 in every hole, in the column's raw units: on raw measurements a hole
in breast cancer's ``mean area`` (about 650) becomes an outlier. With 10% of the values
missing (4 draws of the holes, 5-fold cross-validation, dsvm's defaults after scikit-learn's
``SimpleImputer``), 0 gave 0.917 accuracy and column means 0.957; on raw ``load_diabetes``,
R^2 0.108 against 0.437. ``fill_missing="mean"`` fills each numeric column with the mean of
its present values, as ``SimpleImputer()`` does: the means take one pass over the file before
the conversion's own, they are stored with the dataset (attribute ``fill_values``) and kept by
a model trained on it (``fill_values_``), so that ``dsvm eval`` and ``dsvm predict`` fill the
holes of new raw rows with the training data's means.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

MEAN = "mean"

# A fill: None (a missing value is an error), a number, "mean", or per-column numbers.
Fill = float | str | dict[str, float] | None


def check_fill(value: Any) -> Fill:
    """``fill_missing`` checked: None, a finite number, "mean", or a mapping of column names
    to finite numbers (a dataset's or a model's means)."""
    if value is None or value == MEAN:
        return value
    if isinstance(value, dict):
        bad = {k: v for k, v in value.items() if not math.isfinite(float(v))}
        if bad:
            raise ValueError(f"fill_missing values must be finite numbers; got {bad}")
        return {str(k): float(v) for k, v in value.items()}
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"fill_missing must be a finite number or 'mean'; got {value!r}") \
            from None
    if not math.isfinite(number):
        raise ValueError(f"fill_missing must be a finite number or 'mean'; got {value!r}")
    return number


def fill_for(fill: Fill, column: str) -> float | None:
    """The value a hole of ``column`` takes (None: an error), for a resolved fill (not
    "mean")."""
    if isinstance(fill, dict):
        return fill.get(column)
    assert fill != MEAN, "resolve fill_missing='mean' to the columns' means first"
    return None if fill is None else float(fill)


def column_means(columns: list[str], present: Iterable[dict[str, np.ndarray]]
                 ) -> dict[str, float]:
    """Each column's mean over the present (finite) values of all batches, ``present``
    yielding a mapping column -> values per batch; 0 for a column with none."""
    sums = dict.fromkeys(columns, 0.0)
    counts = dict.fromkeys(columns, 0)
    for batch in present:
        for c in columns:
            values = batch[c]
            values = values[np.isfinite(values)]
            sums[c] += float(values.sum())
            counts[c] += int(values.size)
    return {c: sums[c] / counts[c] if counts[c] else 0.0 for c in columns}
