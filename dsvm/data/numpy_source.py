"""NumPy inputs: .npy (memory-mapped when local, streamed otherwise) and .npz (dense or
scipy.sparse) as row blocks.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
from collections.abc import Iterator
from typing import IO, Any

import fsspec
import numpy as np
import scipy.sparse as sp

from dsvm.data.block_ops import check_block_values
from dsvm.data.blocks import CSRBlock, DenseBlock
from dsvm.data.text import is_number, strip_compression
from dsvm.exceptions import DataFormatError

NPY_BLOCK_BYTES = 16 << 20


class _NpyStream:
    """Read a C-order .npy array from a stream, a few rows at a time."""

    def __init__(self, f: IO[bytes], name: str) -> None:
        self.f, self.name = f, name
        major, _minor = np.lib.format.read_magic(f)
        if major == 1:
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        if fortran and len(shape) > 1:
            raise DataFormatError(
                f"{name}: Fortran-order arrays cannot be streamed; save it with "
                "np.save(path, np.ascontiguousarray(X))"
            )
        if dtype.hasobject:
            raise DataFormatError(f"{name}: object arrays are not supported; save numbers")
        self.shape, self.dtype = tuple(shape), dtype
        self.row_items = int(np.prod(self.shape[1:], dtype=np.int64))

    def read(self, n_rows: int) -> np.ndarray:
        count = n_rows * self.row_items
        raw = self.f.read(count * self.dtype.itemsize)
        arr = np.frombuffer(raw, dtype=self.dtype)
        if arr.shape[0] != count:
            raise DataFormatError(f"{self.name}: the file is truncated")
        return arr.reshape((n_rows,) + self.shape[1:])


def _as_float(arr: np.ndarray, name: str, first_row: int, what: str) -> np.ndarray:
    if arr.dtype.kind in "biuf":
        return arr
    try:
        return arr.astype(np.float64)
    except (ValueError, TypeError):
        for i, v in enumerate(arr.reshape(arr.shape[0], -1)):
            if not all(is_number(str(x)) for x in v):
                raise DataFormatError(
                    f"{name}, row {first_row + i}: {what} {v.tolist()!r} is not a number"
                ) from None
        raise


class _ArrayRows:
    """Rows of a 1-D or 2-D array from an in-memory/memory-mapped array or a .npy stream."""

    def __init__(self, source: np.ndarray | _NpyStream, name: str) -> None:
        self.source, self.name = source, name
        self.shape = source.shape
        self.pos = 0

    def read(self, n: int) -> np.ndarray:
        if isinstance(self.source, _NpyStream):
            out = self.source.read(n)
        else:
            out = np.asarray(self.source[self.pos:self.pos + n])
        self.pos += n
        return out


def _local_path(name: str) -> str | None:
    if "://" not in name:
        return name
    return name[len("file://"):] if name.startswith("file://") else None


# A zip member's local header (APPNOTE 4.3.7): 30 fixed bytes, then the name and extra field,
# whose lengths are the last two 16-bit fields, then the member's bytes.
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")


def _mmap_stored_npy(path: str, info: zipfile.ZipInfo, name: str) -> np.ndarray:
    """Memory-map an uncompressed .npy member of a local .npz (``np.savez``, ``save_npz``).

    Streaming it through zipfile copied every value into a new buffer before the conversion
    copied it again into zarr; mapped, the values go from the page cache straight to the
    compressor. zipfile's CRC check is skipped (a .npy memory-mapped by ``np.load`` has none
    either): a flipped byte goes unnoticed, a truncated file is still refused.
    """
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        fields = _LOCAL_HEADER.unpack(f.read(_LOCAL_HEADER.size))
        if fields[0] != b"PK\x03\x04":
            raise DataFormatError(f"{name}: bad zip member header; the file is damaged")
        start = info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]
        f.seek(start)
        stream = _NpyStream(f, name)
        offset = f.tell()
    count = int(np.prod(stream.shape, dtype=np.int64)) * stream.dtype.itemsize
    if offset + count > os.path.getsize(path) or offset - start + count > info.file_size:
        raise DataFormatError(f"{name}: the file is truncated")
    if count == 0:
        return np.zeros(stream.shape, dtype=stream.dtype)
    return np.memmap(path, dtype=stream.dtype, mode="r", offset=offset, shape=stream.shape)


def _open_npy(path: Any, storage_options: dict | None, stack: list[Any]) -> _ArrayRows:
    name = os.fspath(path)
    local = _local_path(name)
    if local is not None:
        try:
            arr = np.load(local, mmap_mode="r", allow_pickle=False)
        except ValueError as exc:
            raise DataFormatError(f"{name}: not a numeric .npy array ({exc})") from None
        return _ArrayRows(arr, name)
    f = fsspec.open(name, mode="rb", **(storage_options or {})).open()
    stack.append(f)
    return _ArrayRows(_NpyStream(f, name), name)


class NumpySource:
    """Dense X from .npy (memory-mapped when local) or dense/CSR arrays from .npz; y alongside.

    Dense and CSR .npz members are streamed out of the zip file; a CSR .npz keeps only its
    ``indptr`` (8 bytes per row) in memory. Other scipy.sparse formats (csc, coo) are loaded
    whole and converted to CSR. Labels come from ``labels=`` (a .npy path or an array) or,
    for a dense .npz, from its ``y`` member; an optional ``sample_weight`` member is kept.
    ``labeled``: None takes the labels where they are and converts without them otherwise;
    True requires them; False ignores a ``y`` member (the blocks then carry NaN labels).
    """

    kind = "numpy"

    def __init__(self, src: str | os.PathLike[str], *, labels: Any = None,
                 dtype: Any = np.float32, storage_options: dict | None = None,
                 labeled: bool | None = None) -> None:
        if labeled is False and labels is not None:
            raise ValueError("labels= was given for a conversion without labels")
        self.src, self.name = src, os.fspath(src)
        self.dtype = np.dtype(dtype)
        self.storage_options = storage_options
        self._closers: list[Any] = []
        self._X: _ArrayRows | None = None
        self._weights: _ArrayRows | None = None
        self._csr: tuple[np.ndarray, _ArrayRows, _ArrayRows] | None = None
        # rows per block; the conversion sets it to its chunk size, so that no chunk is
        # stitched together from two blocks (None: blocks of about NPY_BLOCK_BYTES)
        self.block_rows: int | None = None
        try:
            self._open(labels, labeled)
        except BaseException:
            self.close()
            raise

    def _open(self, labels: Any, labeled: bool | None) -> None:
        y: _ArrayRows | None = None
        if not strip_compression(self.name).lower().endswith(".npz"):
            self._X = _open_npy(self.src, self.storage_options, self._closers)
            shape = self._X.shape
        else:
            f = fsspec.open(self.name, mode="rb", **(self.storage_options or {})).open()
            self._closers.append(f)
            try:
                self._zip = zipfile.ZipFile(f)
            except zipfile.BadZipFile as exc:
                raise DataFormatError(f"{self.name}: not a .npz file ({exc})") from None
            keys = {n[:-4] for n in self._zip.namelist() if n.endswith(".npy")}
            if {"data", "indices", "indptr", "shape", "format"} <= keys:
                shape = self._open_sparse()
            elif "X" in keys:
                self._X = self._member("X")
                shape = self._X.shape
            else:
                raise DataFormatError(
                    f"{self.name}: expected arrays 'X' and 'y' or a scipy.sparse matrix; "
                    f"found {sorted(keys)}"
                )
            if labels is None and "y" in keys and labeled is not False:
                y = self._member("y")
            if "sample_weight" in keys:
                self._weights = self._member("sample_weight")
        self._y = y if y is not None or labeled is False else self._labels(labels, labeled)
        self.labeled = self._y is not None
        if len(shape) != 2:
            raise DataFormatError(f"{self.name}: X must be 2-D; got shape {shape}")
        self.sparse = self._csr is not None
        self.n_samples, self.n_features = int(shape[0]), int(shape[1])
        self.nnz = int(self._csr[0][-1]) if self._csr is not None else None
        for rows, what in ((self._y, "labels"), (self._weights, "sample weights")):
            if rows is not None and (len(rows.shape) != 1 or rows.shape[0] != self.n_samples):
                raise DataFormatError(
                    f"{self.name} has {self.n_samples} rows but {rows.name} has shape "
                    f"{rows.shape}; X and its {what} must have the same number of rows"
                )

    def _member(self, key: str) -> _ArrayRows:
        name = f"{self.name}[{key}]"
        local = _local_path(self.name)
        info = self._zip.getinfo(key + ".npy")
        if local is not None and info.compress_type == zipfile.ZIP_STORED:
            return _ArrayRows(_mmap_stored_npy(local, info, name), name)
        f = self._zip.open(key + ".npy")
        self._closers.append(f)
        return _ArrayRows(_NpyStream(f, f"{self.name}[{key}]"), f"{self.name}[{key}]")

    def _load_member(self, key: str) -> np.ndarray:
        with self._zip.open(key + ".npy") as f:
            return np.lib.format.read_array(f, allow_pickle=False)

    def _open_sparse(self) -> tuple[int, ...]:
        fmt = self._load_member("format").item()
        fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
        shape = tuple(int(s) for s in self._load_member("shape"))
        if fmt == "csr":
            self._csr = (self._load_member("indptr").astype(np.int64),
                         self._member("indices"), self._member("data"))
        else:
            with fsspec.open(self.name, mode="rb", **(self.storage_options or {})) as f:
                m = sp.load_npz(io.BytesIO(f.read())).tocsr()
            self._csr = (m.indptr.astype(np.int64), _ArrayRows(m.indices, self.name),
                         _ArrayRows(m.data, self.name))
        return shape

    def _labels(self, labels: Any, labeled: bool | None) -> _ArrayRows | None:
        if labels is None and labeled is None:
            return None  # no labels anywhere: a dataset to score, not to train on
        if labels is None:
            raise DataFormatError(
                f"{self.name} holds no labels; pass labels=<path to a .npy of labels>"
            )
        if isinstance(labels, (str, os.PathLike)):
            return _open_npy(labels, self.storage_options, self._closers)
        return _ArrayRows(np.asarray(labels), "labels")

    def blocks(self, n_features: int | None = None) -> Iterator[DenseBlock | CSRBlock]:
        """Blocks of about NPY_BLOCK_BYTES of stored values; closes the files at the end.

        The block size comes from the bytes stored per row (nnz for CSR), never from
        n_features alone: a CSR matrix with 2**22 columns and 40 values per row is read
        ~80,000 rows at a time, not one.
        """
        try:
            if self._csr is not None:
                assert self.nnz is not None  # set with _csr
                per_row = 12 * self.nnz / max(1, self.n_samples) + 16  # value, index, indptr, y
            else:
                per_row = 8 * self.n_features + 8
            step = self.block_rows or max(1, int(NPY_BLOCK_BYTES // per_row))
            for start in range(0, self.n_samples, step):
                yield self._block(start, min(self.n_samples, start + step))
        finally:
            self.close()

    def _block(self, start: int, stop: int) -> DenseBlock | CSRBlock:
        n = stop - start
        if self._y is None:
            y = np.full(n, np.nan)
        else:
            y = _as_float(self._y.read(n), self._y.name, start, "label").astype(np.float64)
        w = None
        if self._weights is not None:
            w = _as_float(self._weights.read(n), self._weights.name, start, "weight")
            w = w.astype(np.float64)
        block: DenseBlock | CSRBlock
        if self._csr is not None:
            indptr, indices, data = self._csr
            a, b = int(indptr[start]), int(indptr[stop])
            m = _canonical_csr(indptr[start:stop + 1] - a, indices.read(b - a),
                               _as_float(data.read(b - a), self.name, start, "value"),
                               self.n_features, f"{self.name}, rows from {start}")
            # the arrays were read for this block alone: cast without another copy
            block = CSRBlock(indptr=m.indptr.astype(np.int64, copy=False),
                             indices=m.indices.astype(np.int32, copy=False),
                             data=m.data.astype(self.dtype, copy=False), y=y,
                             n_features=self.n_features, sample_weight=w)
        else:
            assert self._X is not None
            X = _as_float(self._X.read(n), self._X.name, start, "value")
            block = DenseBlock(X=np.ascontiguousarray(X, dtype=self.dtype), y=y, sample_weight=w)
        check_block_values(block, self.name, start, labeled=self._y is not None)
        return block

    def close(self) -> None:
        while self._closers:
            try:
                self._closers.pop().close()
            except Exception:  # pragma: no cover - closing is best effort
                pass


def _canonical_csr(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                   n_features: int, where: str) -> Any:
    """A CSR matrix with sorted, unique indices (scipy's meaning of duplicates is their sum)."""
    if indices.size and (indices.min() < 0 or indices.max() >= n_features):
        bad = indices[(indices < 0) | (indices >= n_features)][0]
        raise DataFormatError(f"{where}: column index {bad} is out of range [0, {n_features})")
    m = sp.csr_matrix((data, indices, indptr), shape=(indptr.shape[0] - 1, n_features))
    if not m.has_canonical_format:
        m = m.copy()  # never mutate the arrays we were handed
        m.sum_duplicates()
    return m
