"""Parquet (pyarrow) as dense row blocks: one file, a directory of files, or a URL glob.

Row groups are streamed in batches of about ``BATCH_BYTES`` of feature values, so memory stays
bounded whatever the file size. Features are the numeric (and boolean) columns other than the
label, or the ``feature_columns`` given; a column of any other type is an error unless it is
declared categorical (hashed, see dsvm.data.hashing). Missing values are an error naming the
file, row group, column and row, unless ``fill_missing`` gives the value to use instead.
The label column holds numbers (booleans: 0/1) or text (string or category): text labels are
stored as codes with the dataset's ``label_names`` (dsvm.data.label_names); the first file's
schema says which.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np

from dsvm.data.arrow_blocks import BatchConverter, Where
from dsvm.data.blocks import CSRBlock, DenseBlock
from dsvm.data.fill import MEAN, Fill, column_means
from dsvm.data.hashing import hash_spec
from dsvm.data.label_column import AUTO, require_named, resolve_label_column
from dsvm.data.label_names import LabelNames
from dsvm.data.location import files_of
from dsvm.exceptions import DataFormatError

BATCH_BYTES = 16 << 20
PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")


def is_parquet_path(src: str | os.PathLike[str], storage_options: dict | None = None) -> bool:
    """A name ending in .parquet (a file, a glob or a dataset directory), or a local directory
    holding Parquet files."""
    name = os.fspath(src).rstrip("/")
    if name.lower().endswith(PARQUET_SUFFIXES):
        return True
    if "://" not in name and os.path.isdir(name):
        return any(f.lower().endswith(PARQUET_SUFFIXES) for _, _, fs in os.walk(name)
                   for f in fs)
    return False


def index_columns(schema: Any) -> set[str]:
    """The columns pandas (or dask) stored a frame's index in (``__index_level_0__``,
    ``__null_dask_index__``, as its metadata lists them): row labels, not the user's data."""
    listed = (schema.pandas_metadata or {}).get("index_columns", [])
    return {c for c in listed if isinstance(c, str)}


def column_names(src: str | os.PathLike[str], storage_options: dict | None = None) -> list[str]:
    """The data columns of Parquet rows (their first file's schema, without a stored index)."""
    import pyarrow.parquet as pq

    fs, paths = _expand(src, storage_options)
    with fs.open(paths[0], "rb") as f:
        schema = pq.ParquetFile(f).schema_arrow
    index = index_columns(schema)
    return [str(n) for n in schema.names if n not in index]


def _expand(src: str | os.PathLike[str], storage_options: dict | None) -> tuple[Any, list[str]]:
    """The filesystem and the sorted Parquet files of a file, directory or glob."""
    return files_of(src, storage_options, "Parquet")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return f"{type(exc).__name__}: {text[:200]}"


def _kind_of(arrow_type: Any) -> str:
    import pyarrow.types as pt

    if pt.is_boolean(arrow_type) or pt.is_integer(arrow_type) or pt.is_floating(arrow_type) \
            or pt.is_decimal(arrow_type):
        return "numeric"
    if pt.is_dictionary(arrow_type):
        return _kind_of(arrow_type.value_type)
    if pt.is_string(arrow_type) or pt.is_large_string(arrow_type):
        return "text"
    return "other"


class ParquetSource:
    """Dense row blocks from Parquet; see the module docstring."""

    kind = "parquet"
    nnz = None

    def __init__(
        self, src: str | os.PathLike[str], *, label_column: int | str | None = None,
        feature_columns: Sequence[str] | None = None, fill_missing: Fill = None,
        dtype: Any = np.float32, storage_options: dict | None = None,
        categorical: Sequence[str] = (), hash_bits: int | None = None,
        drop: Sequence[str] = (),
    ) -> None:
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:  # pragma: no cover - pyarrow is a dependency
            raise ImportError("reading Parquet needs pyarrow: pip install pyarrow") from exc
        self.name = os.fspath(src)
        self.dtype = np.dtype(dtype)
        self.fill_missing = fill_missing
        self.fs, self.files = _expand(src, storage_options)
        self._pq = pq
        schema = self._open(self.files[0]).schema_arrow
        if label_column == AUTO:  # the column named like a label (not an index)
            shown = [n for n in schema.names if n not in set(index_columns(schema))]
            require_named(label_column, shown, [*drop, *categorical], self.name)
            label_column = resolve_label_column(label_column, shown,
                                                skip=[*drop, *categorical])
            if isinstance(label_column, int) and shown:
                label_column = shown[label_column]
        if isinstance(label_column, (int, np.integer)) and not isinstance(label_column, bool):
            if not -len(schema.names) <= label_column < len(schema.names):
                raise DataFormatError(f"{self.files[0]}: label_column= / --label-column "
                                      f"{label_column} is out of range for "
                                      f"{len(schema.names)} columns")
            label_column = schema.names[label_column]
        self.label_column = cast("str | None", label_column)  # an index became its name above
        self.labeled = label_column is not None
        absent = [c for c in drop if c not in schema.names]
        if absent:
            raise DataFormatError(f"{self.files[0]}: drop= / --drop {absent[0]!r} is not a column; "
                                  f"the columns are {list(schema.names)}")
        self.dropped = set(drop)
        self.categorical = [c for c in categorical if c not in self.dropped]
        self.columns = self._feature_columns(schema, feature_columns)
        self.spec = hash_spec(self.categorical, hash_bits, self.columns, dropped=self.dropped)
        self.sparse = self.spec is not None
        text = self.labeled and _kind_of(schema.field(self.label_column).type) == "text"
        self.label_names = LabelNames(self.name) if text else None
        self.converter = BatchConverter(self.columns, self.label_column, self.dtype,
                                        None if fill_missing == MEAN else fill_missing,
                                        self.spec, self.label_names)
        self.n_features: int | None = self.converter.n_features
        self.n_samples = sum(self._open(f).metadata.num_rows for f in self.files)
        if fill_missing == MEAN:  # one pass first, for the means (dsvm.data.fill)
            self.converter.fill_missing = column_means(self.columns, (
                self.converter.present(batch, Where(path, group, offset))
                for batch, path, group, offset in self.batches()))

    @property
    def fill_values(self) -> dict[str, float] | None:
        """The columns' fills computed for ``fill_missing="mean"`` (None otherwise)."""
        fill = self.converter.fill_missing
        return fill if isinstance(fill, dict) and self.fill_missing == MEAN else None

    @property
    def label_name(self) -> str | None:
        return self.label_column

    @property
    def feature_names(self) -> list[str] | None:
        """The numeric feature columns in order (None when hashed: ``spec`` names them)."""
        return None if self.spec is not None else list(self.columns)

    def _open(self, path: str) -> Any:
        try:
            return self._pq.ParquetFile(self.fs.open(path, "rb"))
        except Exception as exc:  # pyarrow raises ArrowInvalid/OSError for damaged files
            raise DataFormatError(
                f"{path}: not a readable Parquet file ({_one_line(exc)})") from None

    def _feature_columns(self, schema: Any, given: Sequence[str] | None) -> list[str]:
        names = list(schema.names)
        first = self.files[0]
        for what, listed in (("label_column", [self.label_column] if self.labeled else []),
                             ("feature_columns", list(given or [])),
                             ("categorical", self.categorical)):
            missing = [c for c in listed if c not in names]
            if missing:
                raise DataFormatError(
                    f"{first}: {what} {missing[0]!r} is not a column; the columns are {names}")
        if self.labeled and _kind_of(schema.field(self.label_column).type) == "other":
            raise DataFormatError(
                f"{first}: label column {self.label_column!r} has type "
                f"{schema.field(self.label_column).type}; labels must be numbers or text")
        # (a frame's stored index is no feature unless named: a filtered frame's row numbers
        # were trained on as a column)
        skip = {self.label_column, *self.categorical, *index_columns(schema)}
        cols = list(given) if given is not None else [c for c in names if c not in skip]
        cols = [c for c in cols if c not in self.dropped]
        for c in cols:
            kind = _kind_of(schema.field(c).type)
            if c not in self.categorical and kind != "numeric":
                fix = ("hash it (categorical= / --categorical)" if kind == "text" else
                       "store it as numbers")  # (a timestamp's hashes would mean nothing)
                raise DataFormatError(
                    f"{first}: column {c!r} has type {schema.field(c).type}, not a number; "
                    f"{fix} or leave it out (drop= / --drop)")
        if not cols and not self.categorical:
            raise DataFormatError(f"{first}: no feature columns (the columns are {names})")
        return [c for c in cols if c not in self.categorical]

    def _batch_rows(self) -> int:
        width = len(self.columns) + 1 + 4 * len(self.categorical)  # a token costs ~32 bytes
        return max(1024, BATCH_BYTES // max(1, 8 * width))

    def batches(self) -> Iterator[tuple[Any, str, int, int]]:
        """``(record batch, file, row group, first row of the batch in its row group)``."""
        wanted = self.columns + self.categorical + ([self.label_column] if self.labeled else [])
        for path in self.files:
            pf = self._open(path)
            names = pf.schema_arrow.names
            absent = [c for c in wanted if c not in names]
            if absent:
                raise DataFormatError(f"{path}: column {absent[0]!r} is missing in this file")
            for group in range(pf.num_row_groups):
                offset = 0
                try:
                    it = pf.iter_batches(batch_size=self._batch_rows(), row_groups=[group],
                                         columns=wanted, use_threads=False)
                    for batch in it:
                        yield batch, path, group, offset
                        offset += batch.num_rows
                except (OSError, ValueError) as exc:  # a damaged page or column chunk
                    if isinstance(exc, DataFormatError):
                        raise
                    raise DataFormatError(
                        f"{path}, row group {group}: cannot be read ({_one_line(exc)})"
                    ) from None

    def blocks(self, n_features: int | None = None) -> Iterator[DenseBlock | CSRBlock]:
        for batch, path, group, offset in self.batches():
            yield self.converter.block(batch, Where(path, group, offset))

    def close(self) -> None:
        pass
