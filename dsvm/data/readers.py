"""Streaming text readers (svmlight/libsvm, CSV/TSV) and the block operations shared by the
readers, the writer and the shuffle (slicing, gathering, stacking, converting, validating).

Every reader yields row blocks (``DenseBlock``/``CSRBlock``) of bounded size and reports bad
input as ``DataFormatError`` naming the file, the 1-based line and the offending value. (The
NumPy .npy/.npz readers live in ``convert.py``.)

Text is parsed a block of whole lines at a time (``BLOCK_BYTES`` of text) with NumPy array
operations over the bytes, not a Python loop per token: token boundaries come from a separator
mask, numbers from a vectorised decimal parser (``_parse_numbers``) that handles the plain
``[+-]digits[.digits]`` forms exactly and hands anything else (exponents, nan, inf, very long
mantissas) to Python's ``float``.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import fsspec
import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import Block, CSRBlock, DenseBlock
from dsvm.exceptions import DataFormatError, DataLayoutError

BLOCK_BYTES = 1 << 20
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".lzma", ".zst")

_NL, _COLON, _DOT, _MINUS, _PLUS, _QUOTE = 10, 58, 46, 45, 43, 34
_POW10_F = 10.0 ** np.arange(19)
_POW10_I = 10 ** np.arange(19, dtype=np.int64)
_EXACT_INT = 2**53  # integers below this are exact in float64
_COMMENT_RE = re.compile(rb"#[^\n]*")
_QID_RE = re.compile(rb"(?<!\S)qid:\S*")


@dataclass
class SourceStats:
    """What a full pass over a source found: rows, largest feature index, stored values."""

    n_samples: int
    n_features: int
    nnz: int


class _BadToken(Exception):
    """Internal: token ``k`` of a block could not be parsed as a number."""

    def __init__(self, k: int) -> None:
        super().__init__(k)
        self.k = k


# --------------------------------------------------------------------------------------------
# Byte-level helpers
# --------------------------------------------------------------------------------------------


def open_binary(src: str | os.PathLike[str], storage_options: dict | None = None) -> Any:
    """Open a local path or fsspec URL for reading, decompressing by extension."""
    return fsspec.open(os.fspath(src), mode="rb", compression="infer", **(storage_options or {}))


def iter_text_blocks(
    src: str | os.PathLike[str], storage_options: dict | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> Iterator[tuple[bytes, int]]:
    """Yield ``(text, first_line)``: runs of whole lines of about ``block_bytes`` bytes."""
    with open_binary(src, storage_options) as f:
        carry, line = b"", 1
        while True:
            data = f.read(block_bytes)
            if not data:
                if carry:
                    yield carry, line
                return
            buf = carry + data if carry else data
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                carry = buf  # one very long line: keep reading
                continue
            block, carry = buf[:cut], buf[cut:]
            yield block, line
            line += block.count(b"\n")


class _Text:
    """A block of text as bytes plus the arrays the parsers derive from it.

    ``pad`` holds the bytes with one space before and 16 after, so that ``pad[p]`` is the byte
    before position p and ``words[p]`` (an unaligned little-endian uint64 view) is the 8 bytes
    starting at p, even at the ends of the block.
    """

    def __init__(self, buf: bytes) -> None:
        n = len(buf)
        self.buf = buf
        self.pad = np.full(n + 17, 32, dtype=np.uint8)
        self.pad[1:n + 1] = np.frombuffer(buf, dtype=np.uint8)
        self.a = self.pad[1:n + 1]
        self.words = np.ndarray((n + 8,), dtype="<u8", buffer=self.pad, offset=1, strides=(1,))
        self._newlines: np.ndarray | None = None

    def tokens(self, sep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Start and exclusive stop of each maximal run of non-separator bytes."""
        edge = np.ones(sep.shape[0] + 2, dtype=bool)
        edge[1:-1] = sep
        # Runs alternate: the block starts and ends "in a separator", so the positions where
        # the separator flag changes are start, stop, start, stop, ...
        flips = np.flatnonzero(edge[1:] != edge[:-1])
        index = np.int32 if sep.shape[0] < 2**31 - 8 else np.int64  # halves the token arrays
        self.starts = flips[0::2].astype(index)
        self.stops = flips[1::2].astype(index)
        return self.starts, self.stops

    @property
    def newlines(self) -> np.ndarray:
        """Positions of the newline bytes (one entry per line, not per byte: cheap)."""
        if self._newlines is None:
            self._newlines = np.flatnonzero(self.a == _NL)
        return self._newlines

    def per_line(self, pos: np.ndarray) -> np.ndarray:
        """How many of the sorted positions ``pos`` fall on each line of the block."""
        bounds = np.searchsorted(pos, self.newlines)
        return np.diff(bounds, prepend=0, append=pos.shape[0])

    def first_of_line(self) -> np.ndarray:
        """Marks the tokens that are the first on their line."""
        k = self.starts.shape[0]
        first = np.zeros(k, dtype=bool)
        first[0] = k > 0
        after_newline = np.searchsorted(self.starts, self.newlines)
        first[after_newline[after_newline < k]] = True
        return first

    def line_of(self, pos: int, first_line: int) -> int:
        return first_line + self.buf.count(b"\n", 0, pos)

    def token_of(self, pos: np.ndarray) -> np.ndarray:
        """Index of the token containing each sorted byte position (inside tokens)."""
        return np.searchsorted(self.starts, pos, side="right") - 1


_U64 = np.uint64
_ASCII0 = 0x3030303030303030
_FILL = np.array([_ASCII0 & ((1 << (8 * (8 - n))) - 1) for n in range(9)], dtype=np.uint64)
_POW10_U = 10 ** np.arange(9, dtype=np.uint64)


def _swar8(w: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Value of the first ``count`` (0..8) ASCII digits of each little-endian word; non-digits.

    SWAR ("SIMD within a register", after Lemire's fast integer parsing): shift the digits to
    the top of the word and fill the low bytes with '0' (leading zeros), check all eight bytes
    are '0'..'9' at once, then combine neighbouring digits pairwise with three multiplies.
    """
    shift = ((8 - count) * 8).astype(_U64)
    w = np.left_shift(w, np.minimum(shift, _U64(56)))
    w[count == 0] = 0
    w |= _FILL[count]
    hi = _U64(0xF0F0F0F0F0F0F0F0)
    bad = ((w & hi) | (((w + _U64(0x0606060606060606)) & hi) >> _U64(4))) != _U64(
        0x3333333333333333)
    w = ((w & _U64(0x0F0F0F0F0F0F0F0F)) * _U64(2561)) >> _U64(8)
    w = ((w & _U64(0x00FF00FF00FF00FF)) * _U64(6553601)) >> _U64(16)
    w = ((w & _U64(0x0000FFFF0000FFFF)) * _U64(42949672960001)) >> _U64(32)
    return w, bad


def _digits(words: np.ndarray, first: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer value of ``count[k]`` (<= 16) digit bytes starting at ``first[k]``; non-digits."""
    value, bad = _swar8(words[first], np.minimum(count, 8))
    long = np.flatnonzero(count > 8)
    if long.size:
        c2 = np.minimum(count[long] - 8, 8)
        low, bad2 = _swar8(words[first[long] + 8], c2)
        value[long] = value[long] * _POW10_U[c2] + low
        bad[long] |= bad2 | (count[long] > 16)
    return value.astype(np.int64), bad


def _parse_numbers(text: _Text, *, exact: bool) -> tuple[np.ndarray, np.ndarray]:
    """Parse every token of ``text`` as float64.

    Returns ``(values, is_uint)`` where ``is_uint`` marks tokens made of digits only. A token
    ``[+-]I.F`` is m / 10**len(F) with the integer m = int(I + F); when m < 2**53 both operands are
    exact, so the one IEEE division is correctly rounded (the same value as strtod). With
    ``exact=False`` (float32 output) longer mantissas use the same formula, within one float64
    ulp, which float32 rounding absorbs. Everything else (exponents, nan, inf, more than 16
    digits on a side of the point) goes through Python's ``float``; raises ``_BadToken(k)``
    for the first token that is not a number.
    """
    a, starts, stops = text.a, text.starts, text.stops
    k = starts.shape[0]
    first = a[starts]
    negative = first == _MINUS
    signed = negative | (first == _PLUS)
    mstart = starts + signed
    dot_at = np.full(k, -1, dtype=starts.dtype)
    fallback = np.zeros(k, dtype=bool)
    dots = np.flatnonzero(a == _DOT)
    if dots.size:
        owner = text.token_of(dots)
        dot_at[owner] = dots
        fallback[owner[1:][owner[1:] == owner[:-1]]] = True  # two dots in one token
    has_dot = dot_at >= 0
    int_len = np.where(has_dot, dot_at, stops) - mstart
    frac_len = np.where(has_dot, stops - dot_at - 1, 0)
    fallback |= (int_len + frac_len == 0) | (int_len > 16) | (frac_len > 16)
    mantissa, bad = _digits(text.words, mstart, np.minimum(int_len, 16))
    fallback |= bad
    with_dot = np.flatnonzero(has_dot)
    scale = np.ones(k, dtype=np.float64)
    if with_dot.size:
        flen = np.minimum(frac_len[with_dot], 16)
        frac, bad = _digits(text.words, dot_at[with_dot] + 1, flen)
        fallback[with_dot] |= bad | (int_len[with_dot] + flen > 18)
        mantissa[with_dot] = mantissa[with_dot] * _POW10_I[flen] + frac
        scale[with_dot] = _POW10_F[flen]
    if exact:
        fallback |= mantissa >= _EXACT_INT
    values = mantissa.astype(np.float64)
    if with_dot.size:
        values /= scale
    np.negative(values, out=values, where=negative)
    for j in np.flatnonzero(fallback).tolist():
        try:
            values[j] = float(text.buf[starts[j]:stops[j]])
        except ValueError:
            raise _BadToken(j) from None
    return values, ~(signed | has_dot | fallback)


def _token_text(buf: bytes, pos: int) -> str:
    """The whitespace-delimited token around byte ``pos``, for error messages."""
    lo = pos
    while lo > 0 and buf[lo - 1] not in b" \t\r\n\v\f":
        lo -= 1
    hi = pos
    while hi < len(buf) and buf[hi] not in b" \t\r\n\v\f":
        hi += 1
    text = buf[lo:hi].decode("utf-8", "replace")
    return text if len(text) <= 40 else text[:37] + "..."


# --------------------------------------------------------------------------------------------
# svmlight / libsvm
# --------------------------------------------------------------------------------------------


def parse_libsvm_block(
    buf: bytes, first_line: int, name: str, *, n_features: int | None, dtype: np.dtype
) -> tuple[CSRBlock, int]:
    """Parse whole lines of svmlight text into a CSRBlock; also return the largest index.

    Lines are ``label [qid:q] index:value ... [# comment]`` with 1-based increasing indices;
    blank and comment-only lines are skipped; unsorted indices are sorted, duplicates raise.
    Bytes <= 0x20 (space, tab, CR, other control characters) separate tokens.
    """
    if b"#" in buf:
        buf = _COMMENT_RE.sub(b"", buf)
    if b"qid:" in buf:
        buf = _QID_RE.sub(b"", buf)
    text = _Text(buf)
    a = text.a
    sep = a <= 32
    sep |= a == _COLON
    starts, stops = text.tokens(sep)
    del sep
    k = starts.shape[0]
    if k == 0:
        return _empty_csr(n_features or 0, dtype), 0

    def fail(pos: int, msg: str) -> DataFormatError:
        return DataFormatError(f"{name}, line {text.line_of(int(pos), first_line)}: {msg}")

    # Classify tokens by their neighbours: "i:v" splits into an index (followed by ':') and a
    # value (preceded by ':'); anything else must be the label that starts a line.
    is_val = text.pad[starts] == _COLON  # pad[p] is the byte before p
    is_idx = text.pad[stops + 1] == _COLON  # pad[stop + 1] is the byte at the (exclusive) stop
    first_of_line = text.first_of_line()
    is_label = ~(is_val | is_idx)
    paired = np.zeros(k, dtype=bool)  # index token directly followed by ":value"
    paired[:-1] = is_val[1:] & (starts[1:] == stops[:-1] + 1)
    back = np.zeros(k, dtype=bool)  # value token directly preceded by "index:"
    back[1:] = paired[:-1]
    bad = (is_val & is_idx) | (is_label != first_of_line) | (is_idx & ~paired) | (is_val & ~back)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        token = _token_text(buf, int(starts[j]))
        if first_of_line[j] and not is_label[j]:
            raise fail(starts[j], f"expected a numeric label before the features, got {token!r}")
        if is_label[j]:
            pos = int(starts[j])
            end = buf.find(b"\n", pos)
            line_text = buf[buf.rfind(b"\n", 0, pos) + 1:len(buf) if end < 0 else end]
            hint = "" if b":" in line_text else (
                " (a table of numbers? give the file a .csv or .tsv name)")
            raise fail(starts[j], f"token {token!r} is not of the form index:value{hint}")
        raise fail(starts[j], f"malformed feature {token!r}; expected index:value")
    idx_tok = np.flatnonzero(is_idx)
    if buf.count(b":") != idx_tok.shape[0]:
        stray = int(np.setdiff1d(np.flatnonzero(a == _COLON), stops[idx_tok])[0])
        raise fail(stray, f"stray ':' in {_token_text(buf, stray)!r}")
    try:
        values, is_uint = _parse_numbers(text, exact=dtype != np.float32)
    except _BadToken as exc:
        j = exc.k
        token = buf[starts[j]:stops[j]].decode("utf-8", "replace")
        what = "label" if is_label[j] else "feature index" if is_idx[j] else "feature value"
        hint = " is not a positive integer" if is_idx[j] else " is not a number"
        raise fail(starts[j], f"{what} {token!r}{hint}") from None
    return _assemble_libsvm(text, values, is_uint, np.flatnonzero(is_label), idx_tok, fail,
                            n_features=n_features, dtype=dtype)


def _assemble_libsvm(
    text: _Text, values: np.ndarray, is_uint: np.ndarray, lab_tok: np.ndarray,
    idx_tok: np.ndarray, fail: Any, *, n_features: int | None, dtype: np.dtype,
) -> tuple[CSRBlock, int]:
    """Turn classified, parsed tokens into CSR arrays, checking indices and finiteness.

    Tokens come as ``label (index value)*`` per row, so each value token directly follows its
    index token and row r holds (lab_tok[r+1] - lab_tok[r] - 1) / 2 features.
    """
    buf, starts = text.buf, text.starts
    val_tok = idx_tok + 1
    idx_pos = starts[idx_tok]
    index = values[idx_tok]
    if not is_uint[idx_tok].all():
        j = int(np.flatnonzero(~is_uint[idx_tok])[0])
        token = buf[idx_pos[j]:idx_pos[j] + 40].split(b":")[0].decode("utf-8", "replace")
        raise fail(idx_pos[j], f"feature index {token!r} is not a positive integer")
    limit = n_features if n_features is not None else 2**31 - 1
    out = (index < 1) | (index > limit)
    if out.any():
        j = int(np.flatnonzero(out)[0])
        hint = ("indices are 1-based" if index[j] < 1 else
                f"n_features={n_features}" if n_features is not None else "indices must be < 2**31")
        raise fail(idx_pos[j], f"feature index {int(index[j])} is out of range; {hint}")
    labels = values[lab_tok]
    data = values[val_tok]
    for arr, what, tok in ((labels, "label", lab_tok), (data, "value", val_tok)):
        finite = np.isfinite(arr)
        if not finite.all():
            pos = int(starts[tok[np.flatnonzero(~finite)[0]]])
            raise fail(pos, f"{what} {_token_text(buf, pos)!r} is not finite")
    n_rows = lab_tok.shape[0]
    counts = (np.diff(lab_tok, append=starts.shape[0]) - 1) // 2
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    col = index.astype(np.int64)
    # Within a row indices must increase; a decrease is fine where a new row starts.
    step_ok = np.diff(col) > 0
    row_first = indptr[1:-1]
    step_ok[row_first[(row_first > 0) & (row_first < col.shape[0])] - 1] = True
    if not step_ok.all():
        # Unsorted within a row: sort (a new array, nothing user-visible is mutated), then any
        # remaining zero step inside a row is a duplicate index.
        row = np.repeat(np.arange(n_rows), counts)
        order = np.lexsort((col, row))
        col, data, idx_pos = col[order], data[order], idx_pos[order]
        dup = (np.diff(col) == 0) & (row[1:] == row[:-1])
        if dup.any():
            j = int(np.flatnonzero(dup)[0]) + 1
            raise fail(idx_pos[j], f"duplicate feature index {int(col[j])}")
    max_index = int(col.max()) if col.size else 0
    block = CSRBlock(
        indptr=indptr, indices=(col - 1).astype(np.int32), data=data.astype(dtype),
        y=labels, n_features=n_features if n_features is not None else max_index,
    )
    return block, max_index


def _empty_csr(n_features: int, dtype: np.dtype) -> CSRBlock:
    return CSRBlock(indptr=np.zeros(1, np.int64), indices=np.zeros(0, np.int32),
                    data=np.zeros(0, dtype), y=np.zeros(0), n_features=n_features)


class LibSVMSource:
    """svmlight/libsvm text (plain, .gz, .bz2, .xz), local or fsspec URL."""

    kind = "libsvm"
    sparse = True

    def __init__(self, src: str | os.PathLike[str], *, dtype: Any = np.float32,
                 storage_options: dict | None = None, block_bytes: int = BLOCK_BYTES) -> None:
        self.src, self.name = src, os.fspath(src)
        self.dtype = np.dtype(dtype)
        self.storage_options = storage_options
        self.block_bytes = block_bytes
        self.n_samples: int | None = None
        self.n_features: int | None = None
        self.nnz: int | None = None

    def scan(self, n_features: int | None = None) -> SourceStats:
        """A full validating pass: row count, largest index, nnz (bounded memory).

        With ``n_features`` an index above it is reported here, before anything is written.
        """
        n = nnz = max_index = 0
        for block, block_max in self._parse(n_features):
            n += block.n_samples
            nnz += int(block.indptr[-1])
            max_index = max(max_index, block_max)
        self.n_samples, self.n_features, self.nnz = n, n_features or max_index, nnz
        return SourceStats(n, max_index, nnz)

    def _parse(self, n_features: int | None) -> Iterator[tuple[CSRBlock, int]]:
        for buf, line in iter_text_blocks(self.src, self.storage_options, self.block_bytes):
            block, max_index = parse_libsvm_block(buf, line, self.name, n_features=n_features,
                                                  dtype=self.dtype)
            if block.n_samples:
                yield block, max_index

    def blocks(self, n_features: int) -> Iterator[CSRBlock]:
        """CSR blocks with ``n_features`` columns (an index above it is an error)."""
        for block, _ in self._parse(n_features):
            yield block


# --------------------------------------------------------------------------------------------
# CSV / TSV
# --------------------------------------------------------------------------------------------


def _first_line(src: str | os.PathLike[str], storage_options: dict | None) -> tuple[bytes, int]:
    """The first non-blank line of a text file and its 1-based number."""
    for buf, line in iter_text_blocks(src, storage_options, 1 << 16):
        for offset, text in enumerate(buf.split(b"\n")):
            if text.strip():
                return text, line + offset
    return b"", 0


class CSVSource:
    """Delimited text with one label column; a header line is detected automatically."""

    kind = "csv"
    sparse = False
    nnz = None

    def __init__(
        self, src: str | os.PathLike[str], *, label_column: int | str = 0,
        delimiter: str | None = None, dtype: Any = np.float32,
        storage_options: dict | None = None, block_bytes: int = BLOCK_BYTES,
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
        fields = _split_fields(text, self.delimiter)
        self.has_header = not all(is_number(f) for f in fields)
        self.columns = fields if self.has_header else None
        self.n_cols = len(fields)
        if self.n_cols < 2:
            raise DataFormatError(
                f"{self.name}, line {self.header_line}: found 1 column with delimiter "
                f"{self.delimiter!r}; need a label column and at least one feature "
                "(pass delimiter=...)"
            )
        self.label_index = self._label_index(label_column)
        self.n_features: int | None = self.n_cols - 1
        self.n_samples: int | None = None

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
            what = "label" if column == self.label_index else f"value in column {column}"
            raise DataFormatError(f"{self.name}, line {line_no}: {what} {token!r} is not a number"
                                  ) from None
        table = values.reshape(-1, self.n_cols)
        lines = first_line + np.flatnonzero(content)
        bad = ~np.isfinite(table)
        if bad.any():
            r, c = (int(v) for v in np.argwhere(bad)[0])
            raise DataFormatError(
                f"{self.name}, line {lines[r]}: column {c} is {table[r, c]}, not a finite number"
            )
        y = table[:, self.label_index].copy()
        X = np.delete(table, self.label_index, axis=1).astype(self.dtype)
        return DenseBlock(X=np.ascontiguousarray(X), y=y)

    def _raise_row_error(self, buf: bytes, line_offset: int, first_line: int) -> None:
        text = buf.split(b"\n")[line_offset].decode("utf-8", "replace").rstrip("\r")
        fields = _split_fields(text, self.delimiter)
        where = f"{self.name}, line {first_line + line_offset}"
        if len(fields) != self.n_cols:
            raise DataFormatError(
                f"{where}: found {len(fields)} columns, expected {self.n_cols} "
                f"(as on line {self.header_line})"
            )
        empty = [i for i, f in enumerate(fields) if not f]
        if empty:
            raise DataFormatError(f"{where}: column {empty[0]} is empty")
        raise DataFormatError(f"{where}: a field holds more than one value: {text!r}")


def _sniff_delimiter(name: str, line: str) -> str:
    inner = strip_compression(name).lower()
    if inner.endswith(".tsv"):
        return "\t"
    for d in (",", "\t", ";"):
        if d in line:
            return d
    return " "


def _split_fields(text: str, delimiter: str) -> list[str]:
    if delimiter == " ":
        return text.split()
    row = next(csv.reader([text], delimiter=delimiter), [])
    return [f.strip() for f in row]


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _blank_line(buf: bytes, offset: int) -> bytes:
    """Replace the content of line ``offset`` of ``buf`` by spaces (keeps line numbering)."""
    lines = buf.split(b"\n")
    lines[offset] = b" " * len(lines[offset])
    return b"\n".join(lines)


def strip_compression(name: str) -> str:
    for suffix in COMPRESSION_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def source_kind(src: str | os.PathLike[str]) -> str:
    """"numpy", "csv" or "libsvm" (the default) from the file name."""
    inner = strip_compression(os.fspath(src)).lower()
    if inner.endswith((".npy", ".npz")):
        return "numpy"
    if inner.endswith((".csv", ".tsv")):
        return "csv"
    return "libsvm"


# --------------------------------------------------------------------------------------------
# Block operations shared by the readers, the writer and the shuffle
# --------------------------------------------------------------------------------------------


def slice_block(block: Block, start: int, stop: int) -> Block:
    """Rows ``start:stop`` of a block (views where possible)."""
    sw = None if block.sample_weight is None else block.sample_weight[start:stop]
    if isinstance(block, DenseBlock):
        return DenseBlock(X=block.X[start:stop], y=block.y[start:stop], sample_weight=sw)
    a, b = int(block.indptr[start]), int(block.indptr[stop])
    return CSRBlock(
        indptr=block.indptr[start:stop + 1] - a, indices=block.indices[a:b],
        data=block.data[a:b], y=block.y[start:stop], n_features=block.n_features,
        sample_weight=sw,
    )


def take_rows(block: Block, rows: np.ndarray) -> Block:
    """The rows ``rows`` (an integer array, any order) of a block, as a new block."""
    sw = None if block.sample_weight is None else block.sample_weight[rows]
    if isinstance(block, DenseBlock):
        return DenseBlock(X=block.X[rows], y=block.y[rows], sample_weight=sw)
    starts = block.indptr[rows]
    lengths = block.indptr[rows + 1] - starts
    indptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    # Position k of the output row r reads input position starts[r] + k: repeat each row's
    # start (shifted by its output offset) over its length and add a running arange.
    gather = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1], dtype=np.int64)
    return CSRBlock(indptr=indptr, indices=block.indices[gather], data=block.data[gather],
                    y=block.y[rows], n_features=block.n_features, sample_weight=sw)


def coerce_block(block: Block, layout: str, dtype: np.dtype) -> Block:
    """Convert a block to the target layout and dtype (copies only what must change)."""
    if layout == "dense":
        if isinstance(block, CSRBlock):
            X = block.to_matrix().toarray()
        else:
            X = block.X
        X = np.ascontiguousarray(X, dtype=dtype)
        return DenseBlock(X=X, y=block.y, sample_weight=block.sample_weight)
    if isinstance(block, DenseBlock):
        csr = sp.csr_matrix(np.asarray(block.X))
        indptr, indices, data = csr.indptr, csr.indices, csr.data
    else:
        indptr, indices, data = block.indptr, block.indices, block.data
    n_features = block.n_features
    return CSRBlock(
        indptr=np.asarray(indptr, dtype=np.int64), indices=np.asarray(indices, dtype=np.int32),
        data=np.asarray(data, dtype=dtype), y=block.y, n_features=n_features,
        sample_weight=block.sample_weight,
    )


def concat_blocks(blocks: Sequence[Block]) -> Block:
    """Stack blocks of the same layout row-wise."""
    if len(blocks) == 1:
        return blocks[0]
    first = blocks[0]
    y = np.concatenate([b.y for b in blocks])
    sw = None
    if first.sample_weight is not None:
        sw = np.concatenate([b.sample_weight for b in blocks])  # type: ignore[misc]
    if isinstance(first, DenseBlock):
        X = np.concatenate([b.X for b in blocks])  # type: ignore[union-attr]
        return DenseBlock(X=X, y=y, sample_weight=sw)
    offsets = np.cumsum([0] + [int(b.indptr[-1]) for b in blocks])  # type: ignore[union-attr]
    indptr = np.concatenate(
        [np.zeros(1, np.int64)]
        + [b.indptr[1:] + off for b, off in zip(blocks, offsets)]  # type: ignore[union-attr]
    )
    return CSRBlock(
        indptr=indptr,
        indices=np.concatenate([b.indices for b in blocks]),  # type: ignore[union-attr]
        data=np.concatenate([b.data for b in blocks]),  # type: ignore[union-attr]
        y=y, n_features=first.n_features, sample_weight=sw,  # type: ignore[union-attr]
    )


def check_block_values(block: Block, where: str, first_row: int) -> None:
    """Raise DataFormatError for non-finite values, bad weights or a malformed CSR structure.

    ``first_row`` is the 0-based index of the block's first row in the output, used in messages.
    """
    values = block.X if isinstance(block, DenseBlock) else block.data
    if not np.isfinite(values).all():
        pos = int(np.flatnonzero(~np.isfinite(values.ravel()))[0])
        if isinstance(block, DenseBlock):
            r, c = divmod(pos, block.n_features)
        else:
            r = int(np.searchsorted(block.indptr, pos, side="right") - 1)
            c = int(block.indices[pos])
        raise DataFormatError(
            f"{where}, row {first_row + r}: X has the non-finite value "
            f"{values.ravel()[pos]} in column {c}; remove or impute it before converting"
        )
    for name, arr in (("y", block.y), ("sample_weight", block.sample_weight)):
        if arr is not None and not np.isfinite(arr).all():
            r = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise DataFormatError(f"{where}, row {first_row + r}: {name} is {arr[r]}, not finite")
    if block.sample_weight is not None and (block.sample_weight < 0).any():
        r = int(np.flatnonzero(block.sample_weight < 0)[0])
        raise DataFormatError(
            f"{where}, row {first_row + r}: sample_weight is {block.sample_weight[r]}; "
            "weights must be >= 0"
        )
    if isinstance(block, CSRBlock):
        _check_csr_structure(block, where, first_row)


def _check_csr_structure(block: CSRBlock, where: str, first_row: int) -> None:
    indptr, indices = block.indptr, block.indices
    if indptr[0] != 0 or indptr[-1] != indices.shape[0] or np.any(np.diff(indptr) < 0):
        raise DataLayoutError(f"{where}: indptr is not a valid CSR row pointer")
    if indices.size and (indices.min() < 0 or indices.max() >= block.n_features):
        bad = int(np.flatnonzero((indices < 0) | (indices >= block.n_features))[0])
        r = int(np.searchsorted(indptr, bad, side="right") - 1)
        raise DataFormatError(
            f"{where}, row {first_row + r}: column index {indices[bad]} is out of range "
            f"[0, {block.n_features})"
        )
    if indices.size > 1:
        # Within a row, column indices must strictly increase. A decrease is allowed only where
        # a new row starts, i.e. at positions indptr[1:-1] (the first entry of each later row).
        step_ok = np.diff(indices) > 0
        row_first = indptr[1:-1]
        row_first = row_first[(row_first > 0) & (row_first < indices.shape[0])]
        step_ok[row_first - 1] = True
        if not step_ok.all():
            pos = int(np.flatnonzero(~step_ok)[0]) + 1
            r = int(np.searchsorted(indptr, pos, side="right") - 1)
            kind = "duplicate" if indices[pos] == indices[pos - 1] else "unsorted"
            raise DataFormatError(
                f"{where}, row {first_row + r}: {kind} column index {indices[pos]} "
                "(indices must be sorted and unique within a row)"
            )
