"""``class_weight``: a weight per class, multiplied into every row's sample weight.

``"balanced"`` is scikit-learn's ``n_samples / (n_classes * count_c)``; the counts come from
what the data already records where it can (a dataset's ``class_counts`` attribute: no extra
pass), from the labels in memory, or from a count of dask labels on the cluster: the source's
``label_counts``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dsvm.data.sources import Source


def class_counts(source: Source, values: np.ndarray) -> np.ndarray:
    """How many rows of ``source`` have each class of ``values`` (the float64 class values
    the kernels see)."""
    labels, counts = source.label_counts()
    found = dict(zip(np.asarray(labels, np.float64).tolist(), np.asarray(counts).tolist()))
    return np.array([found.get(float(v), 0) for v in values], dtype=np.float64)


def class_weight_vector(class_weight: Any, classes: np.ndarray | None,
                        values: np.ndarray | None, source: Source) -> np.ndarray | None:
    """The weight of each class (in the order of ``classes``), or None for unit weights.

    ``class_weight``: None, "balanced", or a dict {label: weight} (missing labels weigh 1).
    """
    if class_weight is None or classes is None or values is None:
        return None
    if isinstance(class_weight, str):  # "balanced"
        counts = class_counts(source, values)
        missing = [c for c, n in zip(np.asarray(classes).tolist(), counts) if n == 0]
        if missing:
            raise ValueError(f"class_weight='balanced': the classes {missing} have no rows in "
                             f"{source.describe()}.")
        return counts.sum() / (len(counts) * counts)
    bad = {k: w for k, w in class_weight.items()
           if not isinstance(w, (int, float, np.number)) or not np.isfinite(w) or w < 0}
    if bad:
        label, weight = next(iter(bad.items()))
        raise ValueError(f"class_weight gives label {label!r} the weight {weight!r}: class "
                         "weights are non-negative numbers.")
    shown = [str(c) if np.asarray(classes).dtype.kind not in "biuf" else c
             for c in np.asarray(classes).tolist()]
    unknown = [k for k in class_weight if (str(k) if isinstance(shown[0], str) else k) not in shown]
    if unknown:
        raise ValueError(f"class_weight names labels {unknown} that are not among the classes "
                         f"{shown} of the data.")
    lookup = {(str(k) if isinstance(shown[0], str) else k): float(w)
              for k, w in class_weight.items()}
    return np.array([lookup.get(c, 1.0) for c in shown], dtype=np.float64)
