"""Constants and attribute helpers of the on-disk dataset format (see dsvm.data.dataset).

Format version, layouts, dtypes, the compressor, the attributes the writer manages, and the
conversion of provenance and extra attributes into JSON.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from zarr.codecs import BloscCodec, ZstdCodec

FORMAT_VERSION = 1
MAX_CLASSES = 1000
LAYOUTS = ("dense", "sparse")
DTYPES = ("float32", "float64")
# The codec of every array a writer creates (``codec=``; zarr records it in each array's
# metadata, so reading needs no option and any older dataset stays readable).
# benchmarks/bench_codecs.py measured, reading warm files: with no codec a core reads 1.0-2.3x
# more MB per CPU second than with Blosc LZ4 (byte shuffle; dsvm's only codec before), 2.1-2.2x
# on dense float data, which LZ4 shrinks only 1.09x (2M x 100 normals; zstd level 1: 1.10x, read
# 1.8-2.0x slower than LZ4). LZ4 shrinks the real 0/1-valued sets 7-13x, so "auto", the default,
# compresses the first chunk's stored values with LZ4 and keeps it only where they shrink at
# least 1.5x (ijcnn1 1.9x and reuters' tf-idf 1.6x still do).
CODECS = ("auto", "blosc-lz4", "zstd", "none")
DEFAULT_CODEC = "auto"
AUTO_MIN_RATIO = 1.5
_AUTO_SAMPLE = 1 << 20  # values of each array of the first chunk that "auto" compresses


def check_codec(codec: Any) -> str:
    """``codec`` if it is one of :data:`CODECS`, else a ``ValueError`` naming them."""
    if not isinstance(codec, str) or codec not in CODECS:
        raise ValueError(f"codec must be one of {', '.join(repr(c) for c in CODECS)}; "
                         f"got {codec!r}")
    return codec


def choose_codec(codec: str, values: Sequence[np.ndarray]) -> str:
    """The codec to write with: ``codec``, or for "auto" "blosc-lz4" when LZ4 shrinks
    ``values`` (the first chunk's dense X, or CSR data and indices) at least
    :data:`AUTO_MIN_RATIO` times, else "none" (an empty dataset: "blosc-lz4")."""
    if check_codec(codec) != "auto":
        return codec
    from numcodecs import Blosc

    lz4 = Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)
    raw = packed = 0
    for v in values:
        sample = np.ascontiguousarray(np.ravel(v)[:_AUTO_SAMPLE])
        raw += sample.nbytes
        packed += len(lz4.encode(sample)) if sample.nbytes else 0
    return "blosc-lz4" if raw == 0 or raw >= AUTO_MIN_RATIO * packed else "none"


def compressors(codec: str) -> tuple[Any, ...]:
    """zarr ``compressors=`` for a chosen ``codec`` (not "auto"; see :func:`choose_codec`)."""
    if check_codec(codec) == "blosc-lz4":
        return (BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"),)
    if codec == "zstd":
        return (ZstdCodec(level=1),)
    if codec == "none":
        return ()
    raise ValueError('"auto" is resolved by choose_codec before arrays are created')


_MIN_NNZ_CHUNK = 1024
_RESERVED_ATTRS = frozenset(
    {"dsvm_format", "complete", "n_samples", "n_features", "n_chunks", "chunk_rows", "layout",
     "dtype", "classes", "class_counts", "nnz", "has_sample_weight", "labeled", "codec",
     "feature_order", "label_names"}
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
