"""svmlight/libsvm text as CSR row blocks; bad input is a ``DataFormatError`` naming the file,
the 1-based line and the offending token.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dsvm.data.blocks import CSRBlock
from dsvm.data.text import (
    _COLON,
    _COMMENT_RE,
    _QID_RE,
    BLOCK_BYTES,
    FLOAT32_HINT,
    _BadToken,
    _parse_numbers,
    _Text,
    _token_text,
    beyond_float32,
    iter_text_blocks,
)
from dsvm.exceptions import DataFormatError

_NO_LABEL_RE = re.compile(rb"(?m)^(?=[ \t\r\v\f]*[^ \t\r\v\f\n])")

ONE_BASED_HINT = ("indices are 1-based here (a file of scikit-learn's dump_svmlight_file, "
                  "whose default is 0-based: convert with zero_based=True / --zero-based true)")


@dataclass
class SourceStats:
    """What a full pass over a source found: rows, largest feature index, stored values."""

    n_samples: int
    n_features: int
    nnz: int


def parse_libsvm_block(
    buf: bytes, first_line: int, name: str, *, n_features: int | None, dtype: np.dtype,
    labeled: bool = True, base: int = 1, zero_too: bool = False,
) -> tuple[CSRBlock, int]:
    """Parse whole lines of svmlight text into a CSRBlock; also return the number of columns
    its indices need (the largest index, 1-based).

    Lines are ``label [qid:q] index:value ... [# comment]`` with increasing indices counted
    from ``base`` (1: svmlight's and LIBSVM's convention; 0: scikit-learn's
    ``dump_svmlight_file`` default; ``zero_too``: 1-based, but index 0 passes, stored as -1,
    for a scan that decides); blank and comment-only lines are skipped; unsorted
    indices are sorted, duplicates raise. Bytes <= 0x20 (space, tab, CR, other control
    characters) separate tokens.
    """
    if b"#" in buf:
        buf = _COMMENT_RE.sub(b"", buf)
    if b"qid:" in buf:
        buf = _QID_RE.sub(b"", buf)
    if not labeled:
        # Lines are ``index:value ...`` only: give each non-blank line a placeholder label so
        # the one parser below applies (line numbers are unchanged), then drop it as NaN.
        block, max_index = parse_libsvm_block(_NO_LABEL_RE.sub(b"0 ", buf), first_line, name,
                                              n_features=n_features, dtype=dtype, base=base,
                                              zero_too=zero_too)
        return replace(block, y=np.full(block.n_samples, np.nan)), max_index
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
            raise fail(starts[j], f"token {token!r} is not of the form index:value"
                                  f"{_table_hint(line_text)}")
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
                            n_features=n_features, dtype=dtype, base=base,
                            lowest=0 if zero_too else base)


_HEX8 = re.compile(rb"[0-9a-f]{8}")


def _table_hint(line: bytes) -> str:
    """What a line without index:value pairs more likely is: Criteo's click logs (40
    tab-separated fields, label first, C1..C26 as 8 hex digits; its test files 39 without the
    label), or a table for the CSV reader."""
    if b":" in line:
        return ""
    fields = line.rstrip(b"\r").split(b"\t")
    if len(fields) in (39, 40) and sum(bool(_HEX8.fullmatch(f)) for f in fields[-26:]) >= 13:
        return " (Criteo's click logs, tab-separated: pass --format criteo / format='criteo')"
    return (" (a table of numbers? pass --format csv / format='csv', or give the file a .csv "
            "or .tsv name)")


def _assemble_libsvm(
    text: _Text, values: np.ndarray, is_uint: np.ndarray, lab_tok: np.ndarray,
    idx_tok: np.ndarray, fail: Any, *, n_features: int | None, dtype: np.dtype, base: int,
    lowest: int,
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
    limit = n_features - 1 + base if n_features is not None else 2**31 - 1
    out = (index < lowest) | (index > limit)
    if out.any():
        j = int(np.flatnonzero(out)[0])
        hint = (ONE_BASED_HINT if index[j] < lowest else
                f"n_features={n_features}" if n_features is not None else "indices must be < 2**31")
        raise fail(idx_pos[j], f"feature index {int(index[j])} is out of range; {hint}")
    labels = values[lab_tok]
    data = values[val_tok]
    huge = beyond_float32(data, dtype)
    if huge.size:
        pos = int(starts[val_tok[huge[0]]])
        raise fail(pos, f"value {_token_text(buf, pos)!r} is {FLOAT32_HINT}")
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
    width = int(col.max()) + 1 - base if col.size else 0
    block = CSRBlock(
        indptr=indptr, indices=(col - base).astype(np.int32), data=data.astype(dtype),
        y=labels, n_features=n_features if n_features is not None else width,
    )
    return block, width


def _empty_csr(n_features: int, dtype: np.dtype) -> CSRBlock:
    return CSRBlock(indptr=np.zeros(1, np.int64), indices=np.zeros(0, np.int32),
                    data=np.zeros(0, dtype), y=np.zeros(0), n_features=n_features)


class LibSVMSource:
    """svmlight/libsvm text (plain, .gz, .bz2, .xz), local or fsspec URL."""

    kind = "libsvm"
    sparse = True

    def __init__(self, src: str | os.PathLike[str], *, dtype: Any = np.float32,
                 labeled: bool = True, zero_based: bool | str = "auto",
                 storage_options: dict | None = None, block_bytes: int = BLOCK_BYTES) -> None:
        self.src, self.name = src, os.fspath(src)
        self.dtype = np.dtype(dtype)
        self.labeled = labeled
        # "auto": decided by scan() as scikit-learn's load_svmlight_file decides (0-based
        # when some index is 0); without a scan, 1-based
        self.zero_based = zero_based
        self.storage_options = storage_options
        self.block_bytes = block_bytes
        self.n_samples: int | None = None
        self.n_features: int | None = None
        self.nnz: int | None = None

    def scan(self, n_features: int | None = None) -> SourceStats:
        """A full validating pass: row count, largest index, nnz (bounded memory).

        With ``n_features`` an index above it is reported here, before anything is written.
        """
        auto = self.zero_based == "auto"
        n = nnz = width = 0
        zero_seen = False
        # (auto: read as 1-based with index 0 let through, as -1, until known)
        for block, block_width in self._parse(n_features, self.base, zero_too=auto):
            n += block.n_samples
            nnz += int(block.indptr[-1])
            width = max(width, block_width)
            zero_seen = zero_seen or bool(auto and block.indices.size
                                          and block.indices.min() < 0)
        if auto:
            self.zero_based = zero_seen
            width = width + 1 if zero_seen else width
            if n_features is not None and width > n_features:
                raise DataFormatError(f"{self.name}: feature index {width - 1} is out of range "
                                      f"of a 0-based file (it has an index 0); "
                                      f"n_features={n_features}")
        self.n_samples, self.n_features, self.nnz = n, n_features or width, nnz
        return SourceStats(n, width, nnz)

    @property
    def base(self) -> int:
        """The file's first feature index: 0 or 1."""
        return 0 if self.zero_based is True else 1

    def _parse(self, n_features: int | None, base: int,
               zero_too: bool = False) -> Iterator[tuple[CSRBlock, int]]:
        for buf, line in iter_text_blocks(self.src, self.storage_options, self.block_bytes):
            block, width = parse_libsvm_block(buf, line, self.name, n_features=n_features,
                                              labeled=self.labeled, dtype=self.dtype,
                                              base=base, zero_too=zero_too)
            if block.n_samples:
                yield block, width

    def blocks(self, n_features: int) -> Iterator[CSRBlock]:
        """CSR blocks with ``n_features`` columns (an index above it is an error)."""
        for block, _ in self._parse(n_features, self.base):
            yield block


class LibSVMFiles:
    """svmlight/libsvm text in several files, read one after another as one input: a folder
    (Spark's ``saveAsLibSVMFile`` writes ``part-*`` files and a ``_SUCCESS`` marker) or a
    glob. Each file is a :class:`LibSVMSource`, so an error names the file and its line; with
    ``zero_based="auto"`` the files are 0-based together when any has an index 0."""

    kind = "libsvm"
    sparse = True

    def __init__(self, paths: list[str], **options: Any) -> None:
        self.sources = [LibSVMSource(p, **options) for p in paths]
        self.labeled = self.sources[0].labeled

    @property
    def zero_based(self) -> bool | str:
        return self.sources[0].zero_based

    def scan(self, n_features: int | None = None) -> SourceStats:
        auto = self.zero_based == "auto"
        stats = [s.scan(n_features) for s in self.sources]
        widths = [st.n_features for st in stats]
        if auto:
            zero = any(s.zero_based is True for s in self.sources)
            # (a file that had no index 0 was read 1-based: its indices are one column further)
            widths = [w + 1 if zero and s.zero_based is False and w else w
                      for w, s in zip(widths, self.sources)]
            for s in self.sources:
                s.zero_based = zero
        width = max(widths)
        if n_features is not None and width > n_features:
            raise DataFormatError(f"{self.sources[0].name}: feature index {width - 1} is out of "
                                  f"range of a 0-based file (one has an index 0); "
                                  f"n_features={n_features}")
        return SourceStats(sum(st.n_samples for st in stats), width,
                           sum(st.nnz for st in stats))

    def blocks(self, n_features: int) -> Iterator[CSRBlock]:
        for source in self.sources:
            yield from source.blocks(n_features)
