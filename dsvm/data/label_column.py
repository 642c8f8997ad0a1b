"""Which column of a table holds the labels when the user did not say (``label_column="auto"``).

A CSV written by ``DataFrame.to_csv`` (scikit-learn's ``load_*(as_frame=True).frame``, a
Kaggle file, a database export) puts the label where its frame had it, most often last and
named ``target``, ``label`` or ``class``. Taking the first column regardless trained on the
wrong column without a word (the first feature of breast cancer's CSV became 373 "classes",
and ``dsvm train`` a regressor of it), so a header naming one label column decides. A header
that names none is refused, naming its columns: a house-price CSV (sqft, bedrooms, age,
price) had its first column taken, and ``dsvm train`` reported "training R^2 0.9757" for a
model of the floor area. Rows without a header keep the first column as the label (the
LIBSVM/Vowpal habit), and the conversion says which column it took, unless the first column
cannot be class labels and the last can (:func:`headerless_label`): UCI's tables put the class
last, and Skin_NonSkin.txt (B, G, R, class 1/2, no header) had its blue channel taken as the
label, and ``dsvm train`` a regressor of it, exit 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dsvm.exceptions import DataFormatError

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


def resolve_label_column(label_column: int | str | None, names: Sequence[str] | None,
                         skip: Sequence[int | str] = (), n_cols: int | None = None
                         ) -> int | str | None:
    """``label_column`` as given, or for ``"auto"`` the column of ``names`` (a header; None
    without one, then ``n_cols`` columns) named like a label (:func:`named_label`), else the
    first column (for rows without a header: :func:`require_named` refuses a header naming
    none); never one of ``skip`` (dropped or hashed, by name or position): Titanic's CSV with
    ``--drop PassengerId`` took the dropped id as its label. (A label column literally named
    "auto" is given by its position.)"""
    if label_column != AUTO:
        return label_column
    n = len(names) if names is not None else int(n_cols or 0)
    free = _free(names, skip, n)
    named = None if names is None else named_label([names[i] for i in free])
    if named is not None:
        return named
    return free[0] if free else 0


# What the first rows of a column without a header must look like to be class labels: text,
# or whole numbers, of at most this many distinct values (a table's class column; a feature
# such as a colour channel or an age has more).
MAX_SNIFFED_CLASSES = 20
SNIFFED_ROWS = 500


def headerless_label(rows: Sequence[Sequence[str]], skip: Sequence[int | str] = (),
                     n_cols: int = 0) -> tuple[int, str | None]:
    """(the label column of a table without a header, why when it is not the first): the
    first of its ``n_cols`` columns not in ``skip``, unless the first ``rows`` (their fields)
    say it cannot hold class labels while the last can (:func:`could_be_classes`). Both or
    neither: the first, as before (a regression target has no such sign); a first column of
    text too (names of classes, or a row's name: the conversion says which)."""
    free = _free(None, skip, n_cols)
    if not free:
        return 0, None
    first, last = free[0], free[-1]
    head, tail = _column_values(rows, first), _column_values(rows, last)
    if first == last or _has_text(head) or could_be_classes(head) \
            or not could_be_classes(tail):
        return first, None
    return last, (f"the last column: the first holds {_distinct_said(head)} in the first "
                  f"{len(rows):,} rows, the last {len(set(tail))} distinct")


def could_be_classes(values: Sequence[str]) -> bool:
    """Whether a column's values could be class labels: at most ``MAX_SNIFFED_CLASSES``
    distinct ones, text or whole numbers."""
    distinct = set(values)
    if not distinct or len(distinct) > MAX_SNIFFED_CLASSES:
        return False
    for v in distinct:
        try:
            number = float(v)
        except ValueError:
            continue  # text: a class's name
        if not _whole(number):
            return False
    return True


def _has_text(values: Sequence[str]) -> bool:
    try:
        for v in values:
            float(v)
    except ValueError:
        return True
    return False


def _column_values(rows: Sequence[Sequence[str]], i: int) -> list[str]:
    return [row[i].strip() for row in rows if i < len(row) and row[i].strip()]


def _distinct_said(values: Sequence[str]) -> str:
    n = len(set(values))
    if n > MAX_SNIFFED_CLASSES:
        return f"{n:,} distinct values"
    return f"numbers with fractions ({next(v for v in values if _fraction(v))})"


def _fraction(v: str) -> bool:
    try:
        return not _whole(float(v))
    except ValueError:
        return False


def _whole(number: float) -> bool:
    return math.isfinite(number) and number == math.floor(number)


def require_named(label_column: int | str | None, header: Sequence[str] | None,
                  skip: Sequence[int | str] = (), where: str = "the input") -> None:
    """Refuse ``label_column="auto"`` over a ``header`` (None: the rows have none) that names
    no label column: an error naming ``where`` and the columns (module notes)."""
    if label_column != AUTO or header is None:
        return
    shown = [str(header[i]) for i in _free(header, skip, len(header))]
    if named_label(shown) is not None:
        return
    tied = next(([n for n in shown if n.strip().lower() in tier] for tier in LABEL_NAMES
                 if any(n.strip().lower() in tier for n in shown)), [])
    which = (f"several columns are named like a label ({tied})" if tied else
             "no column is named like a label (label, target, class, y, click)")
    raise DataFormatError(
        f"{where}: {which}; the columns are {shown[:12]}{' ...' if len(shown) > 12 else ''}: "
        "name it with label_column= / --label-column (rows to predict only: labeled=False / "
        "--no-labels)")


def _free(names: Sequence[str] | None, skip: Sequence[int | str], n: int) -> list[int]:
    """The positions of the ``n`` columns that are not in ``skip``."""
    skipped = {_position(c, names, n) for c in skip} - {None}
    return [i for i in range(n) if i not in skipped]


def _position(column: int | str, names: Sequence[str] | None, n: int) -> int | None:
    """A column given by name or position as its position (None: not a column)."""
    if names is not None and column in names:
        return list(names).index(str(column))
    if isinstance(column, (int, np.integer)) or str(column).lstrip("-").isdigit():
        return int(column) % n if n else None
    return None


def ids_as_labels(labels: np.ndarray) -> bool:
    """Whether labels read like a row id, not a label: at least 20, all distinct whole
    numbers (Avazu's files start with an id column, a CSV of a database table with its key)."""
    labels = np.asarray(labels, dtype=np.float64)
    return bool(labels.size >= 20 and np.all(labels == np.round(labels))
                and np.unique(labels).size == labels.size)
