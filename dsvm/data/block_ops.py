"""Block operations shared by the readers, the writer and the shuffle: slicing, gathering,
stacking, converting and validating row blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import Block, CSRBlock, DenseBlock
from dsvm.exceptions import DataFormatError, DataLayoutError


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a``, for the numba kernels' inputs that they only read.

    Numba compiles one specialisation per (dtype, layout, writeable) combination, so a kernel
    given a writable in-memory array and then a read-only zarr or dask chunk compiled twice
    (1-5 s each on a cold cache): given read-only views of what they read, they compile once.
    """
    v = a.view()
    v.flags.writeable = False
    return v


KernelRows = np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]


def kernel_rows(block: Block, dtype: np.dtype | type | None = None) -> KernelRows:
    """``block``'s rows as every kernel reads them (see :func:`read_only`): a C-contiguous
    dense array of X's dtype (or ``dtype``), or the CSR triple (indptr int64, indices int32,
    data of that dtype), all read-only views (no copy when the block holds them so already)."""
    if isinstance(block, DenseBlock):
        return read_only(np.ascontiguousarray(block.X, dtype=dtype))
    return (read_only(np.ascontiguousarray(block.indptr, dtype=np.int64)),
            read_only(np.ascontiguousarray(block.indices, dtype=np.int32)),
            read_only(np.ascontiguousarray(block.data, dtype=dtype)))


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
        X = _joined([b.X for b in blocks])  # type: ignore[union-attr]
        return DenseBlock(X=X, y=y, sample_weight=sw)
    csr = cast("Sequence[CSRBlock]", blocks)  # same layout as the first, which is CSR
    offsets = np.cumsum([0] + [int(b.indptr[-1]) for b in csr])
    indptr = np.concatenate(
        [np.zeros(1, np.int64)]
        + [b.indptr[1:] + off for b, off in zip(csr, offsets)]
    )
    return CSRBlock(
        indptr=indptr,
        indices=_joined([b.indices for b in csr]),
        data=_joined([b.data for b in csr]),
        y=y, n_features=csr[0].n_features, sample_weight=sw,
    )


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The parts stacked row-wise: a view when they are consecutive row ranges of one
    C-contiguous array (a window read into one buffer, Dataset.read_chunks), a copy otherwise."""
    first = parts[0]
    base = first.base
    if (isinstance(base, np.ndarray) and base.flags.c_contiguous and first.flags.c_contiguous
            and base.dtype == first.dtype and base.shape[1:] == first.shape[1:]):
        row_bytes = first.itemsize * int(np.prod(first.shape[1:], dtype=np.int64))
        at = first.__array_interface__["data"][0]
        start = at - base.__array_interface__["data"][0]
        for p in parts:
            if (p.base is not base or not p.flags.c_contiguous or p.dtype != first.dtype
                    or p.shape[1:] != first.shape[1:] or p.__array_interface__["data"][0] != at):
                break
            at += p.shape[0] * row_bytes
        else:
            if row_bytes and start % row_bytes == 0:
                lo = start // row_bytes
                return base[lo:lo + sum(p.shape[0] for p in parts)]
    return np.concatenate(parts)


def check_block_values(block: Block, where: str, first_row: int, *, labeled: bool = True) -> None:
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
    for name, arr in (("y", block.y if labeled else None), ("sample_weight", block.sample_weight)):
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
    if indices.size > 1 and not _is_canonical(block):
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


def _is_canonical(block: CSRBlock) -> bool:
    """Sorted, unique indices within every row: scipy's check, one pass in C with no temporary
    (the NumPy diagnosis below allocates two arrays of nnz; it runs only to name the bad row)."""
    m = sp.csr_matrix((block.data, block.indices, block.indptr),
                      shape=(block.indptr.shape[0] - 1, block.n_features), copy=False)
    return bool(m.has_canonical_format)
