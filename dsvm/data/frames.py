"""pandas DataFrames (a whole frame, or one partition of a Dask DataFrame) as feature rows.

Columns of numbers (bool, ``boolean``, ``bool[pyarrow]``, NumPy numbers, nullable
``Int64``/``Float64``, pyarrow-backed numbers such as ``int64[pyarrow]``) are features as they
are. Columns of text (``object``, ``string``,
``string[pyarrow]``) or of pandas ``category`` are hashed exactly as ``dsvm convert
--categorical`` hashes them: the rows go through pyarrow and the same converter as Parquet and
CSV files (dsvm.data.arrow_blocks, dsvm.data.hashing), numeric columns first, hashed ones after,
so that a model trained on a frame predicts a converted dataset and the other way round.

Missing values (NaN, ``pd.NA``, None): in a numeric column an error that names the partition,
the column and the row (fill or drop them first: ``df.fillna(...)``, ``df.dropna()``), as
``convert`` refuses them without ``fill_missing``; in a hashed column no token, as ``convert``
(an empty string too). Any other column type (dates, durations, ...) is refused by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
import scipy.sparse as sp

from dsvm.data.arrow_blocks import BatchConverter, Where
from dsvm.data.hashing import DEFAULT_HASH_BITS, HashSpec


def is_number_dtype(dtype: Any) -> bool:
    """Whether a pandas dtype holds numbers: NumPy's, nullable ``Int64``/``boolean``, and
    pyarrow-backed ones. pandas does not call ``bool[pyarrow]`` numeric, yet it is what a
    comparison of a ``string[pyarrow]`` column gives (Dask's default strings: ``df.city ==
    "oslo"``): a 0/1 column, as NumPy's bool is."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(dtype):
        return True
    if _is_decimal(dtype):  # a database's NUMERIC column, as read_parquet gives it
        return True
    return bool(pd.api.types.is_numeric_dtype(dtype)) and getattr(dtype, "kind", "O") in "iuf"


def _is_decimal(dtype: Any) -> bool:
    import pyarrow as pa

    arrow = getattr(dtype, "pyarrow_dtype", None)
    return arrow is not None and bool(pa.types.is_decimal(arrow))


def objects_as_numbers(X: Any) -> Any:
    """A pandas DataFrame whose ``object`` columns hold numbers as Python objects
    (``decimal.Decimal``, as ``pd.read_parquet`` gives a database's NUMERIC column, or ints
    and floats) with those columns as float64; the frame as it is otherwise. Their dtype
    alone said text: each distinct number was hashed as a category of its own, and the model
    learnt its training rows by heart (training accuracy 1.0 on breast cancer's columns as
    decimals)."""
    import decimal
    import numbers

    found = []
    for c, dtype in X.dtypes.items():
        if not (isinstance(dtype, np.dtype) and dtype.kind == "O"):
            continue
        values = X[c].dropna().iloc[:NUMBERS_SAMPLE]
        if len(values) and all(isinstance(v, (decimal.Decimal, numbers.Real))
                               and not isinstance(v, (bool, np.bool_)) for v in values):
            found.append(c)
    return X.astype({c: np.float64 for c in found}) if found else X


def _kind(dtype: Any) -> str:
    """"numeric", "hashed" (text or category) or "other" for a pandas dtype."""
    import pandas as pd

    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(dtype):
        return "hashed"
    return "numeric" if is_number_dtype(dtype) else "other"


@dataclass
class FrameColumns:
    """Which columns of a frame are features as they are (``numeric``) and which are hashed
    (``spec.categorical``, None: none)."""

    numeric: list[str]
    spec: HashSpec | None = None
    dtype: np.dtype = np.dtype(np.float64)  # float32 where every numeric column is

    @property
    def hashed(self) -> list[str]:
        return [] if self.spec is None else list(self.spec.categorical)

    @property
    def n_features(self) -> int:
        return self.spec.n_features if self.spec is not None else len(self.numeric)

    def hashing(self) -> dict[str, Any] | None:
        """What a model trained on such frames keeps as ``hashing_`` (dataset attrs' form)."""
        return None if self.spec is None else self.spec.attrs()

    def features(self, part: Any, where: str = "DataFrame") -> np.ndarray | sp.csr_matrix:
        """The rows of ``part`` (of ``dtype``): dense, or CSR when columns are hashed."""
        values = check_missing(part, self.numeric, where, self.dtype)
        if self.spec is None:
            return values
        converter = BatchConverter(self.numeric, None, self.dtype, None, self.spec)
        block = converter.block(_record_batch(by_name(part), values, self.numeric, self.hashed,
                                              where),
                                Where(where))
        return sp.csr_matrix((block.data, block.indices, block.indptr),  # type: ignore[union-attr]
                             shape=(block.n_samples, self.spec.n_features))


def _to_numbers(col: Any, dtype: Any) -> str:
    """What to do with a column of ``dtype`` that is not a feature: a date or a duration has
    numbers in it (as text each timestamp would be a token of its own, refused as free text)."""
    kind = getattr(dtype, "kind", "")
    if kind == "M" or "datetime" in str(dtype) or "timestamp" in str(dtype):
        return (f"turn it into numbers first, e.g. its parts (df[{col!r}].dt.hour, "
                f".dt.dayofweek, .dt.month) or seconds since a start "
                f"((df[{col!r}] - start).dt.total_seconds())")
    if kind == "m" or "timedelta" in str(dtype) or "duration" in str(dtype):
        return f"turn it into numbers first, e.g. df[{col!r}].dt.total_seconds()"
    return "convert it to numbers (or to text, to hash it)"


def frame_columns(columns: Sequence[Any], dtypes: Sequence[Any],
                  hash_bits: int = DEFAULT_HASH_BITS) -> FrameColumns:
    """The features of a frame with ``columns`` of ``dtypes``: numbers as they are, text and
    category columns hashed into ``2**hash_bits`` features after them."""
    numeric: list[str] = []
    hashed: list[str] = []
    for col, dtype in zip(columns, dtypes):
        kind = _kind(dtype)
        if kind == "other":
            raise ValueError(f"Feature column {col!r} has dtype {dtype}: neither numbers nor "
                             f"text/category; {_to_numbers(col, dtype)}, or drop it.")
        (numeric if kind == "numeric" else hashed).append(str(col))
    spec = HashSpec(hashed, hash_bits, numeric) if hashed else None
    single = numeric and all(str(d) == "float32" for c, d in zip(columns, dtypes)
                             if str(c) in numeric)
    return FrameColumns(numeric, spec, np.dtype(np.float32 if single else np.float64))


# Text columns are checked for numbers on this many rows of each partition (or frame).
NUMBERS_SAMPLE = 1000
# A text column is taken for numbers with a missing-value marker when at least this share of
# the values sampled (and 20 of them) are numbers and some are not.
NUMBERS_SHARE = 0.95


@dataclass
class TextCount:
    """What a sample of a text column holds: values that read as numbers, values present,
    and the first that does not (with where it is: a partition and its row)."""

    numbers: int
    present: int
    example: str | None = None  # the first value that is not a number
    where: str = ""  # where ``example`` is (else ``number``)
    number: str | None = None  # where every value is a number: the first with a fraction

    def __add__(self, other: TextCount) -> TextCount:
        first = self if self.example is not None else other
        if first.example is None:
            first = self if self.number is not None else other
        return TextCount(self.numbers + other.numbers, self.present + other.present,
                         first.example, first.where, first.number)


def text_columns(columns: Sequence[Any], dtypes: Sequence[Any]) -> list[str]:
    """The columns of text (not pandas ``category``: a user's explicit categories) to hash."""
    return [str(c) for c, d in zip(columns, dtypes) if _kind(d) == "hashed"
            and not _is_category(d)]


def _is_category(dtype: Any) -> bool:
    import pandas as pd

    return isinstance(dtype, pd.CategoricalDtype)


def count_numbers(part: Any, columns: list[str], where: str) -> dict[str, TextCount]:
    """:class:`TextCount` of each text column over the first :data:`NUMBERS_SAMPLE` rows
    (rows named by position: a frame's index need not be unique)."""
    import pandas as pd

    counts = {}
    frame = by_name(part)
    for c in columns:
        values = frame[c].iloc[:NUMBERS_SAMPLE]
        rows = np.flatnonzero(values.notna().to_numpy())
        text = values.iloc[rows].astype(str)
        filled = (text.str.strip() != "").to_numpy()
        rows, text = rows[filled], text.iloc[np.flatnonzero(filled)]
        other = pd.to_numeric(text, errors="coerce").isna().to_numpy()
        numbers = int((~other).sum())
        if other.any():
            i = int(np.flatnonzero(other)[0])
            counts[c] = TextCount(numbers, int(other.size), text.iloc[i],
                                  f"{where}, row {int(rows[i])}")
            continue
        # all numbers: some not whole (a decimal column), or whole ones (ids, zip codes)
        fraction = np.flatnonzero(text.str.contains(r"[.eE]", regex=True).to_numpy())
        if fraction.size:
            i = int(fraction[0])
            counts[c] = TextCount(numbers, int(other.size), None, f"{where}, row {int(rows[i])}",
                                  text.iloc[i])
            continue
        counts[c] = TextCount(numbers, int(other.size))
    return counts


def warn_numbers_as_text(counts: Sequence[dict[str, TextCount]]) -> None:
    """Warn of each text column whose samples are numbers but for a few values: read as text
    because of a missing-value marker (UCI's ``"?"``), it would be hashed as one category per
    distinct number, and the numbers' order and size lost, silently. A column whose odd value
    is its own name is refused: a header line read as a row, which no marker explains."""

    from dsvm.exceptions import DataTypeWarning, warn

    totals: dict[str, TextCount] = {}
    for found in counts:
        for c, count in found.items():
            totals[c] = totals[c] + count if c in totals else count
    stored = {c: t for c, t in totals.items()
              if t.example is None and t.number is not None and t.numbers == t.present >= 20}
    if stored:
        c, t = next(iter(stored.items()))
        names = ", ".join(repr(n) for n in stored)
        warn(
            f"Feature column{'s' if len(stored) > 1 else ''} {names} "
            f"{'are' if len(stored) > 1 else 'is'} text, so hashed as categories, yet every "
            f"value sampled is a number ({c!r}: {t.number!r} at {t.where}); numbers stored "
            "as text (a decimal column that became strings, as dask.dataframe.from_pandas "
            "makes of Python Decimal objects) lose their order and size this way: convert "
            "them to numbers (astype(float)), or give a column the 'category' dtype if it is "
            "one.", DataTypeWarning)
    for c, t in totals.items():
        if t.example is None or t.present < 20 or t.numbers < NUMBERS_SHARE * t.present:
            continue
        if t.example.strip() == c:  # (no marker: a header line among the rows)
            raise ValueError(
                f"{t.where}: column {c!r} holds its own name among {t.numbers:,} numbers: a "
                "header line read as a row (files joined with their headers?); drop that "
                f"row (df[df[{c!r}] != {c!r}]) and read the column as numbers "
                "(pd.to_numeric).")
        warn(
            f"Feature column {c!r} is text, so it is hashed as categories, yet {t.numbers:,} "
            f"of the {t.present:,} values sampled are numbers; {t.where} holds {t.example!r}. "
            "If that marks a missing number, read the column as numbers (read_csv(..., "
            f"na_values=[{t.example!r}]) or pd.to_numeric(..., errors='coerce')) and fill or "
            "drop the missing values; if it is a category, give the column the 'category' "
            "dtype.", DataTypeWarning)


def columns_of_hashing(hashing: dict[str, Any]) -> FrameColumns:
    """The frame columns a model hashes (its ``hashing_``, from a frame or a dataset)."""
    numeric = [str(c) for c in hashing.get("numeric") or []]
    # the numeric columns transformed as at training (Criteo's counts: log1p)
    spec = HashSpec([str(c) for c in hashing["categorical"]], int(hashing["hash_bits"]),
                    numeric, hashing.get("numeric_transform", "none"))
    return FrameColumns(numeric, spec)


def by_name(part: Any) -> Any:
    """``part`` with its columns named by text, as the features are (a frame made from a
    NumPy array has the columns 0, 1, ...)."""
    if all(isinstance(c, str) for c in part.columns):
        return part
    return part.rename(columns=str)


def check_missing(part: Any, numeric: list[str], where: str,
                  dtype: Any = np.float64) -> np.ndarray:
    """The numeric columns of ``part`` as a C-ordered array of ``dtype``; a missing or
    infinite value is refused, naming where it is."""
    frame = by_name(part)[numeric]
    try:
        values = np.ascontiguousarray(frame.to_numpy(dtype=dtype, na_value=np.nan))
    except (ValueError, TypeError):  # text in a number column (one file of a folder, say)
        _raise_not_a_number(frame, where)
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(values.sum()):  # one pass, no mask, in the common case
            return values
    bad = ~np.isfinite(values)
    if not bad.any():
        return values
    r, c = (int(v) for v in np.argwhere(bad)[0])
    what = "a missing value (NaN/NA)" if np.isnan(values[r, c]) else f"{values[r, c]}"
    raise ValueError(f"{where}, column {numeric[c]!r}, row {r}: {what}; fill or drop missing "
                     "values first (df.fillna(...) or df.dropna()).")


def _raise_not_a_number(frame: Any, where: str) -> NoReturn:
    """The first value of ``frame`` that is not a number, named by column and row: a Parquet
    file whose column holds text where the others' hold numbers gave a bare "could not
    convert string to float"."""
    import pandas as pd

    for name in frame.columns:
        numbers = pd.to_numeric(frame[name], errors="coerce")
        bad = np.flatnonzero(numbers.isna().to_numpy() & frame[name].notna().to_numpy())
        if bad.size:
            r = int(bad[0])
            raise ValueError(
                f"{where}, column {name!r}, row {r}: {frame[name].iloc[r]!r} is not a number "
                f"(the column's type here: {frame[name].dtype}); give the column one type in "
                "every file: numbers, or text/category to hash it")
    raise ValueError(f"{where}: the columns {list(frame.columns)} do not convert to numbers.")


def _record_batch(part: Any, values: np.ndarray, numeric: list[str], hashed: list[str],
                  where: str) -> Any:
    """``part``'s feature columns as a pyarrow record batch (the numeric ones: ``values``)."""
    import pyarrow as pa

    arrays = [pa.array(values[:, j]) for j in range(len(numeric))]
    for c in hashed:
        try:
            arr = pa.array(part[c], from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ValueError(f"{where}, column {c!r}: its values cannot be hashed as text "
                             f"({' '.join(str(exc).split())[:200]}); give it one type "
                             "(df[col].astype(str)).") from None
        # a pyarrow-backed column (string[pyarrow], read_parquet's) comes as chunks
        arrays.append(arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr)
    return pa.RecordBatch.from_arrays(arrays, names=numeric + hashed)
