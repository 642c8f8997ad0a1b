"""Delimited text (CSV/TSV) as dense row blocks, with one label column.

The label column holds numbers, or text names ("yes"/"no"): which, the first data row says
(:func:`sniff_labels`). Names are stored as codes with the dataset's ``label_names``
(dsvm.data.label_names); a label column holds numbers or names, not both.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from dsvm.data.blocks import DenseBlock
from dsvm.data.label_column import (
    AUTO,
    SNIFFED_ROWS,
    headerless_label,
    require_named,
    resolve_label_column,
)
from dsvm.data.label_names import LabelNames
from dsvm.data.text import (
    _QUOTE,
    BLOCK_BYTES,
    FLOAT32_HINT,
    _BadToken,
    _parse_numbers,
    _Text,
    beyond_float32,
    is_number,
    iter_text_blocks,
    strip_compression,
    text_encoding,
)
from dsvm.exceptions import DataFormatError

# What to do about text where a number was expected, in the errors that find it
TEXT_LABELS = ("the first row's label is a number, so the labels are read as numbers; a label "
               "column holds numbers or text names (yes/no), not both")
TEXT_COLUMNS = "a text column is hashed with --categorical / categorical=[...]"


_COMMA_NUMBER = re.compile(r"[+-]?\d*,\d+")
_POINT_NUMBER = re.compile(r"[+-]?\d*\.\d+")


def ends_with_delimiters(lines: list[tuple[bytes, int]], delimiter: str) -> bool:
    """Whether the first ``lines`` (:func:`_first_lines`) are a header whose last name is
    empty and a row, both ending with the delimiter: an exporter's trailing delimiter
    ("a,b,label," above "1,2,0,"), not a last column. Read as a column, every row's empty
    field was "column '' is empty (a missing value...)". Rows without a header are left as
    they are: their last field may be missing (Criteo's C26, often empty, ends a line with
    its tab)."""
    if delimiter == " " or len(lines) < 2:
        return False
    texts = [text.decode("utf-8", "replace").rstrip("\r") for text, _ in lines[:2]]
    if not all(t.endswith(delimiter) for t in texts):
        return False
    names = _split_fields(texts[0], delimiter)[:-1]
    return any(name and not is_number(name) for name in names)


def without_trailing(buf: bytes, delimiter: str) -> bytes:
    """``buf`` (whole lines) with one trailing delimiter taken off each line's end."""
    d = delimiter.encode()
    out = buf.replace(d + b"\r\n", b"\r\n").replace(d + b"\n", b"\n")
    return out[:-1] if out.endswith(d) else out


def decimal_comma(delimiter: str, rows: Sequence[list[str] | None]) -> bool:
    """Whether the numbers of a ';'- or tab-separated file are written with a decimal comma
    (``17,99``: Excel's CSV in a European locale, which separates fields with ';' for that
    reason): some field of the first ``rows`` is such a number and none has a decimal point.
    Read with points, every such field was "not a number (a text column is hashed with
    --categorical...)"."""
    if delimiter not in (";", "\t"):
        return False
    fields = [f for row in rows if row for f in row]
    return (any(_COMMA_NUMBER.fullmatch(f) for f in fields)
            and not any(_POINT_NUMBER.fullmatch(f) for f in fields))


def with_points(row: list[str] | None) -> list[str] | None:
    """``row``'s decimal-comma numbers written with points (the other fields as they are)."""
    if row is None:
        return None
    return [f.replace(",", ".") if _COMMA_NUMBER.fullmatch(f) else f for f in row]


def non_blank_lines(src: str | os.PathLike[str], storage_options: dict | None = None,
                    block_bytes: int = BLOCK_BYTES) -> int:
    """The non-blank lines of a text file: a pass without parsing (a row's count for a
    shuffle's buckets; a quoted field holding a line break counts twice)."""
    n = 0
    for buf, _ in iter_text_blocks(src, storage_options, block_bytes):
        text = _Text(buf)
        starts, _ = text.tokens(text.a <= 32)
        n += int(np.count_nonzero(text.per_line(starts)))
    return n


def _first_line(src: str | os.PathLike[str], storage_options: dict | None) -> tuple[bytes, int]:
    """The first non-blank line of a text file and its 1-based number."""
    return next(iter(_first_lines(src, storage_options, 1)), (b"", 0))


def _first_lines(src: str | os.PathLike[str], storage_options: dict | None,
                 n: int) -> list[tuple[bytes, int]]:
    """The first ``n`` non-blank lines of a text file (or fewer) and their 1-based numbers."""
    found: list[tuple[bytes, int]] = []
    for buf, line in iter_text_blocks(src, storage_options, 1 << 16):
        for offset, text in enumerate(buf.split(b"\n")):
            if text.strip():
                found.append((text, line + offset))
                if len(found) == n:
                    return found
    return found


def second_fields(lines: list[tuple[bytes, int]], delimiter: str,
                  name: str) -> list[str] | None:
    """The fields of the second of a text file's ``lines`` (None: it has one line)."""
    if len(lines) < 2:
        return None
    text, number = lines[1]
    return _split_fields(text.decode("utf-8", "replace").rstrip("\r"), delimiter,
                         f"{name}, line {number}")


def sampled_rows(src: str | os.PathLike[str], storage_options: dict | None, delimiter: str,
                 trailing: bool, points: bool, name: str) -> list[list[str]]:
    """The fields of a table's first ``SNIFFED_ROWS`` lines, as its reader will split them
    (a trailing delimiter's empty field left off, decimal commas as points)."""
    rows = []
    for text, number in _first_lines(src, storage_options, SNIFFED_ROWS):
        fields = _split_fields(text.decode("utf-8", "replace").rstrip("\r"), delimiter,
                               f"{name}, line {number}")
        fields = fields[:-1] if trailing else fields
        rows.append((with_points(fields) or []) if points else fields)
    return rows


def written_index(src: str | os.PathLike[str], storage_options: dict | None,
                  delimiter: str | None) -> bool:
    """Whether a CSV starts with the index ``DataFrame.to_csv`` writes by default: a first
    column with no name in a header of names, whose values count the rows (0, 1, 2, ...)."""
    name = os.fspath(src)
    try:  # (a file that is no CSV is named so by its reader, with its line)
        lines = _first_lines(src, storage_options, 2)
        if len(lines) < 2:
            return False
        delimiter = delimiter or sniff_delimiter(name, lines)
        header = _split_fields(lines[0][0].decode("utf-8", "replace").rstrip("\r"), delimiter)
        names = [f for f in header[1:] if f.strip()]
        if len(header) < 2 or header[0].strip() or not names or all(map(is_number, names)):
            return False
        rows = sampled_rows(src, storage_options, delimiter, False, False, name)[1:]
        counted = [int(row[0]) for row in rows if row]
    except (DataFormatError, ValueError):
        return False
    return len(counted) >= 2 and counted == list(range(counted[0], counted[0] + len(counted)))


def position(column: int | str | None, n_cols: int) -> int | None:
    """A column given by position (an int, or a string of digits) in range; else None."""
    if isinstance(column, str) and column.lstrip("-").isdigit():
        column = int(column)
    if isinstance(column, (int, np.integer)) and -n_cols <= column < n_cols:
        return int(column) % n_cols
    return None


def _rows_alike(fields: list[str], second: list[str]) -> bool:
    """Whether two lines hold numbers in the same columns, one at least (empty fields, missing
    values, go with either)."""
    if len(fields) != len(second):
        return False
    kinds = [(is_number(a), is_number(b)) for a, b in zip(fields, second)
             if a.strip() and b.strip()]
    return any(a for a, _ in kinds) and all(a == b for a, b in kinds)


def sniff_labels(fields: list[str], second: list[str] | None, label_at: int | None,
                 header: bool, skip: frozenset[int] = frozenset()) -> bool:
    """Whether the first line (``fields``) is a header, ``header`` being the guess from its
    fields alone (some are not numbers), for a label column at ``label_at`` (None: named,
    or none). Columns ``skip`` hold text anyway (categorical).

    A first line whose only text outside ``skip`` is its label is a header above numeric
    labels (feature names that are numbers) or a first row with a text label: the second line
    decides, its label a number (a header, as before text labels were read) or text (rows).
    A first line with numbers, whose every field is a number where the second line's is
    (and text where it is text) is a row: UCI's iris.data, its class last as text."""
    if header and second is not None and _rows_alike(fields, second):
        return False
    if not header or label_at is None or second is None or label_at >= len(second):
        return header
    only_label = all(is_number(f) for i, f in enumerate(fields)
                     if i != label_at and i not in skip and f.strip())
    return not (only_label and not is_number(second[label_at]))


def text_labels(row: list[str] | None, label_at: int | None) -> bool:
    """Whether the labels are text: the first data row's label is not a number."""
    return (label_at is not None and row is not None and label_at < len(row)
            and bool(row[label_at]) and not is_number(row[label_at]))


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
        lines = _first_lines(src, storage_options, 2)  # the second: are labels text?
        line, self.header_line = lines[0] if lines else (b"", 0)
        if not line:
            raise DataFormatError(f"{self.name}: the file has no data lines")
        text = line.decode("utf-8", "replace").rstrip("\r")
        self.delimiter = delimiter if delimiter is not None else sniff_delimiter(self.name, lines)
        if self.delimiter in ("", "\n", "\r") or len(self.delimiter) != 1:
            raise ValueError(f"delimiter must be one character; got {self.delimiter!r}")
        fields = _split_fields(text, self.delimiter, f"{self.name}, line {self.header_line}")
        second = second_fields(lines, self.delimiter, self.name)
        self.trailing = ends_with_delimiters(lines, self.delimiter)
        if self.trailing:
            fields, second = fields[:-1], None if second is None else second[:-1]
        self.encoding = text_encoding(src, storage_options)  # (what open_text reads it as)
        self.decimal_comma = decimal_comma(self.delimiter, [fields, second])
        if self.decimal_comma:
            fields, second = with_points(fields) or [], with_points(second)
        # an empty field is a missing value, as in every later row, not a column's name
        header = not all(is_number(f) for f in fields if f.strip())
        given = label_column
        label_column = resolve_label_column(label_column, fields if header else None,
                                            skip=list(drop), n_cols=len(fields))
        self.has_header = sniff_labels(fields, second, position(label_column, len(fields)),
                                       header)
        require_named(given, fields if self.has_header else None, list(drop), self.name)
        self.label_reason: str | None = None  # (why the label is not the first column)
        if given == AUTO and not self.has_header:
            label_column, self.label_reason = headerless_label(
                sampled_rows(src, storage_options, self.delimiter, self.trailing,
                             self.decimal_comma, self.name), list(drop), len(fields))
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
        first_row = second if self.has_header else fields
        self.label_names = (LabelNames(self.name) if text_labels(first_row, self.label_index)
                            else None)
        dropped = {self._column_index(c, "drop= / --drop") for c in drop}
        self.dropped = sorted(dropped - {self.label_index})
        if self.n_cols - self.labeled - len(self.dropped) < 1:
            raise ValueError(f"{self.name}: drop= / --drop {list(drop)} leaves no feature column")
        self.n_features: int | None = self.n_cols - self.labeled - len(self.dropped)
        self.n_samples: int | None = None

    @property
    def label_name(self) -> int | str | None:
        """The label column by its header name (by position in a file without a header)."""
        if self.label_index is None:
            return None
        return self.columns[self.label_index] if self.columns else self.label_index

    @property
    def feature_names(self) -> list[str] | None:
        """The feature columns' header names in order (None without a header)."""
        if self.columns is None:
            return None
        skip = {self.label_index, *self.dropped}
        return [c for i, c in enumerate(self.columns) if i not in skip]

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
                    f"{self.name}: label_column= / --label-column {label_column!r} is not a "
                    f"column name; the header is {self.columns}"
                )
            return self.columns.index(label_column)
        if not -self.n_cols <= label_column < self.n_cols:
            raise ValueError(
                f"{self.name}: label_column= / --label-column {label_column} is out of range "
                f"for {self.n_cols} columns"
            )
        return label_column % self.n_cols

    def count_rows(self) -> int:
        """Number of non-blank lines (minus the header): a cheap pass without parsing."""
        n = non_blank_lines(self.src, self.storage_options, self.block_bytes)
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
        if self.trailing:
            buf = without_trailing(buf, self.delimiter)
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
        names = None
        if self.label_names is not None:  # the label tokens: read as text, parsed as 0
            names, text = self._label_tokens(text)
        if self.decimal_comma:  # (after the labels: a text label keeps its commas)
            pointed = _Text(text.buf.replace(b",", b"."))
            pointed.starts, pointed.stops = text.starts, text.stops  # the same tokens
            text = pointed
        try:
            values, _ = _parse_numbers(text, exact=self.dtype != np.float32)
        except _BadToken as exc:
            line_no = text.line_of(int(starts[exc.k]), first_line)
            self._raise_if_header(buf, line_no - first_line, line_no)
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
            missing = (" (a missing value: pass fill_missing= / --fill-missing VALUE to use a "
                       "value instead)" if np.isnan(table[r, c]) else "")
            raise DataFormatError(
                f"{self.name}, line {lines[r]}: {self._column_named(c)} is {table[r, c]}, not a "
                f"finite number{missing}"
            )
        features = np.ones(self.n_cols, dtype=bool)
        features[[c for c in (self.label_index, *self.dropped) if c is not None]] = False
        huge = beyond_float32(table[:, features], self.dtype)
        if huge.size:
            r, c = divmod(int(huge[0]), int(features.sum()))
            c = int(np.flatnonzero(features)[c])
            raise DataFormatError(f"{self.name}, line {lines[r]}, {self._column_named(c)}: "
                                  f"{table[r, c]:.6g} is {FLOAT32_HINT}")
        if self.label_index is None:
            X = np.delete(table, self.dropped, axis=1) if self.dropped else table
            return DenseBlock(X=np.ascontiguousarray(X, dtype=self.dtype),
                              y=np.full(table.shape[0], np.nan))
        y = table[:, self.label_index].copy()
        if names is not None:
            y = names
        X = np.delete(table, [self.label_index, *self.dropped], axis=1).astype(self.dtype)
        return DenseBlock(X=np.ascontiguousarray(X), y=y)

    def _label_tokens(self, text: _Text) -> tuple[np.ndarray, _Text]:
        """(the codes of the block's text labels, the block with each label's bytes replaced
        by '0's: the number parser reads the rest as before, and no byte of a label, a dot
        say, is taken for part of a number)."""
        assert self.label_names is not None and self.label_index is not None
        k = np.arange(self.label_index, text.starts.shape[0], self.n_cols)
        starts, stops = text.starts[k], text.stops[k]
        codes = self.label_names.encode(_token_strings(text.buf, starts, stops))
        inside = np.zeros(len(text.buf) + 1, dtype=np.int8)
        inside[starts], inside[stops] = 1, -1  # (tokens are apart: no position is both)
        raw = np.frombuffer(text.buf, dtype=np.uint8).copy()
        raw[np.cumsum(inside[:-1]) > 0] = ord("0")
        zeroed = _Text(raw.tobytes())
        zeroed.starts, zeroed.stops = text.starts, text.stops  # the same tokens
        return codes, zeroed

    def _raise_if_header(self, buf: bytes, offset: int, line: int) -> None:
        text = buf.split(b"\n")[offset].decode("utf-8", "replace").rstrip("\r")
        fields = _split_fields(text, self.delimiter)
        said = repeated_header(self.name, line, fields, self.columns, self.header_line)
        if said is not None:
            raise DataFormatError(said)

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
            raise DataFormatError(f"{where}: {self._column_named(empty[0])} is empty (a missing "
                                  "value: pass fill_missing= / --fill-missing VALUE to use a "
                                  "value instead)")
        worded = [i for i, f in enumerate(fields) if len(f.split()) > 1]
        if worded:  # (text with spaces: the number parser splits it into several tokens)
            raise DataFormatError(f"{where}, {self._column_named(worded[0])}: "
                                  f"{fields[worded[0]]!r} is not a number ({TEXT_COLUMNS})")
        split = [i for i, f in enumerate(fields) if self.delimiter in f]
        if split:  # (quoted: the number parser splits it at the delimiter)
            field = fields[split[0]]
            number = is_number(field.replace(self.delimiter, "")) if self.delimiter == "," \
                else False
            raise DataFormatError(
                f"{where}, {self._column_named(split[0])}: {field!r} holds the delimiter "
                f"{self.delimiter!r} inside quotes" + (
                    ": a number with thousands separators? Write the numbers without them "
                    "(or read the file with pandas.read_csv(..., thousands=',') and fit the "
                    "frame)" if number else f" ({TEXT_COLUMNS})"))
        raise DataFormatError(f"{where}: a field holds more than one value: {text!r}")


def repeated_header(name: str, line: int, fields: list[str], header: list[str] | None,
                    header_line: int) -> str | None:
    """The error for a row that repeats the header (files joined with ``cat``, each with its
    header), else None."""
    if not header or [f.strip() for f in fields[:len(header)]] != [h.strip() for h in header]:
        return None
    return (f"{name}, line {line} repeats the header of line {header_line}: files joined with "
            "their headers? Remove the repeated header lines, or convert the files as they "
            "were (a folder or glob of CSV files, each with its header, is one dataset)")


def _token_strings(buf: bytes, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The tokens ``buf[starts[i]:stops[i]]`` as an array of str."""
    return np.array([buf[a:b].decode("utf-8", "replace")
                     for a, b in zip(starts.tolist(), stops.tolist())], dtype=object)


def _sniff_delimiter(name: str, line: str, second: str | None = None) -> str:
    """The delimiter of a file whose first lines are ``line`` and ``second``: a .tsv's tab;
    else the one of ',', tab, ';' that cuts both lines into the same number of fields, the
    most (a header "Umsatz;Preis, netto;label" above "17,99;3;1" is cut in 2 by ',' and in 3
    by ';'); else the first found in ``line``; else spaces."""
    inner = strip_compression(name).lower()
    if inner.endswith(".tsv"):
        return "\t"
    candidates = (",", "\t", ";")
    if second is not None:
        counts = {d: len(_csv_fields(line, d)) for d in candidates}
        same = [d for d in candidates
                if counts[d] > 1 and counts[d] == len(_csv_fields(second, d))]
        if same:
            return max(same, key=lambda d: counts[d])  # (the first of a tie)
    return next((d for d in candidates if d in line), " ")


def _csv_fields(text: str, delimiter: str) -> list[str]:
    try:
        return next(csv.reader([text], delimiter=delimiter), [])
    except csv.Error:  # (not text: no count)
        return []


def sniff_delimiter(name: str, lines: list[tuple[bytes, int]]) -> str:
    """:func:`_sniff_delimiter` of the first two of ``lines`` (:func:`_first_lines`)."""
    texts = [text.decode("utf-8", "replace").rstrip("\r") for text, _ in lines[:2]]
    return _sniff_delimiter(name, *texts) if texts else " "


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
