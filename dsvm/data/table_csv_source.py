"""CSV/TSV with categorical columns (and Criteo's layout) through pyarrow's streaming CSV reader.

The plain numeric CSV reader (dsvm.data.csv_source) parses numbers only; text with categorical
columns, or with missing values to fill (``fill_missing=``: empty fields, NA, NaN, null...),
goes through ``pyarrow.csv.open_csv`` instead, a block of about ``BLOCK_BYTES`` at a
time (bounded memory), and each record batch becomes a block as for Parquet
(dsvm.data.arrow_blocks): numeric columns as they are, categorical columns hashed.

``--format criteo``: Criteo's display-advertising files (``train.txt``): no header, tab
separated, a 0/1 label, 13 integer columns I1..I13, 26 categorical columns C1..C26 (hex
strings); empty fields are missing values: no token for a categorical column, 0 (not stored)
for an integer column unless ``fill_missing`` says otherwise. The integer columns are counts
with heavy tails: they are stored as sign(x) log(1 + |x|) (``numeric_transform="log1p"``,
the default for this format; see dsvm.data.hashing).

A label column of text names ("yes"/"no"; the first data row says, as for the plain CSV reader)
is read as strings and stored as codes with the dataset's ``label_names``
(dsvm.data.label_names).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from dsvm.data.arrow_blocks import BatchConverter, Where
from dsvm.data.blocks import CSRBlock, DenseBlock
from dsvm.data.csv_source import (
    TEXT_COLUMNS,
    TEXT_LABELS,
    _first_lines,
    _split_fields,
    decimal_comma,
    ends_with_delimiters,
    non_blank_lines,
    position,
    repeated_header,
    sampled_rows,
    second_fields,
    sniff_delimiter,
    sniff_labels,
    text_labels,
    with_points,
)
from dsvm.data.fill import MEAN, Fill, column_means
from dsvm.data.hashing import hash_spec
from dsvm.data.label_column import AUTO, headerless_label, require_named, resolve_label_column
from dsvm.data.label_names import LabelNames
from dsvm.data.text import (
    is_number,
    is_truth_word,
    iter_text_blocks,
    open_text,
    text_encoding,
)
from dsvm.exceptions import DataFormatError

BLOCK_BYTES = 8 << 20
# pyarrow's message for a field that is not a number (with "Row #N: " in some versions and
# code paths: seen in a pytest-xdist worker, absent in a plain process, pyarrow 26)
_NOT_A_NUMBER = re.compile(r"CSV column #(?P<column>\d+): (?:Row #\d+: )?CSV conversion error "
                           r"to \w+: invalid value '(?P<value>.*)'")
_FIELD_COUNT = re.compile(r"Expected (?P<expected>\d+) columns, got (?P<got>\d+)")
_TRAILING = "__dsvm_after_the_trailing_delimiter__"  # (csv_source.ends_with_delimiters)
CRITEO_COLUMNS = (["label"] + [f"I{i}" for i in range(1, 14)]
                  + [f"C{i}" for i in range(1, 27)])


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _has_header(fields: list[str], categorical: Sequence[int | str],
                second: list[str] | None, label_column: int | str | None) -> bool:
    """Categorical columns named: the first line must be a header. Given by position: it is
    one when a field of another column is not a number, unless that is only the label's and
    the second line's label is text too (rows with text labels: :func:`sniff_labels`)."""
    if not all(isinstance(c, (int, np.integer)) or str(c).lstrip("-").isdigit()
               for c in categorical):
        return True
    cats = {int(c) % len(fields) for c in categorical}
    header = not all(is_number(f) for i, f in enumerate(fields) if f and i not in cats)
    return sniff_labels(fields, second, position(label_column, len(fields)), header,
                        frozenset(cats))


class TableCSVSource:
    """Delimited text with hashed categorical columns, or with missing values to fill; see the
    module docstring."""

    kind = "csv"
    nnz = None
    n_samples: int | None = None

    def __init__(
        self, src: str | os.PathLike[str], *, label_column: int | str | None = 0,
        categorical: Sequence[int | str] = (), hash_bits: int | None = None,
        delimiter: str | None = None, dtype: Any = np.float32,
        storage_options: dict | None = None, fill_missing: Fill = None,
        column_names: Sequence[str] | None = None, drop: Sequence[int | str] = (),
        numeric_transform: str = "none",
    ) -> None:
        self.src, self.name = src, os.fspath(src)
        self.dtype = np.dtype(dtype)
        self.storage_options = storage_options
        self.fill_missing = fill_missing
        lines = _first_lines(src, storage_options, 2)  # the second: are labels text?
        line, self.header_line = lines[0] if lines else (b"", 0)
        if not line:
            raise DataFormatError(f"{self.name}: the file has no data lines")
        text = line.decode("utf-8", "replace").rstrip("\r")
        self.delimiter = delimiter or sniff_delimiter(self.name, lines)
        fields = _split_fields(text, self.delimiter, f"{self.name}, line {self.header_line}")
        second = second_fields(lines, self.delimiter, self.name)
        self.trailing = column_names is None and ends_with_delimiters(lines, self.delimiter)
        self.encoding = text_encoding(src, storage_options)
        if self.trailing:  # (read as one more column, never included)
            fields, second = fields[:-1], None if second is None else second[:-1]
        self.decimal_comma = decimal_comma(self.delimiter, [fields, second])
        if self.decimal_comma:
            fields, second = with_points(fields) or [], with_points(second)
        self.label_reason: str | None = None  # (why the label is not the first column)
        if column_names is not None:
            self.has_header, self.names = False, list(column_names)
            if len(fields) != len(self.names):
                raise DataFormatError(
                    f"{self.name}, line {self.header_line}: found {len(fields)} fields, "
                    f"expected {len(self.names)}")
        else:
            given = label_column
            if label_column == AUTO:  # a label named in the header, if the line is one
                header = _has_header(fields, categorical, second, 0)
                label_column = resolve_label_column(label_column, fields if header else None,
                                                    skip=[*drop, *categorical],
                                                    n_cols=len(fields))
            self.has_header = _has_header(fields, categorical, second, label_column)
            self.names = fields if self.has_header else [str(i) for i in range(len(fields))]
            require_named(given, fields if self.has_header else None, [*drop, *categorical],
                          self.name)
            if given == AUTO and not self.has_header:
                label_column, self.label_reason = headerless_label(
                    sampled_rows(src, storage_options, self.delimiter, self.trailing,
                                 self.decimal_comma, self.name), [*drop, *categorical],
                    len(fields))
        self.label = None if label_column is None else self._column(label_column, "label_column")
        first_row = second if self.has_header else fields
        named = self.label is not None and text_labels(first_row, self.names.index(self.label))
        self.label_names = LabelNames(self.name) if named else None
        cats = [self._column(c, "categorical") for c in categorical]
        dropped = {self._column(c, "drop= / --drop") for c in drop}
        cats = [c for c in cats if c not in dropped]
        numeric = [c for c in self.names if c != self.label and c not in cats + list(dropped)]
        self.spec = hash_spec(cats, hash_bits, numeric, numeric_transform, dropped)
        # True/False columns (pandas' to_csv of a bool column) are read as bools, then 1/0
        row = first_row or []
        self.bools = [c for c in numeric if self.names.index(c) < len(row)
                      and is_truth_word(row[self.names.index(c)])]
        self.labeled = self.label is not None
        self.converter = BatchConverter(numeric, self.label, self.dtype,
                                        None if fill_missing == MEAN else fill_missing,
                                        self.spec, self.label_names)
        if fill_missing == MEAN:  # one pass first, for the means (dsvm.data.fill)
            self.fill_with(column_means(numeric, self.present_values()))
        self.n_features: int | None = self.converter.n_features
        self.sparse = self.spec is not None  # (numbers only with fill_missing=: dense rows)

    @property
    def label_name(self) -> str | None:
        return self.label

    @property
    def feature_names(self) -> list[str] | None:
        """The numeric columns' header names (None when hashed: ``spec`` names the columns,
        or without a header)."""
        if self.spec is not None or not self.has_header:
            return None
        return list(self.converter.numeric)

    def _column(self, col: int | str, what: str) -> str:
        if isinstance(col, str) and col in self.names:
            return col
        if isinstance(col, str) and col.lstrip("-").isdigit():
            col = int(col)
        if isinstance(col, (int, np.integer)) and -len(self.names) <= col < len(self.names):
            return self.names[col]
        raise DataFormatError(
            f"{self.name}: {what} {col!r} is not a column; the columns are {self.names}")

    def _reader(self, f: Any) -> Any:
        import pyarrow as pa
        import pyarrow.csv as pcsv

        types = {c: pa.bool_() if c in self.bools else pa.float64()
                 for c in self.converter.numeric}
        if self.label is not None:
            types[self.label] = pa.float64() if self.label_names is None else pa.string()
        for c in self.spec.categorical if self.spec else []:
            types[c] = pa.string()
        return pcsv.open_csv(
            f, read_options=pcsv.ReadOptions(
                block_size=BLOCK_BYTES, column_names=self.names + [_TRAILING] * self.trailing,
                skip_rows=self.header_line if self.has_header else self.header_line - 1),
            parse_options=pcsv.ParseOptions(delimiter=self.delimiter),
            convert_options=pcsv.ConvertOptions(
                column_types=types, strings_can_be_null=True, include_columns=list(types),
                decimal_point="," if self.decimal_comma else "."))

    def blocks(self, n_features: int | None = None) -> Iterator[DenseBlock | CSRBlock]:
        for batch, where in self._batches():
            yield self.converter.block(batch, where)

    def _batches(self) -> Iterator[tuple[Any, Where]]:
        line = self.header_line + int(self.has_header)
        with open_text(self.src, self.storage_options) as f:
            try:
                reader = self._reader(f)
                while True:
                    try:
                        batch = reader.read_next_batch()
                    except StopIteration:
                        return
                    yield batch, Where(self.name, first_line=line)
                    line += batch.num_rows
            except DataFormatError:
                raise
            except (ValueError, OSError) as exc:  # pyarrow's ArrowInvalid is a ValueError
                raise DataFormatError(self._located(exc, line)) from None

    def count_rows(self) -> int:
        """The rows, counted as lines (for a shuffle's buckets): a pass without parsing."""
        self.n_samples = (non_blank_lines(self.src, self.storage_options)
                          - int(self.has_header))
        return self.n_samples

    def present_values(self) -> Iterator[dict[str, np.ndarray]]:
        """Each batch's present numeric values (a pass over the file), for their means."""
        return (self.converter.present(b, w) for b, w in self._batches())

    def fill_with(self, means: dict[str, float]) -> None:
        """Fill the missing values with ``means`` (of this file, or of several:
        :class:`dsvm.data.csv_files.CSVFiles`), as ``fill_missing="mean"`` does."""
        self.fill_missing = MEAN
        self.converter.fill_missing = means

    @property
    def fill_values(self) -> dict[str, float] | None:
        """The columns' fills computed for ``fill_missing="mean"`` (None otherwise)."""
        fill = self.converter.fill_missing
        return fill if isinstance(fill, dict) and self.fill_missing == MEAN else None

    def _located(self, exc: BaseException, line: int) -> str:
        """pyarrow's message for a field that is not a number ("In CSV column #4: CSV
        conversion error to double: invalid value 'no'") with the line and the column's name:
        the lines from ``line`` on are read again up to the first such field (#25)."""
        found = _NOT_A_NUMBER.search(str(exc))
        if found is not None:
            col, value = int(found["column"]), found["value"]
            for number, fields in self._lines_from(line):
                if col < len(fields) and fields[col] == value:
                    header = self.names if self.has_header else None
                    said = repeated_header(self.name, number, fields, header, self.header_line)
                    if said is not None:
                        return said
                    name = self.names[col] if col < len(self.names) else str(col)
                    hint = TEXT_LABELS if name == self.label else TEXT_COLUMNS
                    return (f"{self.name}, line {number}, column {name!r}: {value!r} is not a "
                            f"number ({hint})")
        if "invalid UTF8" in str(exc):
            return self._not_utf8(line) or f"{self.name}, after line {line - 1}: {_one_line(exc)}"
        counted = _FIELD_COUNT.search(str(exc))
        if counted is not None:  # (pyarrow names the row's text, not its line)
            expected = int(counted["expected"])
            for number, fields in self._lines_from(line):
                if len(fields) != expected:
                    return (f"{self.name}, line {number}: {len(fields)} fields where line "
                            f"{self.header_line} has {expected}")
        return f"{self.name}, after line {line - 1}: {_one_line(exc)}"

    def _not_utf8(self, first: int) -> str | None:
        """The first line from ``first`` on that is not UTF-8, with its column: a file whose
        first 64 KiB are UTF-8 is read as UTF-8 (dsvm.data.text.open_text), and a later
        "Île" in the Windows code page was pyarrow's "after line 1: ... invalid UTF8 data"."""
        for buf, start in iter_text_blocks(self.src, self.storage_options):
            for offset, raw in enumerate(buf.split(b"\n")):
                if start + offset < first:
                    continue
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    text = raw.decode("utf-8", "replace").rstrip("\r")
                    fields = _split_fields(text, self.delimiter)
                    col = next((i for i, f in enumerate(fields) if "\ufffd" in f), 0)
                    name = self.names[col] if col < len(self.names) else str(col)
                    return (f"{self.name}, line {start + offset}, column {name!r}: "
                            f"{fields[col]!r} is not UTF-8 text, as the file's first 64 KiB "
                            "are: save the whole file as UTF-8")
        return None

    def _lines_from(self, first: int) -> Iterator[tuple[int, list[str]]]:
        """(line number, fields) of the non-blank lines from line ``first`` on."""
        for buf, start in iter_text_blocks(self.src, self.storage_options):
            if start + buf.count(b"\n") < first:
                continue  # a block before the failed one: not split into lines
            for offset, raw in enumerate(buf.split(b"\n")):
                text = raw.decode("utf-8", "replace").rstrip("\r")
                if start + offset >= first and text.strip():
                    yield start + offset, _split_fields(text, self.delimiter)
