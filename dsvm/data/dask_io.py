"""Dask views of datasets, and dask arrays as a stream of blocks. No training logic here.

This is the only module of dsvm.data that imports dask. It takes any object with the
``dsvm.data.dataset.Dataset`` interface and imports nothing of it, so that
``Dataset.to_dask`` can import this module without an import cycle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import dask
import dask.array as da
import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import Block, CSRBlock, DenseBlock, block_from_arrays
from dsvm.exceptions import DataLayoutError


def _chunk_X(ds: Any, block_id: tuple[int, ...] = (0,)) -> Any:
    """Task body: row chunk ``block_id[0]`` of X (ndarray, or scipy.sparse.csr_matrix)."""
    return ds.read_chunk(int(block_id[0])).to_matrix()


def _chunk_y(ds: Any, block_id: tuple[int, ...] = (0,)) -> np.ndarray:
    return ds.read_chunk_labels(int(block_id[0]))[0]


def dataset_to_dask(ds: Any) -> tuple[da.Array, da.Array]:
    """(X, y) with one dask chunk per row chunk; sparse X has scipy CSR chunks (``meta``)."""
    rows = tuple(int(r) for r in np.diff(ds.chunk_starts))
    f = ds.n_features
    if ds.layout == "dense":
        meta: Any = np.empty((0, f), dtype=ds.dtype)
    else:
        meta = sp.csr_matrix((0, f), dtype=ds.dtype)
    if not rows:
        return (da.from_array(np.empty((0, f), dtype=ds.dtype), chunks=((0,), (f,)), meta=meta),
                da.from_array(np.empty(0), chunks=((0,),)))
    # Each block is made from its block id alone, with no input array: built from a
    # da.arange of chunk numbers, the same key (_chunk_y-<token>, 2) reached the scheduler
    # with the arange fused into it by one graph's optimisation and not by another's, which
    # distributed warns "can cause failures and deadlocks" (GridSearchCV's folds of the
    # same arrays on a cluster: 41 warnings in one benchmark run).
    X = da.map_blocks(_chunk_X, ds=ds, chunks=(rows, (f,)), dtype=ds.dtype, meta=meta)
    y = da.map_blocks(_chunk_y, ds=ds, chunks=(rows,), dtype=np.float64,
                      meta=np.empty(0, dtype=np.float64))
    return X, y


def dataset_to_delayed(ds: Any) -> list[Any]:
    """One ``Delayed[Block]`` per row chunk."""
    read = dask.delayed(_read_block, pure=True)
    return [read(ds, i) for i in range(ds.n_chunks)]


def _read_block(ds: Any, i: int) -> Block:
    return ds.read_chunk(i)


# ``compute(*collections) -> tuple`` of their values, as dask.compute.
Compute = Callable[..., tuple[Any, ...]]


def dask_blocks(X: da.Array, y: Any, sample_weight: Any = None, *,
                compute: Compute = dask.compute) -> Iterator[Block]:
    """Compute a dask X one row block at a time (with the matching y / sample_weight).

    y and sample_weight may be NumPy or dask. A dask one is aligned to X's row chunks when the
    sizes are known; otherwise (unknown chunk sizes) it is computed whole, 8 bytes per row.

    Every value is computed by ``compute``, where the collections live: on the active Client's
    cluster when there is one, so this process waits on that cluster. This layer does not know
    the Client (only dsvm.distributed does), so the wait goes through the no-workers watchdog
    only when a caller above passes a compute that does (``dsvm.training.cluster.compute``).
    The default, dask.compute (what ``write_arrays`` of this layer uses), waits as long as the
    cluster takes: forever on a cluster that lost all its workers.
    """
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D; got shape {X.shape}")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})  # one task per row block: rows are the unit
    rows = X.chunks[0]
    known = not any(math.isnan(r) for r in rows)
    y = _align(y, rows, known, compute)
    sample_weight = _align(sample_weight, rows, known, compute)
    x_parts = X.to_delayed().ravel()
    y_parts = y.to_delayed().ravel() if isinstance(y, da.Array) else None
    w_parts = (sample_weight.to_delayed().ravel()
               if isinstance(sample_weight, da.Array) else None)
    offset = 0
    for i, x_part in enumerate(x_parts):
        parts = [x_part] + ([y_parts[i]] if y_parts is not None else [])
        parts += [w_parts[i]] if w_parts is not None else []
        values = list(compute(*parts))
        xb = values.pop(0)
        n = int(xb.shape[0])
        yb = values.pop(0) if y_parts is not None else np.asarray(y[offset:offset + n])
        wb = None
        if sample_weight is not None:
            wb = values.pop(0) if w_parts is not None else np.asarray(
                sample_weight[offset:offset + n])
        for name, arr in (("y", yb), ("sample_weight", wb)):
            if arr is not None and np.shape(arr)[0] != n:
                raise DataLayoutError(
                    f"dask block {i}: X has {n} rows but {name} has {np.shape(arr)[0]}; "
                    f"rechunk {name} like X ({name}.rechunk((X.chunks[0],)))"
                )
        offset += n
        yield _as_block(xb, yb, wb)
    for name, arr in (("y", y), ("sample_weight", sample_weight)):
        if arr is not None and not isinstance(arr, da.Array) and arr.shape[0] != offset:
            raise DataLayoutError(f"X has {offset} rows but {name} has {arr.shape[0]}")


def _align(v: Any, rows: tuple, known: bool, compute: Compute) -> Any:
    if v is None:
        return None
    if not isinstance(v, da.Array):
        return np.asarray(v)
    if known and not any(math.isnan(c) for c in v.chunks[0]) and v.shape[0] == sum(rows):
        return v.rechunk((rows,)) if v.chunks[0] != rows else v
    (whole,) = compute(v)
    return np.asarray(whole)


def _as_block(xb: Any, yb: Any, wb: Any) -> DenseBlock | CSRBlock:
    if sp.issparse(xb):
        xb = sp.csr_matrix(xb)
        if not xb.has_canonical_format:  # duplicates mean "sum" in scipy; on a copy
            xb = xb.copy()
            xb.sum_duplicates()
    else:
        xb = np.asarray(xb)
    return block_from_arrays(xb, np.asarray(yb), wb)
