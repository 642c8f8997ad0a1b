"""Row blocks from pyarrow record batches (Parquet, and CSV/TSV with categorical columns).

Numeric columns become features as they are; categorical columns are hashed (dsvm.data.hashing)
into a CSR block; a missing numeric value is an error naming the file, the row group or line,
the column and the row, unless ``fill_missing`` gives the value to use. A text label column
(``names``) is stored as codes of its names (dsvm.data.label_names).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import CSRBlock, DenseBlock
from dsvm.data.fill import Fill, fill_for
from dsvm.data.hashing import (
    HashSpec,
    arrow_codes,
    hashed_columns,
    refuse_free_text,
    transform_numeric,
)
from dsvm.data.label_names import LabelNames
from dsvm.data.text import FLOAT32_HINT, beyond_float32
from dsvm.exceptions import DataFormatError


@dataclass
class Where:
    """Where a batch came from, to name a row in messages: a Parquet row group (``group``) or
    a text file's lines (``first_line``, the 1-based line of the batch's first row)."""

    path: str
    group: int | None = None
    offset: int = 0
    first_line: int | None = None

    def row(self, column: str, r: int) -> str:
        if self.first_line is not None:
            return f"{self.path}, line {self.first_line + r}, column {column!r}"
        if self.group is None:  # (a DataFrame's partition)
            return f"{self.path}, column {column!r}, row {self.offset + r}"
        return (f"{self.path}, row group {self.group}, column {column!r}, row {self.offset + r} "
                "of the row group")


def _as_numbers(arr: Any, column: str, where: Where) -> Any:
    """A pyarrow column as float64; a value that is not a number (a text column in one
    Parquet file of a folder whose others hold numbers) named by its row, not pyarrow's "Failed
    to parse string: 'forty' as a scalar of type double" alone (#25)."""
    import pyarrow as pa

    try:
        return arr.cast("float64")
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        for r, value in enumerate(arr.to_pylist()):
            try:
                float(value if value is not None else "nan")
            except (TypeError, ValueError):
                raise DataFormatError(
                    f"{where.row(column, r)}: {value!r} is not a number (the column has type "
                    f"{arr.type} here; give it numbers, or hash it as categorical)") from None
        raise DataFormatError(f"{where.row(column, 0)}: {' '.join(str(exc).split())}") from None


@dataclass
class BatchConverter:
    """Turns a record batch into a block: ``numeric`` columns, hashed ``spec.categorical``."""

    numeric: list[str]
    label: str | None
    dtype: np.dtype
    fill_missing: Fill = None  # (a number, or per column: dsvm.data.fill; not "mean")
    spec: HashSpec | None = None
    names: LabelNames | None = None  # the label column holds text: its names

    @property
    def n_features(self) -> int:
        return self.spec.n_features if self.spec is not None else len(self.numeric)

    def present(self, batch: Any, where: Where) -> dict[str, np.ndarray]:
        """The numeric columns' present values (float64), for their means."""
        import pyarrow.compute as pc

        out = {}
        for c in self.numeric:
            arr = batch.column(c)
            if hasattr(arr, "dictionary_decode"):
                arr = arr.dictionary_decode()
            numbers = _as_numbers(pc.drop_null(arr), c, where)
            out[c] = np.asarray(numbers.to_numpy(zero_copy_only=False), dtype=np.float64)
        return out

    def values(self, batch: Any, column: str, where: Where, fill: Fill) -> np.ndarray:
        """A column as float64; a missing value is an error unless ``fill`` gives one."""
        import pyarrow.compute as pc

        arr = batch.column(column)
        if hasattr(arr, "dictionary_decode"):
            arr = arr.dictionary_decode()
        fill = fill_for(fill, column)
        if arr.null_count:
            if fill is None:
                r = int(np.flatnonzero(np.asarray(pc.is_null(arr)))[0])
                raise DataFormatError(
                    f"{where.row(column, r)}: missing value (pass fill_missing= / "
                    "--fill-missing VALUE to use a value instead)")
            arr = pc.fill_null(_as_numbers(arr, column, where), fill)
        out = np.asarray(_as_numbers(arr, column, where).to_numpy(zero_copy_only=False))
        if not np.isfinite(out).all():
            r = int(np.flatnonzero(~np.isfinite(out))[0])
            raise DataFormatError(f"{where.row(column, r)}: {out[r]} is not a finite number")
        huge = beyond_float32(out, self.dtype)
        if huge.size and column != self.label:
            r = int(huge[0])
            raise DataFormatError(f"{where.row(column, r)}: {out[r]:.6g} is {FLOAT32_HINT}")
        return out

    def labels(self, batch: Any, where: Where) -> np.ndarray:
        if self.label is None:
            return np.full(batch.num_rows, np.nan)
        if self.names is not None:
            return self.text_labels(batch, where)
        return self.values(batch, self.label, where, None)

    def text_labels(self, batch: Any, where: Where) -> np.ndarray:
        """Codes of the label column's names: each distinct name of the batch is looked up
        once (a dictionary encoding), not each row."""
        import pyarrow.compute as pc

        assert self.label is not None and self.names is not None
        arr = batch.column(self.label)
        if arr.null_count:
            r = int(np.flatnonzero(np.asarray(pc.is_null(arr)))[0])
            raise DataFormatError(f"{where.row(self.label, r)}: missing label")
        if not hasattr(arr, "dictionary_decode"):
            arr = arr.cast("string").dictionary_encode()
        names = np.asarray(arr.dictionary.cast("string").to_pylist(), dtype=object)
        indices = np.asarray(arr.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        # only the names the rows use: a slice of a dictionary column keeps the whole dictionary
        used = np.unique(indices)
        own = np.flatnonzero(names[used] == self.label)
        if own.size:  # (text features too: nothing else in that row fails to parse)
            r = int(np.flatnonzero(indices == used[own[0]])[0])
            raise DataFormatError(
                f"{where.row(self.label, r)}: the label {self.label!r} is the column's own "
                "name: a header line among the rows (files joined with their headers?)")
        codes = np.zeros(names.shape[0], dtype=np.float64)
        codes[used] = self.names.encode(names[used])
        return codes[indices]

    @staticmethod
    def hashed(batch: Any, column: str, where: Where) -> tuple[str, np.ndarray, np.ndarray]:
        """(name, codes, distinct values) of a column to hash; free text is refused."""
        codes, values = arrow_codes(batch.column(column))
        refuse_free_text(column, codes, values, where)
        return column, codes, values

    def block(self, batch: Any, where: Where) -> DenseBlock | CSRBlock:
        n = batch.num_rows
        X = np.empty((n, len(self.numeric)), dtype=np.float64)
        for j, c in enumerate(self.numeric):
            X[:, j] = self.values(batch, c, where, self.fill_missing)
        y = self.labels(batch, where)
        if self.spec is None:
            return DenseBlock(X=X.astype(self.dtype, copy=False), y=y)
        # the transform on float64 values, then the dtype, as on a float64 column
        X = transform_numeric(X, self.spec.numeric_transform).astype(self.dtype, copy=False)
        rows, cols = np.nonzero(X)
        hr, hc, hv = hashed_columns([self.hashed(batch, c, where)
                                     for c in self.spec.categorical],
                                    int(self.spec.hash_bits), n)
        m = sp.csr_matrix(
            (np.concatenate([X[rows, cols].astype(np.float64), hv]),
             (np.concatenate([rows, hr]), np.concatenate([cols, hc + self.spec.offset]))),
            shape=(n, self.spec.n_features))
        m.sum_duplicates()
        m.eliminate_zeros()  # two tokens of a row that collide with opposite signs
        return CSRBlock(indptr=m.indptr.astype(np.int64), indices=m.indices.astype(np.int32),
                        data=m.data.astype(self.dtype), y=y, n_features=self.spec.n_features)
