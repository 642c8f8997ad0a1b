"""Which column of a table holds the labels when the user did not say (``label_column="auto"``).

A CSV written by ``DataFrame.to_csv`` (scikit-learn's ``load_*(as_frame=True).frame``, a
Kaggle file, a database export) puts the label where its frame had it, most often last and
named ``target``, ``label`` or ``class``. Taking the first column regardless trained on the
wrong column without a word (the first feature of breast cancer's CSV became 373 "classes",
and ``dsvm train`` a regressor of it), so a header naming one label column decides; without
one, the first column stays the label (the LIBSVM/Vowpal habit), and the conversion says
which column it took.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

AUTO = "auto"

# Names a label column goes by, strongest first: "y" only when no stronger name is there (a
# table of coordinates x, y, z with a "label" column has its label named), then a click log's
# (Avazu's CSV: id, click, hour, ...).
LABEL_NAMES: tuple[frozenset[str], ...] = (
    frozenset({"label", "labels", "target", "class"}),
    frozenset({"y"}),
    frozenset({"click", "clicked"}),
)


def named_label(names: Sequence[str] | None) -> str | None:
    """The one column of ``names`` (a header) named like a label, case aside; None when none
    is, or when several are equally so (the choice is then the user's)."""
    if not names:
        return None
    for tier in LABEL_NAMES:
        found = [n for n in names if str(n).strip().lower() in tier]
        if len(found) == 1:
            return found[0]
        if found:
            return None
    return None


def resolve_label_column(label_column: int | str | None,
                         names: Sequence[str] | None) -> int | str | None:
    """``label_column`` as given, or for ``"auto"`` the column of ``names`` named like a label
    (:func:`named_label`), else the first column (0). (A label column literally named "auto"
    is given by its position.)"""
    if label_column != AUTO:
        return label_column
    named = named_label(names)
    return 0 if named is None else named


def ids_as_labels(labels: np.ndarray) -> bool:
    """Whether labels read like a row id, not a label: at least 20, all distinct whole
    numbers (Avazu's files start with an id column, a CSV of a database table with its key)."""
    labels = np.asarray(labels, dtype=np.float64)
    return bool(labels.size >= 20 and np.all(labels == np.round(labels))
                and np.unique(labels).size == labels.size)
