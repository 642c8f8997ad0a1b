"""Categorical columns through the hashing trick (#11 item 3).

Each ``column=value`` token of a row is hashed to one of ``2**hash_bits`` features with a sign,
exactly as scikit-learn's ``FeatureHasher(n_features=2**hash_bits, input_type="string",
alternate_sign=True)`` does on the row's list of tokens (signed 32-bit MurmurHash3, seed 0; the
index is ``abs(h) % n_features``, the sign that of ``h``; tokens that collide within a row
add up). Missing values (null, or an empty field in text) give no token. Numeric columns are
kept as they are, as the first features (or transformed, ``numeric_transform``: Criteo's
integer columns are counts with heavy tails, up to ~1e5, which no SVM trains on unscaled:
``"log1p"`` stores sign(x) log(1 + |x|), as click-log pipelines do); the hashed features follow.

Only the distinct values of a column in a batch are hashed (through FeatureHasher itself), so
the cost per row is NumPy indexing, not a Python call per token. ``HashSpec.attrs()`` is what
the dataset stores (attribute ``hashing``), so that raw rows can later be hashed identically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dsvm.exceptions import DataFormatError

SCHEME = ("sklearn.feature_extraction.FeatureHasher(input_type='string', alternate_sign=True): "
          "signed MurmurHash3_32 (seed 0) of the UTF-8 token 'column=value'")
MAX_HASH_BITS = 30
DEFAULT_HASH_BITS = 18  # VW's default -b
NUMERIC_TRANSFORMS = ("none", "log1p")


@dataclass
class HashSpec:
    """Which columns are hashed into how many features, and where the hashed block starts."""

    categorical: list[str]
    hash_bits: int
    numeric: list[str] = field(default_factory=list)
    numeric_transform: str = "none"
    dropped: list[str] = field(default_factory=list)  # columns left out (--drop): not features

    def __post_init__(self) -> None:
        b = self.hash_bits
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) \
                or not 1 <= b <= MAX_HASH_BITS:
            raise ValueError(f"hash_bits must be an int in [1, {MAX_HASH_BITS}]; got {b!r}")
        if not self.categorical:
            raise ValueError("hash_bits= needs categorical= columns to hash")
        check_numeric_transform(self.numeric_transform)

    @property
    def offset(self) -> int:
        """Index of the first hashed feature (after the numeric columns)."""
        return len(self.numeric)

    @property
    def n_features(self) -> int:
        return len(self.numeric) + 2 ** int(self.hash_bits)

    def attrs(self) -> dict[str, Any]:
        out = {"scheme": SCHEME, "hash_bits": int(self.hash_bits),
               "categorical": list(self.categorical), "numeric": list(self.numeric),
               "hashed_offset": self.offset, "token": "column=value", "missing": "no token"}
        if self.numeric_transform != "none":  # absent: as the specs written before it
            out["numeric_transform"] = self.numeric_transform
        if self.dropped:  # raw rows to predict may still carry them: dropped again
            out["dropped"] = sorted(self.dropped)
        return out


def check_numeric_transform(name: Any) -> str:
    if name not in NUMERIC_TRANSFORMS:
        raise ValueError(f"numeric_transform must be one of {list(NUMERIC_TRANSFORMS)}; "
                         f"got {name!r}")
    return str(name)


def transform_numeric(X: np.ndarray, name: str) -> np.ndarray:
    """The numeric columns ``X`` (float64, in place) as ``numeric_transform`` ``name`` says."""
    if name == "log1p":
        # the sign kept: Criteo's I2 holds small negative values (-1, -2, -3)
        np.copysign(np.log1p(np.abs(X)), X, out=X)
    return X


def hash_spec(categorical: Any, hash_bits: int | None, numeric: list[str],
              numeric_transform: str = "none", dropped: Any = ()) -> HashSpec | None:
    """The spec for ``categorical=``/``hash_bits=`` options (None when nothing is hashed)."""
    categorical = list(categorical or [])
    if not categorical:
        if hash_bits is not None:
            raise ValueError("hash_bits= needs categorical= columns to hash")
        if numeric_transform != "none":
            raise ValueError("numeric_transform= is for data with categorical= columns (the "
                             "spec stored with them is what applies it again at predict)")
        return None
    return HashSpec(categorical, DEFAULT_HASH_BITS if hash_bits is None else hash_bits,
                    list(numeric), numeric_transform, [str(c) for c in dropped])


def _hasher(bits: int) -> Any:
    from sklearn.feature_extraction import FeatureHasher

    return FeatureHasher(n_features=2 ** bits, input_type="string", alternate_sign=True)


def hash_tokens(tokens: list[str], bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(feature index, sign) of each token, computed by FeatureHasher itself."""
    if not tokens:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    m = _hasher(bits).transform([[t] for t in tokens])
    index = np.zeros(len(tokens), np.int64)
    sign = np.zeros(len(tokens), np.float64)
    rows = np.repeat(np.arange(len(tokens)), np.diff(m.indptr))
    index[rows] = m.indices
    sign[rows] = m.data
    return index, sign


def hashed_columns(
    columns: list[tuple[str, np.ndarray, np.ndarray]], bits: int, n_rows: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """COO entries (row, hashed feature, value) of categorical columns.

    ``columns``: (name, codes, values) per column, where ``values`` are a column's distinct
    values as strings and ``codes`` (n_rows,) index into them, -1 for a missing value.
    """
    rows, cols, vals = [], [], []
    for name, codes, values in columns:
        index, sign = hash_tokens([f"{name}={v}" for v in values], bits)
        present = np.flatnonzero(codes >= 0)
        rows.append(present)
        cols.append(index[codes[present]])
        vals.append(sign[codes[present]])
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


# A hashed column is refused as free text when, among at least FREE_TEXT_MIN_VALUES values of
# a batch, at least half are distinct and at least half of those hold several words.
FREE_TEXT_MIN_VALUES = 50
FREE_TEXT_SAMPLE = 1000


def refuse_free_text(name: str, codes: np.ndarray, values: np.ndarray, where: Any) -> None:
    """Refuse a text column of sentences (a review, a title, a message) given to be hashed.

    Hashing takes a whole value as one token (``column=value``), right for categories (a city,
    a device id) but not for free text: nearly every row gets a feature of its own, the model
    learns the training rows by heart and predicts new ones at the majority rate (SST-2's
    sentences: 0.51 held-out accuracy, exit 0). Words as features are what such a column
    needs, and that is the user's vectoriser's job. ``codes``/``values``: as
    :func:`arrow_codes` gives them; ``where``: a :class:`dsvm.data.arrow_blocks.Where`."""
    refuse_dates(name, codes, values, where)
    present = codes[codes >= 0]
    # (the dictionary bounds the distinct values: a category column stops here, unsorted)
    if present.size < FREE_TEXT_MIN_VALUES or values.size * 2 < present.size:
        return
    used = np.unique(present)
    if used.size * 2 < present.size:
        return
    sample = used[:FREE_TEXT_SAMPLE]  # (a column of ids: no Python loop over all of them)
    worded = [int(i) for i in sample if len(str(values[i]).split()) > 1]
    if len(worded) * 2 < sample.size:
        return
    first = int(np.flatnonzero(codes == worded[0])[0])
    example = str(values[worded[0]])
    example = example if len(example) <= 60 else example[:57] + "..."
    counted = (f"{used.size:,} of the {present.size:,} values here are distinct, "
               f"{len(worded):,} of the first {sample.size:,} several words")
    if _dates([str(values[i]) for i in worded[:20]]):
        raise _dates_error(name, first, example, counted, where)
    raise DataFormatError(
        f"{where.row(name, first)}: {example!r}: the column holds free text ({counted}). A "
        "text column is hashed as one feature per distinct value, so each row would get a "
        "feature of its own and the model could not generalise: turn the text into word "
        "features first (scikit-learn's HashingVectorizer, then fit on its sparse matrix or "
        "write it with dsvm.write_arrays), or drop the column.")


# A date written as text: 2024-01-31, 2024/1/31, 31.01.2024, 1/31/24, with a time or not.
DATE_TEXT = re.compile(r"(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})"
                       r"([ T]\d{1,2}:\d{2}.*)?")


def refuse_dates(name: str, codes: np.ndarray, values: np.ndarray, where: Any) -> None:
    """Refuse a text column of dates given to be hashed, however few days it has.

    Hashed, each day is a category of its own: rows of days the training data has not seen
    (every later day) get nothing from it, and what a date says (the weekday, the season,
    the time since) is lost. Timestamps are caught as free text too; a date alone is one
    token, and a few hundred days over many rows read as any category column."""
    texts = [str(v) for v in values[:40] if v][:20]
    if len(texts) < 2 or not all(DATE_TEXT.fullmatch(t) for t in texts) or not _dates(texts):
        return
    present = codes[codes >= 0]
    first = int(np.flatnonzero(codes >= 0)[0])
    counted = f"{np.unique(present).size:,} distinct in {present.size:,} values here"
    raise _dates_error(name, first, str(values[codes[first]]), counted, where)


def _dates_error(name: str, first: int, example: str, counted: str,
                 where: Any) -> DataFormatError:
    return DataFormatError(
        f"{where.row(name, first)}: {example!r}: the column holds dates or times as text "
        f"({counted}), each a feature of its own if hashed: parse it (read_csv(..., "
        f"parse_dates=[{name!r}]) or pd.to_datetime) and turn it into numbers (its "
        ".dt.hour, .dt.dayofweek, seconds since a start), or drop the column.")


def _dates(texts: list[str]) -> bool:
    """Whether ``texts`` all read as dates or times (pandas' parser, any of its formats)."""
    import warnings

    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ("Could not infer format": each is parsed alone)
        parsed = pd.to_datetime(pd.Series(texts), errors="coerce", format="mixed")
    return bool(len(texts)) and not parsed.isna().any()


def arrow_codes(arr: Any) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct values as str) of a pyarrow array; null (and "") -> code -1."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_dictionary(arr.type):
        if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
            arr = arr.cast(pa.string())
        arr = pc.dictionary_encode(arr)
    values = arr.dictionary.to_pylist()
    codes = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    values = ["" if v is None else str(v) for v in values]
    empty = [i for i, v in enumerate(values) if v == ""]
    if empty:  # an empty text field is a missing value, as in Criteo's files
        codes[np.isin(codes, empty)] = -1
    return codes, np.asarray(values, dtype=object)
