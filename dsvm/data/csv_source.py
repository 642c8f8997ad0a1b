"""Delimited text (CSV/TSV) as dense row blocks, with one label column.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from dsvm.data.blocks import DenseBlock
from dsvm.data.text import (
    _QUOTE,
    BLOCK_BYTES,
    _BadToken,
    _parse_numbers,
    _Text,
    is_number,
    iter_text_blocks,
    strip_compression,
)
from dsvm.exceptions import DataFormatError

# What to do about text where a number was expected, in the errors that find it
TEXT_LABELS = ("a dataset stores numeric labels: map text labels to numbers first, e.g. "
               "yes -> 1 and no -> 0; a DataFrame with text labels trains as it is")
TEXT_COLUMNS = "a text column is hashed with --categorical / categorical=[...]"


def _first_line(src: str | os.PathLike[str], storage_options: dict | None) -> tuple[bytes, int]:
    """The first non-blank line of a text file and its 1-based number."""
    for buf, line in iter_text_blocks(src, storage_options, 1 << 16):
        for offset, text in enumerate(buf.split(b"\n")):
            if text.strip():
                return text, line + offset
    return b"", 0


class CSVSource:
    """Delimited text with one label column (or none: ``label_column=None``, NaN labels); a
    header line is detected automatically."""

    kind = "csv"
    sparse = False
    nnz = None

    def __init__(
        self, src: str | os.PathLike[str], *, label_column: int | str | None = 0,
        delimiter: str | None = None, dtype: Any = np.float32,
        storage_options: dict | None = None, block_bytes: int = BLOCK_BYTES,
        drop: Sequence[int | str] = (),
    ) -> None:
        self.src, self.name = src, os.fspath(src)
        self.dtype = np.dtype(dtype)
        self.storage_options = storage_options
        self.block_bytes = block_bytes
        line, self.header_line = _first_line(src, storage_options)
        if not line:
            raise DataFormatError(f"{self.name}: the file has no data lines")
        text = line.decode("utf-8", "replace").rstrip("\r")
        self.delimiter = delimiter if delimiter is not None else _sniff_delimiter(self.name, text)
        if self.delimiter in ("", "\n", "\r") or len(self.delimiter) != 1:
            raise ValueError(f"delimiter must be one character; got {self.delimiter!r}")
        fields = _split_fields(text, self.delimiter, f"{self.name}, line {self.header_line}")
        self.has_header = not all(is_number(f) for f in fields)
        self.columns = fields if self.has_header else None
        self.n_cols = len(fields)
        self.labeled = label_column is not None
        if self.n_cols < 1 + self.labeled:
            raise DataFormatError(
                f"{self.name}, line {self.header_line}: found 1 column with delimiter "
                f"{self.delimiter!r}; need a label column and at least one feature "
                "(pass delimiter=..., or label_column=None for data without labels)"
            )
        self.label_index = None if label_column is None else self._label_index(label_column)
        dropped = {self._column_index(c, "drop= / --drop") for c in drop}
        self.dropped = sorted(dropped - {self.label_index})
        if self.n_cols - self.labeled - len(self.dropped) < 1:
            raise ValueError(f"{self.name}: drop= / --drop {list(drop)} leaves no feature column")
        self.n_features: int | None = self.n_cols - self.labeled - len(self.dropped)
        self.n_samples: int | None = None

    def _column_index(self, column: int | str, what: str) -> int:
        """The index of a column given by header name or by position (a digit string too)."""
        if isinstance(column, str) and (self.columns is None or column not in self.columns) \
                and column.lstrip("-").isdigit():
            column = int(column)
        if isinstance(column, str):
            if self.columns is None or column not in self.columns:
                raise ValueError(f"{self.name}: {what} {column!r} is not a column; "
                                 + (f"the header is {self.columns}" if self.columns else
                                    "the file has no header (give positions)"))
            return self.columns.index(column)
        if not -self.n_cols <= column < self.n_cols:
            raise ValueError(f"{self.name}: {what} {column} is out of range for "
                             f"{self.n_cols} columns")
        return int(column) % self.n_cols

    def _label_index(self, label_column: int | str) -> int:
        if isinstance(label_column, str):
            if self.columns is None or label_column not in self.columns:
                raise ValueError(
                    f"{self.name}: label_column={label_column!r} is not a column name; the "
                    f"header is {self.columns}"
                )
            return self.columns.index(label_column)
        if not -self.n_cols <= label_column < self.n_cols:
            raise ValueError(
                f"{self.name}: label_column={label_column} is out of range for "
                f"{self.n_cols} columns"
            )
        return label_column % self.n_cols

    def count_rows(self) -> int:
        """Number of non-blank lines (minus the header): a cheap pass without parsing."""
        n = 0
        for buf, _ in iter_text_blocks(self.src, self.storage_options, self.block_bytes):
            text = _Text(buf)
            starts, _ = text.tokens(text.a <= 32)
            n += int(np.count_nonzero(text.per_line(starts)))
        self.n_samples = n - int(self.has_header)
        return self.n_samples

    def blocks(self, n_features: int | None = None) -> Iterator[DenseBlock]:
        for buf, line in iter_text_blocks(self.src, self.storage_options, self.block_bytes):
            if self.has_header and line <= self.header_line < line + buf.count(b"\n") + 1:
                buf = _blank_line(buf, self.header_line - line)
            block = self._parse(buf, line)
            if block.n_samples:
                yield block

    def _parse(self, buf: bytes, first_line: int) -> DenseBlock:
        text = _Text(buf)
        a = text.a
        is_delim = a == ord(self.delimiter)
        starts, stops = text.tokens((a <= 32) | is_delim | (a == _QUOTE))
        per_line = text.per_line(starts)
        if self.delimiter == " ":
            fields, content = per_line, per_line > 0
        else:
            n_delims = text.per_line(np.flatnonzero(is_delim))
            fields, content = n_delims + 1, (per_line > 0) | (n_delims > 0)
        wrong = content & ((fields != self.n_cols) | (per_line != self.n_cols))
        if wrong.any():
            self._raise_row_error(buf, int(np.flatnonzero(wrong)[0]), first_line)
        try:
            values, _ = _parse_numbers(text, exact=self.dtype != np.float32)
        except _BadToken as exc:
            line_no = text.line_of(int(starts[exc.k]), first_line)
            token = buf[starts[exc.k]:stops[exc.k]].decode("utf-8", "replace")
            column = int(exc.k % self.n_cols)
            if column == self.label_index:
                raise DataFormatError(f"{self.name}, line {line_no}: label {token!r} is not a "
                                      f"number ({TEXT_LABELS})") from None
            raise DataFormatError(f"{self.name}, line {line_no}, {self._column_named(column)}: "
                                  f"{token!r} is not a number ({TEXT_COLUMNS})") from None
        table = values.reshape(-1, self.n_cols)
        lines = first_line + np.flatnonzero(content)
        bad = ~np.isfinite(table)
        if bad.any():
            r, c = (int(v) for v in np.argwhere(bad)[0])
            raise DataFormatError(
                f"{self.name}, line {lines[r]}: {self._column_named(c)} is {table[r, c]}, not a "
                "finite number"
            )
        if self.label_index is None:
            X = np.delete(table, self.dropped, axis=1) if self.dropped else table
            return DenseBlock(X=np.ascontiguousarray(X, dtype=self.dtype),
                              y=np.full(table.shape[0], np.nan))
        y = table[:, self.label_index].copy()
        X = np.delete(table, [self.label_index, *self.dropped], axis=1).astype(self.dtype)
        return DenseBlock(X=np.ascontiguousarray(X), y=y)

    def _column_named(self, index: int) -> str:
        """A column in an error: by its header name, else by its 0-based position."""
        if self.columns is not None and index < len(self.columns):
            return f"column {self.columns[index]!r}"
        return f"column {index}"

    def _raise_row_error(self, buf: bytes, line_offset: int, first_line: int) -> None:
        text = buf.split(b"\n")[line_offset].decode("utf-8", "replace").rstrip("\r")
        where = f"{self.name}, line {first_line + line_offset}"
        fields = _split_fields(text, self.delimiter, where)
        if len(fields) != self.n_cols:
            raise DataFormatError(
                f"{where}: found {len(fields)} columns, expected {self.n_cols} "
                f"(as on line {self.header_line})"
            )
        empty = [i for i, f in enumerate(fields) if not f]
        if empty:
            raise DataFormatError(f"{where}: {self._column_named(empty[0])} is empty")
        raise DataFormatError(f"{where}: a field holds more than one value: {text!r}")


def _sniff_delimiter(name: str, line: str) -> str:
    inner = strip_compression(name).lower()
    if inner.endswith(".tsv"):
        return "\t"
    for d in (",", "\t", ";"):
        if d in line:
            return d
    return " "


def _split_fields(text: str, delimiter: str, where: str = "") -> list[str]:
    """The fields of one line; ``where`` names the file (and line) in the error for bytes
    that are no delimited text (a Parquet or other binary file given as CSV)."""
    if delimiter == " ":
        return text.split()
    try:
        row = next(csv.reader([text], delimiter=delimiter), [])
    except csv.Error as exc:
        raise DataFormatError(f"{where or 'a line'}: not delimited text ({exc}); is it a CSV/TSV "
                              "file? (--format / format= names the input's format)") from None
    return [f.strip() for f in row]



def _blank_line(buf: bytes, offset: int) -> bytes:
    """Replace the content of line ``offset`` of ``buf`` by spaces (keeps line numbering)."""
    lines = buf.split(b"\n")
    lines[offset] = b" " * len(lines[offset])
    return b"\n".join(lines)
