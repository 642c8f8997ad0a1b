"""Converters into the dsvm dataset format: files (``convert``) and arrays (``write_arrays``).

Both stream: the input is read a block at a time and the writer re-chunks it, so peak memory
is a few chunks whatever the input size (``write_arrays`` on in-memory arrays adds only
per-chunk copies). ``shuffle=True`` adds an external shuffle through temporary bucket files.
"""

from __future__ import annotations

import io
import itertools
import logging
import math
import os
import warnings
import zipfile
from collections.abc import Iterable, Iterator
from typing import IO, Any

import fsspec
import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import Block, CSRBlock, DenseBlock
from dsvm.data.readers import (
    CSVSource,
    LibSVMSource,
    check_block_values,
    is_number,
    source_kind,
    strip_compression,
)
from dsvm.data.shuffle import n_buckets_for, shuffle_blocks, shuffle_tmp_dir
from dsvm.data.spread import clustered_labels
from dsvm.data.zarr_store import DTYPES, Dataset, DatasetWriter, check_destination
from dsvm.exceptions import DataFormatError, DataOrderWarning

logger = logging.getLogger(__name__)

TARGET_CHUNK_BYTES = 32 << 20
MIN_CHUNK_ROWS = 1024
DENSE_DENSITY = 0.25
NPY_BLOCK_BYTES = 16 << 20


# --------------------------------------------------------------------------------------------
# NumPy .npy / .npz readers
# --------------------------------------------------------------------------------------------


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


def _open_npy(path: Any, storage_options: dict | None, stack: list[Any]) -> _ArrayRows:
    name = os.fspath(path)
    if "://" not in name or name.startswith("file://"):
        local = name[len("file://"):] if name.startswith("file://") else name
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
    """

    kind = "numpy"

    def __init__(self, src: str | os.PathLike[str], *, labels: Any = None,
                 dtype: Any = np.float32, storage_options: dict | None = None) -> None:
        self.src, self.name = src, os.fspath(src)
        self.dtype = np.dtype(dtype)
        self.storage_options = storage_options
        self._closers: list[Any] = []
        self._X: _ArrayRows | None = None
        self._weights: _ArrayRows | None = None
        self._csr: tuple[np.ndarray, _ArrayRows, _ArrayRows] | None = None
        try:
            self._open(labels)
        except BaseException:
            self.close()
            raise

    def _open(self, labels: Any) -> None:
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
            if labels is None and "y" in keys:
                y = self._member("y")
            if "sample_weight" in keys:
                self._weights = self._member("sample_weight")
        self._y = y if y is not None else self._labels(labels)
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

    def _labels(self, labels: Any) -> _ArrayRows:
        if labels is None:
            raise DataFormatError(
                f"{self.name} holds no labels; pass labels=<path to a .npy of labels>"
            )
        if isinstance(labels, (str, os.PathLike)):
            return _open_npy(labels, self.storage_options, self._closers)
        return _ArrayRows(np.asarray(labels), "labels")

    def blocks(self, n_features: int | None = None) -> Iterator[DenseBlock | CSRBlock]:
        """Blocks of about NPY_BLOCK_BYTES of dense rows; closes the files at the end."""
        try:
            step = max(1, NPY_BLOCK_BYTES // max(1, self.n_features * 8))
            for start in range(0, self.n_samples, step):
                yield self._block(start, min(self.n_samples, start + step))
        finally:
            self.close()

    def _block(self, start: int, stop: int) -> DenseBlock | CSRBlock:
        n = stop - start
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
            block = CSRBlock(indptr=m.indptr.astype(np.int64), indices=m.indices.astype(np.int32),
                             data=m.data.astype(self.dtype), y=y, n_features=self.n_features,
                             sample_weight=w)
        else:
            assert self._X is not None
            X = _as_float(self._X.read(n), self._X.name, start, "value")
            block = DenseBlock(X=np.ascontiguousarray(X, dtype=self.dtype), y=y, sample_weight=w)
        check_block_values(block, self.name, start)
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


# --------------------------------------------------------------------------------------------
# Conversion
# --------------------------------------------------------------------------------------------


def auto_chunk_rows(
    layout: str, n_features: int, dtype: Any, *, nnz_per_row: float | None = None,
    n_samples: int | None = None,
) -> int:
    """Rows per chunk so that a chunk is about 32 MiB uncompressed (X and y).

    At least 1024 rows, and never more than ``n_samples`` when it is known.
    """
    item = np.dtype(dtype).itemsize
    if layout == "dense":
        row_bytes = n_features * item + 8
    else:  # data + int32 index per stored value, int64 indptr and float64 y per row
        row_bytes = (nnz_per_row or 0.0) * (item + 4) + 16
    rows = max(MIN_CHUNK_ROWS, int(TARGET_CHUNK_BYTES // max(row_bytes, 1.0)))
    if n_samples is not None:
        rows = min(rows, max(1, n_samples))
    return rows


def choose_layout(layout: str, *, sparse_input: bool, density: float | None) -> str:
    """Resolve ``layout="auto"``: dense input stays dense; sparse input becomes dense when at
    least 25% of its entries are stored (then dense rows are smaller and faster)."""
    if layout not in ("auto", "dense", "sparse"):
        raise ValueError(f"layout must be 'auto', 'dense' or 'sparse'; got {layout!r}")
    if layout != "auto":
        return layout
    if not sparse_input:
        return "dense"
    return "dense" if density is not None and density >= DENSE_DENSITY else "sparse"


def _check_dtype(dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if dt.name not in DTYPES:
        raise ValueError(f"dtype must be 'float32' or 'float64'; got {dt.name!r}")
    return dt


def _check_positive_int(name: str, value: Any, *, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive int or None; got {value!r}")
    return int(value)


def _check_labels(writer: DatasetWriter, name: str) -> None:
    """A conversion needs rows and, when labels are classes, at least two of them."""
    if writer.n_samples == 0:
        raise DataFormatError(f"{name}: no samples found (the input is empty or only comments)")
    counts = writer.label_counts
    if counts is not None and len(counts) == 1:
        (value,) = counts
        raise DataFormatError(
            f"{name}: all {writer.n_samples} samples have the label {value:g}; a classifier "
            "needs at least two classes (check label_column= or the labels file)"
        )


def _peek(blocks: Iterable[Block]) -> tuple[Block | None, Iterator[Block]]:
    """The first block and an iterator that still yields it."""
    it = iter(blocks)
    first = next(it, None)
    return first, (it if first is None else itertools.chain([first], it))


def _nnz_per_row(block: Block | None) -> float:
    if block is None or block.n_samples == 0:
        return 0.0
    if isinstance(block, CSRBlock):
        return float(block.indptr[-1]) / block.n_samples
    return float(np.count_nonzero(block.X)) / block.n_samples


def _write(
    blocks: Iterable[Block], dst: str | os.PathLike[str], *, name: str, n_features: int,
    layout: str, dtype: np.dtype, chunk_rows: int, overwrite: bool, provenance: dict,
    storage_options: dict | None, attrs: dict | None = None,
) -> Dataset:
    """Append every block to a new dataset; on any error nothing is left at ``dst``."""
    try:
        with DatasetWriter(dst, n_features=n_features, layout=layout, dtype=dtype,
                           chunk_rows=chunk_rows, provenance=provenance, overwrite=overwrite,
                           storage_options=storage_options, source_name=name) as writer:
            for block in blocks:
                writer.append(block)
            _check_labels(writer, name)
            if attrs:
                writer.update_attrs(attrs)
    finally:
        close = getattr(blocks, "close", None)
        if close is not None:
            close()  # a generator's cleanup (temporary shuffle buckets, open files) runs now
    assert writer.dataset is not None
    return writer.dataset


def convert(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    labels: Any = None,
    n_features: int | None = None,
    chunk_rows: int | None = None,
    layout: str = "auto",
    shuffle: bool = False,
    seed: int = 0,
    label_column: int | str = 0,
    dtype: Any = "float32",
    overwrite: bool = False,
    delimiter: str | None = None,
    storage_options: dict | None = None,
) -> Dataset:
    """Convert a file to a dsvm dataset, streaming (peak memory: a few chunks).

    Parameters
    ----------
    src : path or fsspec URL
        svmlight/libsvm text (plain, .gz, .bz2, .xz; any extension not listed below), ``.npy``
        (X; labels from ``labels=``), ``.npz`` (arrays ``X``, ``y`` and optionally
        ``sample_weight``, or a ``scipy.sparse.save_npz`` file plus ``labels=``), or
        ``.csv``/``.tsv`` (optionally compressed; one label column; header auto-detected).
    dst : path or fsspec URL of the zarr group to create.
    labels : path to a .npy of labels, or an array; for .npy / sparse .npz inputs.
    n_features : int, optional
        Number of features. For libsvm, an index above it is an error; by default it is the
        largest index found in a first pass over the file.
    chunk_rows : int, optional
        Rows per chunk; default about 32 MiB of uncompressed data per chunk (>= 1024 rows).
    layout : {"auto", "dense", "sparse"}
        "auto" keeps dense inputs (npy, csv, dense npz) dense; sparse inputs (libsvm, sparse
        npz) become dense when their density (nnz / (n_samples * n_features)) is >= 0.25.
        For libsvm the density comes from the first pass, which runs whenever ``n_features``
        is not given, ``layout="auto"`` or ``shuffle=True``; otherwise the file is read once.
    shuffle : bool
        Shuffle rows across the whole input (external shuffle: rows are scattered into
        temporary bucket files, each bucket is permuted in memory). Deterministic given ``seed``.
    label_column : int or str
        CSV only: the label column, by position or header name.
    dtype : "float32" or "float64"
        Storage dtype of X (labels are always float64).
    delimiter : str, optional
        CSV only: default "\\t" for .tsv, else sniffed from the first line (",", tab, ";",
        whitespace).
    storage_options : dict, optional
        fsspec options for ``src``, ``labels`` and ``dst``.

    Raises
    ------
    DataFormatError
        Malformed input; the message names the file and line (text) or row (NumPy).
    FileExistsError
        ``dst`` exists and ``overwrite`` is False.
    """
    dt = _check_dtype(dtype)
    n_features = _check_positive_int("n_features", n_features)
    chunk_rows = _check_positive_int("chunk_rows", chunk_rows)
    choose_layout(layout, sparse_input=False, density=None)  # validates the option
    check_destination(dst, overwrite=overwrite, storage_options=storage_options)
    name = os.fspath(src)
    kind = source_kind(src)
    if labels is not None and kind != "numpy":
        raise ValueError(
            f"labels= is for .npy/.npz inputs; {name} is read as {kind} text, whose labels are "
            "in the file (see label_column= for CSV)"
        )
    source: Any
    n_samples = nnz = None
    if kind == "libsvm":
        source = LibSVMSource(src, dtype=dt, storage_options=storage_options)
        if n_features is None or layout == "auto" or shuffle:
            stats = source.scan(n_features)
            n_samples, nnz = stats.n_samples, stats.nnz
            if n_features is None:
                if stats.n_features == 0:
                    raise DataFormatError(
                        f"{name}: no feature index:value pairs found; pass n_features= if "
                        "every row really is empty"
                    )
                n_features = stats.n_features
    elif kind == "csv":
        source = CSVSource(src, label_column=label_column, delimiter=delimiter, dtype=dt,
                           storage_options=storage_options)
        if n_features is not None and n_features != source.n_features:
            raise ValueError(
                f"{name} has {source.n_features} feature columns but n_features={n_features}"
            )
        n_features = source.n_features
        if shuffle:
            n_samples = source.count_rows()
    else:
        source = NumpySource(src, labels=labels, dtype=dt, storage_options=storage_options)
        if n_features is not None and n_features != source.n_features:
            source.close()
            raise ValueError(f"{name} has {source.n_features} columns but n_features={n_features}")
        n_features, n_samples, nnz = source.n_features, source.n_samples, source.nnz
    assert n_features is not None
    density = None if nnz is None or not n_samples else nnz / (n_samples * n_features)
    layout = choose_layout(layout, sparse_input=source.sparse, density=density)
    blocks: Iterable[Block] = source.blocks(n_features)
    if chunk_rows is None:
        per_row = None if nnz is None or not n_samples else nnz / n_samples
        if per_row is None and layout == "sparse":
            first, blocks = _peek(blocks)
            per_row = _nnz_per_row(first)
        chunk_rows = auto_chunk_rows(layout, n_features, dt, nnz_per_row=per_row,
                                     n_samples=n_samples)
    if shuffle:
        assert n_samples is not None
        blocks = shuffle_blocks(blocks, seed=seed, n_buckets=n_buckets_for(n_samples, chunk_rows),
                                layout=layout, dtype=dt, tmp_dir=shuffle_tmp_dir(dst))
    sources = [name] + ([os.fspath(labels)] if isinstance(labels, (str, os.PathLike)) else [])
    provenance = {"source": sources, "format": kind, "converter": "dsvm.data.convert"}
    logger.info("converting %s (%s) to %s: layout=%s chunk_rows=%d", name, kind,
                os.fspath(dst), layout, chunk_rows)
    dataset = _write(blocks, dst, name=name, n_features=n_features, layout=layout, dtype=dt,
                     chunk_rows=chunk_rows, overwrite=overwrite, provenance=provenance,
                     storage_options=storage_options,
                     attrs={"shuffled": bool(shuffle),
                            "shuffle_seed": int(seed) if shuffle else None})
    if not shuffle:
        problem = clustered_labels(dataset)
        if problem is not None:
            warnings.warn(f"{name}: {problem}", DataOrderWarning, stacklevel=2)
    return dataset


def _is_dask(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "chunks")


def write_arrays(
    dst: str | os.PathLike[str],
    X: Any,
    y: Any,
    *,
    sample_weight: Any = None,
    chunk_rows: int | None = None,
    layout: str = "auto",
    dtype: Any = None,
    overwrite: bool = False,
    provenance: dict | None = None,
    storage_options: dict | None = None,
) -> Dataset:
    """Write NumPy, scipy.sparse or dask arrays as a dsvm dataset.

    Dask arrays are computed one row block at a time, never whole. ``dtype=None`` keeps
    float32/float64 X and stores anything else as float64. ``layout="auto"``: dense arrays
    stay dense; scipy.sparse becomes dense at density >= 0.25; dask arrays follow their meta.
    """
    chunk_rows = _check_positive_int("chunk_rows", chunk_rows)
    choose_layout(layout, sparse_input=False, density=None)
    check_destination(dst, overwrite=overwrite, storage_options=storage_options)
    prov = {"source": ["arrays"], "converter": "dsvm.data.write_arrays", **(provenance or {})}
    if _is_dask(X):
        from dsvm.data.dask_io import dask_blocks

        n_samples = None if math.isnan(X.shape[0]) else int(X.shape[0])
        sparse_in = sp.issparse(getattr(X, "_meta", None))
        blocks: Iterable[Block] = dask_blocks(X, y, sample_weight)
        return _write_blocks(dst, blocks, n_samples=n_samples, n_features=_n_cols(X),
                             sparse_in=sparse_in, density=None, x_dtype=X.dtype, dtype=dtype,
                             layout=layout, chunk_rows=chunk_rows, overwrite=overwrite,
                             provenance=prov, storage_options=storage_options)
    if _is_dask(y) or _is_dask(sample_weight):  # small: 8 bytes per row
        y = np.asarray(y)
        sample_weight = None if sample_weight is None else np.asarray(sample_weight)
    block = _in_memory_block(X, y, sample_weight)
    n, f = block.n_samples, block.n_features
    density = None
    if isinstance(block, CSRBlock):
        density = int(block.indptr[-1]) / max(1, n * f)
    x_dtype = block.dtype
    return _write_blocks(dst, [block], n_samples=n, n_features=f,
                         sparse_in=isinstance(block, CSRBlock), density=density, x_dtype=x_dtype,
                         dtype=dtype, layout=layout, chunk_rows=chunk_rows, overwrite=overwrite,
                         provenance=prov, storage_options=storage_options)


def _n_cols(X: Any) -> int:
    if X.ndim != 2 or math.isnan(X.shape[1]):
        raise ValueError(f"X must be 2-D with a known number of columns; got shape {X.shape}")
    return int(X.shape[1])


def _in_memory_block(X: Any, y: Any, sample_weight: Any) -> Block:
    """Wrap in-memory arrays without copying X (the writer casts one chunk at a time)."""
    if sp.issparse(X):
        csr = sp.csr_matrix(X)
        if not csr.has_canonical_format:
            csr = csr.copy()  # never mutate the caller's matrix
            csr.sum_duplicates()
        data = csr.data if csr.data.dtype.kind == "f" else csr.data.astype(np.float64)
        X_block: Any = (csr.indptr.astype(np.int64), csr.indices.astype(np.int32), data)
        shape = csr.shape
    else:
        X = np.asarray(X)
        if X.dtype.kind not in "biuf":
            raise DataFormatError(f"X must hold numbers; got dtype {X.dtype}")
        shape = X.shape
    if len(shape) != 2:
        raise ValueError(f"X must be 2-D; got shape {shape}")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != shape[0]:
        raise DataFormatError(
            f"X has {shape[0]} rows but y has shape {y.shape}; they must have the same length"
        )
    try:
        y = y.astype(np.float64)
    except (TypeError, ValueError):
        raise DataFormatError(f"labels must be numbers; got dtype {y.dtype}") from None
    sw = None
    if sample_weight is not None:
        sw = np.asarray(sample_weight, dtype=np.float64)
        if sw.shape != (shape[0],):
            raise DataFormatError(
                f"X has {shape[0]} rows but sample_weight has shape {sw.shape}"
            )
    if sp.issparse(X):
        indptr, indices, data = X_block
        return CSRBlock(indptr=indptr, indices=indices, data=data, y=y, n_features=shape[1],
                        sample_weight=sw)
    return DenseBlock(X=X, y=y, sample_weight=sw)


def _write_blocks(
    dst: str | os.PathLike[str], blocks: Iterable[Block], *, n_samples: int | None,
    n_features: int, sparse_in: bool, density: float | None, x_dtype: Any, dtype: Any,
    layout: str, chunk_rows: int | None, overwrite: bool, provenance: dict,
    storage_options: dict | None,
) -> Dataset:
    if n_features < 1:
        raise ValueError("X must have at least one column")
    if dtype is None:
        dtype = x_dtype if np.dtype(x_dtype).name in DTYPES else np.float64
    dt = _check_dtype(dtype)
    layout = choose_layout(layout, sparse_input=sparse_in, density=density)
    if chunk_rows is None:
        per_row = None
        if layout == "sparse":
            first, blocks = _peek(blocks)
            per_row = _nnz_per_row(first)
        chunk_rows = auto_chunk_rows(layout, n_features, dt, nnz_per_row=per_row,
                                     n_samples=n_samples)
    return _write(blocks, dst, name="write_arrays input", n_features=n_features, layout=layout,
                  dtype=dt, chunk_rows=chunk_rows, overwrite=overwrite, provenance=provenance,
                  storage_options=storage_options)
