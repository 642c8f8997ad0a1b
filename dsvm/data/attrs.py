"""Constants and attribute helpers of the on-disk dataset format (see dsvm.data.dataset).

Format version, layouts, dtypes, the compressor, the attributes the writer manages, and the
conversion of provenance and extra attributes into JSON.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import sys
from typing import Any

import numpy as np
from zarr.codecs import BloscCodec, ZstdCodec

FORMAT_VERSION = 1
MAX_CLASSES = 1000
LAYOUTS = ("dense", "sparse")
DTYPES = ("float32", "float64")
# The codec of every array a writer creates (``codec=``; zarr records it in each array's
# metadata, so reading needs no option and any older dataset stays readable). Blosc with LZ4 and
# byte shuffle (zarr v2's long-time default) is the default; benchmarks/bench_codecs.py compares
# the three on real and generated data (stored size, decode MB/s per core, cluster epoch).
CODECS = ("blosc-lz4", "zstd", "none")
DEFAULT_CODEC = "blosc-lz4"


def compressors(codec: str) -> tuple[Any, ...]:
    """zarr ``compressors=`` for ``codec`` (one of :data:`CODECS`); a clear error otherwise."""
    if codec == "blosc-lz4":
        return (BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"),)
    if codec == "zstd":
        return (ZstdCodec(level=1),)
    if codec == "none":
        return ()
    raise ValueError(f"codec must be one of {', '.join(repr(c) for c in CODECS)}; "
                     f"got {codec!r}")

_MIN_NNZ_CHUNK = 1024
_RESERVED_ATTRS = frozenset(
    {"dsvm_format", "complete", "n_samples", "n_features", "n_chunks", "chunk_rows", "layout",
     "dtype", "classes", "class_counts", "nnz", "has_sample_weight", "labeled"}
)


def _provenance(given: dict | None) -> dict[str, Any]:
    dsvm_version = str(getattr(sys.modules.get("dsvm"), "__version__", "") or "")
    if not dsvm_version:
        try:
            from importlib.metadata import version

            dsvm_version = version("dsvm")
        except Exception:  # pragma: no cover - not installed as a distribution
            dsvm_version = "unknown"
    out: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "dsvm_version": dsvm_version,
    }
    out.update(given or {})
    return _jsonable(out)


def _jsonable(value: Any) -> Any:
    """Turn NumPy scalars/arrays (and tuples) into JSON types for zarr attributes."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value
