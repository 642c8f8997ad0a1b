"""``write_arrays``: NumPy, scipy.sparse or dask arrays as a dsvm dataset.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp

from dsvm.data.attrs import DEFAULT_CODEC, DTYPES, check_codec
from dsvm.data.blocks import Block, CSRBlock, DenseBlock
from dsvm.data.dataset import Dataset
from dsvm.data.feature_layout import check_feature_order
from dsvm.data.label_names import LabelNames
from dsvm.data.location import check_destination, require_path
from dsvm.data.planning import (
    _check_dtype,
    _check_positive_int,
    _nnz_per_row,
    _peek,
    _write,
    choose_layout,
    chunk_plan,
)
from dsvm.exceptions import DataFormatError


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
    codec: str = DEFAULT_CODEC,
    feature_order: str = "given",
) -> Dataset:
    """Write NumPy, scipy.sparse or dask arrays as a dsvm dataset.

    Dask arrays are computed one row block at a time, never whole. ``dtype=None`` keeps
    float32/float64 X and stores anything else as float64. ``layout="auto"``: dense arrays
    stay dense; scipy.sparse becomes dense at density >= 0.25; dask arrays follow their meta.
    ``codec``: "auto" (default), "blosc-lz4", "zstd" (level 1) or "none" (see ``convert``).
    ``feature_order``: "given" (default) or "frequency", sparse features renumbered by
    descending count (see ``convert``).
    """
    require_path(dst, "write_arrays(dst, X, y): dst, the dataset to write,")
    chunk_rows = _check_positive_int("chunk_rows", chunk_rows)
    check_codec(codec)  # validates the option before anything is read
    check_feature_order(feature_order)
    choose_layout(layout, sparse_input=False, density=None)
    check_destination(dst, overwrite=overwrite, storage_options=storage_options)
    prov = {"source": ["arrays"], "converter": "dsvm.data.write_arrays", **(provenance or {})}
    if _is_dask(X):
        from dsvm.data.dask_io import dask_blocks

        n_samples = None if math.isnan(X.shape[0]) else int(X.shape[0])
        sparse_in = sp.issparse(getattr(X, "_meta", None))
        blocks: Iterable[Block] = dask_blocks(X, y, sample_weight)
        layout = choose_layout(layout, sparse_input=sparse_in, density=None)
        return _write_blocks(dst, blocks, n_samples=n_samples, n_features=_n_cols(X),
                             x_dtype=X.dtype, dtype=dtype, layout=layout, chunk_rows=chunk_rows,
                             overwrite=overwrite, provenance=prov,
                             storage_options=storage_options, codec=codec,
                             feature_order=feature_order)
    if _is_dask(y) or _is_dask(sample_weight):  # small: 8 bytes per row
        y = np.asarray(y)
        sample_weight = None if sample_weight is None else np.asarray(sample_weight)
    block, names = _in_memory_block(X, y, sample_weight)
    n, f = block.n_samples, block.n_features
    density = None
    if isinstance(block, CSRBlock):
        density = int(block.indptr[-1]) / max(1, n * f)
    x_dtype = block.dtype
    layout = choose_layout(layout, sparse_input=isinstance(block, CSRBlock), density=density)
    return _write_blocks(dst, [block], n_samples=n, n_features=f, x_dtype=x_dtype,
                         dtype=dtype, layout=layout, chunk_rows=chunk_rows, overwrite=overwrite,
                         provenance=prov, storage_options=storage_options, codec=codec,
                         feature_order=feature_order, label_names=names)


def _n_cols(X: Any) -> int:
    if X.ndim != 2 or math.isnan(X.shape[1]):
        raise ValueError(f"X must be 2-D with a known number of columns; got shape {X.shape}")
    return int(X.shape[1])


def _label_codes(y: np.ndarray) -> tuple[np.ndarray, LabelNames | None]:
    """(float64 labels, None), or for text labels ("yes"/"no") their codes and names, stored
    as ``convert`` stores a text label column (:mod:`dsvm.data.label_names`)."""
    try:
        return y.astype(np.float64), None
    except (TypeError, ValueError):
        if y.dtype.kind not in "OUS":
            raise DataFormatError(f"labels must be numbers or text; got dtype {y.dtype}") \
                from None
    missing = [i for i, v in enumerate(y.tolist()) if v is None or v != v]
    if missing:
        raise DataFormatError(f"y has a missing label at row {missing[0]} ({len(missing)} in "
                              "all); drop those rows or give them a class")
    names = LabelNames("write_arrays input")
    return names.encode(y.astype(str)), names


def _non_numbers(X: Any) -> str:
    """The columns of a DataFrame ``X`` that do not hold numbers, for an error ('' else)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None:
        return ""
    text = [str(c) for c, t in dtypes.items() if getattr(t, "kind", "O") not in "biuf"]
    return f" (the columns {text})" if text else ""


def _in_memory_block(X: Any, y: Any, sample_weight: Any) -> tuple[Block, LabelNames | None]:
    """Wrap in-memory arrays without copying X (the writer casts one chunk at a time); with
    the names of text labels (None: numbers)."""
    if sp.issparse(X):
        csr = sp.csr_matrix(X)
        if not csr.has_canonical_format:
            csr = csr.copy()  # never mutate the caller's matrix
            csr.sum_duplicates()
        data = csr.data if csr.data.dtype.kind == "f" else csr.data.astype(np.float64)
        X_block: Any = (csr.indptr.astype(np.int64), csr.indices.astype(np.int32), data)
        shape = csr.shape
    else:
        frame, X = X, np.asarray(X)
        if X.dtype.kind not in "biuf":
            raise DataFormatError(
                f"X must hold numbers; got dtype {X.dtype}{_non_numbers(frame)}: hash text "
                "columns with dsvm.convert(..., categorical=[...]) from CSV or Parquet, or fit "
                "on the DataFrame itself")
        shape = X.shape
    if len(shape) != 2:
        raise ValueError(f"X must be 2-D; got shape {shape}")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != shape[0]:
        raise DataFormatError(
            f"X has {shape[0]} rows but y has shape {y.shape}; they must have the same length"
        )
    y, names = _label_codes(y)
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
                        sample_weight=sw), names
    return DenseBlock(X=X, y=y, sample_weight=sw), names


def _write_blocks(
    dst: str | os.PathLike[str], blocks: Iterable[Block], *, n_samples: int | None,
    n_features: int, x_dtype: Any, dtype: Any, layout: str, chunk_rows: int | None,
    overwrite: bool, provenance: dict, storage_options: dict | None, codec: str,
    feature_order: str,
    label_names: LabelNames | None = None,
) -> Dataset:
    if n_features < 1:
        raise ValueError("X must have at least one column")
    if dtype is None:
        dtype = x_dtype if np.dtype(x_dtype).name in DTYPES else np.float64
    dt = _check_dtype(dtype)
    reason = "given (chunk_rows=)"
    if chunk_rows is None:
        per_row = None
        if layout == "sparse":
            first, blocks = _peek(blocks)
            per_row = _nnz_per_row(first)
        chunk_rows, reason = chunk_plan(layout, n_features, dt, nnz_per_row=per_row,
                                        n_samples=n_samples)
    return _write(blocks, dst, name="write_arrays input", n_features=n_features, layout=layout,
                  dtype=dt, chunk_rows=chunk_rows, overwrite=overwrite, provenance=provenance,
                  storage_options=storage_options, attrs={"chunk_reason": reason}, codec=codec,
                  feature_order=feature_order, label_names=label_names)
