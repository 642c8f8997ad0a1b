"""The readers and block operations, under their historical module name.

The code lives in dsvm.data.text (byte-level parsing), dsvm.data.libsvm, dsvm.data.csv_source,
dsvm.data.numpy_source (one module per input format) and dsvm.data.block_ops (slicing,
stacking, converting and validating blocks); this module re-exports them.
"""

from __future__ import annotations

from dsvm.data.block_ops import (
    check_block_values,
    coerce_block,
    concat_blocks,
    slice_block,
    take_rows,
)
from dsvm.data.csv_source import CSVSource
from dsvm.data.libsvm import LibSVMSource, SourceStats, parse_libsvm_block
from dsvm.data.numpy_source import NumpySource
from dsvm.data.text import (
    BLOCK_BYTES,
    COMPRESSION_SUFFIXES,
    is_number,
    iter_text_blocks,
    open_binary,
    source_kind,
    strip_compression,
)

__all__ = [
    "BLOCK_BYTES", "COMPRESSION_SUFFIXES", "CSVSource", "LibSVMSource", "NumpySource",
    "SourceStats", "check_block_values", "coerce_block", "concat_blocks", "is_number",
    "iter_text_blocks", "open_binary", "parse_libsvm_block", "slice_block", "source_kind",
    "strip_compression", "take_rows",
]
