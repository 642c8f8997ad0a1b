"""Byte-level text parsing shared by the svmlight and CSV readers.

Text is parsed a block of whole lines at a time (``BLOCK_BYTES`` of text) with NumPy array
operations over the bytes, not a Python loop per token: token boundaries come from a separator
mask, numbers from a vectorised decimal parser (``_parse_numbers``) that handles the plain
``[+-]digits[.digits]`` forms exactly and hands anything else (exponents, nan, inf, very long
mantissas) to Python's ``float``.
"""

from __future__ import annotations

import codecs
import contextlib
import lzma
import os
import re
import zlib
from collections.abc import Iterator
from typing import Any

import fsspec
import numpy as np

from dsvm.data.location import missing_extra
from dsvm.exceptions import DataFormatError

BLOCK_BYTES = 1 << 20
_BOM = b"\xef\xbb\xbf"
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".lzma", ".zst", ".zip")

_NL, _COLON, _DOT, _MINUS, _PLUS, _QUOTE = 10, 58, 46, 45, 43, 34
_POW10_F = 10.0 ** np.arange(19)
_POW10_I = 10 ** np.arange(19, dtype=np.int64)
_EXACT_INT = 2**53  # integers below this are exact in float64
_COMMENT_RE = re.compile(rb"#[^\n]*")
_QID_RE = re.compile(rb"(?<!\S)qid:\S*")


class _BadToken(Exception):
    """Internal: token ``k`` of a block could not be parsed as a number."""

    def __init__(self, k: int) -> None:
        super().__init__(k)
        self.k = k


# --------------------------------------------------------------------------------------------
# Byte-level helpers
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def open_binary(src: str | os.PathLike[str], storage_options: dict | None = None) -> Any:
    """Open a local path or fsspec URL for reading, decompressing by extension (a context
    manager). Its reads raise DataFormatError naming the file for a truncated or corrupt
    compressed file, or one whose name claims a compression it does not have."""
    name = os.fspath(src)
    zipped = name.lower().endswith(".zip")
    if name.lower().endswith(".zst") and "zstd" not in fsspec.available_compressions():
        # (fsspec infers no compression without the package, and the compressed bytes were
        # parsed as text: "not delimited text (new-line character seen in unquoted field...)")
        raise DataFormatError(f"{name}: zstd-compressed data needs the zstandard package "
                              "(pip install zstandard)")
    try:
        opened = fsspec.open(name, mode="rb", compression=None if zipped else "infer",
                             **(storage_options or {}))
    except ImportError as exc:  # s3:// without s3fs...: name the extra to install
        raise missing_extra(name, exc) from None
    with opened as f:
        if not zipped:
            yield _NamedReads(f, name)
            return
        with _only_member(f, name) as member:
            yield _NamedReads(member, name)


def _only_member(f: Any, name: str) -> Any:
    """The one file inside a zip archive (Kaggle's ``train.csv.zip``), opened. fsspec's own
    zip reading took the first member of any archive, whatever else it held; the folders and
    macOS's ``__MACOSX/`` copies of resource forks are not files of the data."""
    import zipfile

    try:
        archive = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataFormatError(read_error(name, exc)) from exc
    members = [m for m in archive.namelist() if not m.endswith("/")
               and not m.startswith("__MACOSX/") and not os.path.basename(m).startswith("._")]
    if len(members) != 1:
        raise DataFormatError(
            f"{name}: a zip archive of {len(members)} files {members[:5]}: dsvm reads an "
            "archive of one file; extract them and convert each.")
    return archive.open(members[0])


@contextlib.contextmanager
def open_text(src: str | os.PathLike[str], storage_options: dict | None = None) -> Any:
    """:func:`open_binary` for text, whose reads give UTF-8 bytes (:func:`text_encoding`
    says from what): a file that starts with a UTF-16 byte order mark (Excel's "Unicode
    Text", tab-separated) or whose first 64 KiB are not UTF-8 (Excel's "CSV (Comma
    delimited)" writes the Windows code page: "Région", "Île-de-France" in cp1252) is
    transcoded as it is read. UTF-16 bytes were parsed as they were ("a field holds more than
    one value: '\\x001\\x007...'"), and cp1252 text in a hashed column failed pyarrow's
    reader ("invalid UTF8 data")."""
    with open_binary(src, storage_options) as f:
        head = f.read(_SNIFF_BYTES)
        encoding = _encoding_of(head)
        if encoding == "utf-8":
            yield _Prefixed(f, head)
        else:
            yield _Utf8Of(f, head, encoding)


_SNIFF_BYTES = 1 << 16
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _encoding_of(head: bytes) -> str:
    """The encoding of text starting with ``head``: UTF-16 after its byte order mark, UTF-8
    where the bytes are (a character cut at the end of ``head`` aside), else cp1252."""
    if head[:2] in _UTF16_BOMS:
        return "utf-16"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


def text_encoding(src: str | os.PathLike[str], storage_options: dict | None = None) -> str:
    """What :func:`open_text` reads ``src`` as: "utf-8", "utf-16" or "cp1252"."""
    with open_binary(src, storage_options) as f:
        return _encoding_of(f.read(_SNIFF_BYTES))


class _Prefixed:
    """A file whose first bytes were read already (``head``) and are read again first."""

    def __init__(self, f: Any, head: bytes) -> None:
        self._f, self._head = f, head

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            head, self._head = self._head, b""
            return head + self._f.read()
        head, self._head = self._head[:size], self._head[size:]
        return head + self._f.read(size - len(head)) if size > len(head) else head

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._f, attr)


class _Utf8Of:
    """A file in ``encoding`` (its first bytes read already as ``head``) read as UTF-8 bytes;
    cp1252's five unassigned bytes become U+FFFD."""

    def __init__(self, f: Any, head: bytes, encoding: str) -> None:
        self._f = f
        self._decode = codecs.getincrementaldecoder(encoding)(errors="replace").decode
        self._pending = self._decode(head).encode("utf-8")  # (UTF-16: its byte order mark)

    def read(self, size: int = -1) -> bytes:
        while size is None or size < 0 or len(self._pending) < size:
            raw = self._f.read(-1 if size is None or size < 0 else size)
            self._pending += self._decode(raw, final=not raw).encode("utf-8")
            if not raw or size is None or size < 0:
                break
        if size is None or size < 0:
            out, self._pending = self._pending, b""
        else:
            out, self._pending = self._pending[:size], self._pending[size:]
        return out

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._f, attr)


# What a decompressing reader raises on bad data: gzip's BadGzipFile and bz2's "Invalid data
# stream" are OSErrors, lzma has its own, zlib too, and every one raises EOFError at a cut.
_STREAM_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error)


class _NamedReads:
    """A file whose read errors name it (instead of a bare EOFError from deep in lzma)."""

    def __init__(self, f: Any, name: str) -> None:
        self._f, self._name = f, name

    def read(self, size: int = -1) -> bytes:
        try:
            return bytes(self._f.read(size))
        except _STREAM_ERRORS as exc:
            raise DataFormatError(read_error(self._name, exc)) from exc

    def __getattr__(self, attr: str) -> Any:  # seek, tell, closed...: the file's own
        return getattr(self._f, attr)


def read_error(name: str, exc: BaseException) -> str:
    """One line on a failed read of ``name``: what happened and what the user can do."""
    suffix = next((s for s in COMPRESSION_SUFFIXES if name.lower().endswith(s)), None)
    detail = str(exc) or type(exc).__name__
    if suffix is None:
        return f"{name}: reading failed: {detail}"
    if isinstance(exc, EOFError):
        return (f"{name}: the {suffix} data ends early: the file is truncated (an interrupted "
                "download or copy, or still being written)")
    return (f"{name}: not readable as {suffix} data ({detail}): the file is corrupt, or its "
            f"name ends in {suffix} but it is not compressed that way")


def iter_text_blocks(
    src: str | os.PathLike[str], storage_options: dict | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> Iterator[tuple[bytes, int]]:
    """Yield ``(text, first_line)``: runs of whole lines of about ``block_bytes`` bytes. A
    UTF-8 byte order mark at the start (Excel's "CSV UTF-8" writes one) is not text: kept, it
    became part of the first column's name, so a header's ``label`` was not found by name."""
    with open_text(src, storage_options) as f:
        carry, line, first = b"", 1, True
        while True:
            data = f.read(block_bytes)
            if first and data.startswith(_BOM):
                data = data[len(_BOM):]
            first = False
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


def _digits(
    words: np.ndarray, first: np.ndarray, count: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Integer value of ``count[k]`` (<= 16) digit bytes starting at ``first[k]``; non-digits."""
    value, bad = _swar8(words[first], np.minimum(count, 8))
    long = np.flatnonzero(count > 8)
    if long.size:
        c2 = np.minimum(count[long] - 8, 8)
        low, bad2 = _swar8(words[first[long] + 8], c2)
        value[long] = value[long] * _POW10_U[c2] + low
        bad[long] |= bad2 | (count[long] > 16)
    return value.astype(np.int64), bad


FLOAT32_MAX = float(np.finfo(np.float32).max)


def beyond_float32(values: np.ndarray, dtype: Any) -> np.ndarray:
    """The positions of ``values`` (float64) that a cast to ``dtype`` would turn into
    infinities: none unless ``dtype`` is float32 (a value above 3.4e38 there)."""
    if np.dtype(dtype) != np.float32 or values.size == 0:
        return np.zeros(0, dtype=np.int64)
    with np.errstate(invalid="ignore"):  # (NaN and inf: the callers' finiteness checks)
        return np.flatnonzero(np.isfinite(values) & (np.abs(values) > FLOAT32_MAX))


FLOAT32_HINT = "above float32's range (3.4e38): convert with --dtype float64 / dtype='float64'"


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
        token = text.buf[starts[j]:stops[j]]
        try:
            values[j] = float(token)
        except ValueError:
            truth = TRUTH_WORDS.get(token.lower())  # (pandas writes a bool column so)
            if truth is None:
                raise _BadToken(j) from None
            values[j] = truth
    return values, ~(signed | has_dot | fallback)


# A bool column as pandas' to_csv writes it (True/False) reads as 1/0, as the same column of a
# DataFrame trains (Python's spelling in any case; not yes/no, which are labels' words).
TRUTH_WORDS = {b"true": 1.0, b"false": 0.0}


def is_truth_word(text: str) -> bool:
    """Whether a field is one of :data:`TRUTH_WORDS` (any case), as the parser reads it."""
    return text.strip().lower().encode() in TRUTH_WORDS


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


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True



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
