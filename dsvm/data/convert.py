"""``convert``: files into the dsvm dataset format, streaming (peak memory: a few chunks).

The input is read a block at a time and the writer re-chunks it. Each input format has a small
driver (``_open_libsvm``, ``_open_csv``, ``_open_numpy``) that opens its reader and reports what
a first look found (rows, features, stored values); the layout and chunk size are planned from
that (dsvm.data.planning). ``shuffle=True`` adds an external shuffle through temporary bucket
files. ``write_arrays`` (arrays rather than files) lives in dsvm.data.arrays and is re-exported.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from dsvm.data.arrays import write_arrays
from dsvm.data.attrs import DEFAULT_CODEC, check_codec
from dsvm.data.blocks import Block
from dsvm.data.csv_files import CSVFiles
from dsvm.data.csv_source import CSVSource, _first_line, written_index
from dsvm.data.dataset import Dataset, open_dataset
from dsvm.data.feature_layout import check_feature_order
from dsvm.data.fill import MEAN, Fill, check_fill
from dsvm.data.hashing import check_numeric_transform
from dsvm.data.label_column import AUTO, ids_as_labels, named_label
from dsvm.data.libsvm import LibSVMFiles, LibSVMSource
from dsvm.data.location import (
    CHECKPOINT,
    DATASET,
    MODEL,
    PREDICTIONS,
    check_destination,
    file_url,
    files_of,
    first_file,
    is_glob,
    is_many_files,
    kind_at,
    require_path,
)
from dsvm.data.numpy_source import NPY_BLOCK_BYTES, NumpySource
from dsvm.data.parquet_source import ParquetSource, is_parquet_path
from dsvm.data.planning import (
    DENSE_DENSITY,
    MIN_CHUNK_ROWS,
    TARGET_CHUNK_BYTES,
    _check_dtype,
    _check_positive_int,
    _nnz_per_row,
    _peek,
    _write,
    auto_chunk_rows,
    choose_layout,
    chunk_plan,
)
from dsvm.data.shuffle import n_buckets_for, shuffle_blocks, shuffle_dataset, shuffle_tmp_dir
from dsvm.data.spread import clustered_labels
from dsvm.data.table_csv_source import CRITEO_COLUMNS, TableCSVSource
from dsvm.data.text import source_kind, strip_compression
from dsvm.exceptions import DataFormatError, DataOrderWarning, warn

__all__ = [
    "DENSE_DENSITY", "MIN_CHUNK_ROWS", "NPY_BLOCK_BYTES", "TARGET_CHUNK_BYTES", "NumpySource",
    "auto_chunk_rows", "choose_layout", "convert", "write_arrays", "_check_dtype",
    "_check_positive_int",
]

logger = logging.getLogger(__name__)


@dataclass
class _Options:
    """Every option of ``convert``, checked (see its docstring)."""

    src: Any
    dst: Any
    labels: Any = None
    n_features: int | None = None
    chunk_rows: int | None = None
    layout: str = "auto"
    shuffle: bool = False
    seed: int = 0
    label_column: int | str | None = "auto"
    dtype: Any = "float32"
    overwrite: bool = False
    delimiter: str | None = None
    storage_options: dict | None = None
    labeled: bool | None = None
    feature_columns: Sequence[str] | None = None
    fill_missing: Fill = None
    format: str | None = None
    categorical: Sequence[int | str] | None = None
    hash_bits: int | None = None
    codec: str = DEFAULT_CODEC
    numeric_transform: str | None = None
    drop: Sequence[int | str] | None = None
    feature_order: str = "given"
    zero_based: bool | str = "auto"

    def __post_init__(self) -> None:
        self.dtype = _check_dtype(self.dtype)
        check_codec(self.codec)  # validates the option before anything is read
        check_feature_order(self.feature_order)
        self.n_features = _check_positive_int("n_features", self.n_features)
        self.chunk_rows = _check_positive_int("chunk_rows", self.chunk_rows)
        choose_layout(self.layout, sparse_input=False, density=None)  # validates the option
        check_destination(self.dst, overwrite=self.overwrite,
                          storage_options=self.storage_options)
        if self.labeled not in (None, True, False):
            raise ValueError(f"labeled must be None, True or False; got {self.labeled!r}")
        if self.labeled is False:
            self.label_column = None
        self.name = os.fspath(self.src)
        self.kind = _kind(self.src, self.format, self.storage_options)
        self.fill_missing = check_fill(self.fill_missing)
        tabular = self.kind in ("parquet", "criteo") or (self.kind == "csv" and self.categorical)
        if self.numeric_transform is not None:
            check_numeric_transform(self.numeric_transform)
            if not (self.kind == "criteo" or self.kind == "csv" and self.categorical):
                raise ValueError("numeric_transform= is for format='criteo' and CSV/TSV with "
                                 f"categorical= columns; {self.name} is read as {self.kind}")
        for opt in ("feature_columns", "fill_missing", "categorical", "hash_bits"):
            if getattr(self, opt) is not None and not (
                    tabular or opt in ("categorical", "fill_missing") and self.kind == "csv"):
                raise ValueError(f"{opt}= is for Parquet, CSV/TSV (hash_bits=: with categorical= "
                                 f"columns) or format='criteo'; {self.name} is read as "
                                 f"{self.kind}")
        if self.zero_based not in ("auto", True, False):
            raise ValueError(f"zero_based must be 'auto', True or False; got {self.zero_based!r}")
        if self.zero_based != "auto" and self.kind != "libsvm":
            raise ValueError(f"zero_based= is for svmlight/libsvm text; {self.name} is read as "
                             f"{self.kind}")
        if self.feature_columns is not None and self.kind != "parquet":
            raise ValueError("feature_columns= is for Parquet input")
        if self.drop is not None and self.kind not in ("csv", "parquet", "criteo"):
            raise ValueError(f"drop= is for CSV/TSV and Parquet columns; {self.name} is read "
                             f"as {self.kind}")
        if isinstance(self.drop, str):  # one name, not its letters
            self.drop = [self.drop]
        if self.labels is not None and self.kind != "numpy":
            raise ValueError(
                f"labels= is for .npy/.npz inputs; {self.name} is read as {self.kind} text, "
                "whose labels are in the file (see label_column= for CSV)"
            )


@dataclass
class _Opened:
    """A reader and what opening it found (None where unknown without a full pass)."""

    source: Any
    n_features: int
    n_samples: int | None = None
    nnz: int | None = None


def _open_libsvm(o: _Options) -> _Opened:
    options = dict(dtype=o.dtype, storage_options=o.storage_options,
                   labeled=o.labeled is not False, zero_based=o.zero_based)
    source: LibSVMSource | LibSVMFiles
    if is_many_files(o.src, o.storage_options):
        _, files = files_of(o.src, o.storage_options, "svmlight/libsvm")
        source = LibSVMFiles([file_url(o.src, f) for f in files], **options)
    else:
        source = LibSVMSource(o.src, **options)
    if not (o.n_features is None or o.layout == "auto" or o.shuffle):
        return _Opened(source, o.n_features)  # read once: no first pass needed
    stats = source.scan(o.n_features)
    n_features = o.n_features
    if n_features is None:
        if stats.n_features == 0:
            raise DataFormatError(
                f"{o.name}: no feature index:value pairs found; pass n_features= if every row "
                "really is empty"
            )
        n_features = stats.n_features
    return _Opened(source, n_features, stats.n_samples, stats.nnz)


def _text_files(o: _Options) -> list[str] | None:
    """The files of a folder or glob of CSV/TSV (:mod:`dsvm.data.csv_files`); None for one
    file."""
    if not is_many_files(o.src, o.storage_options):
        return None
    return [file_url(o.src, f) for f in files_of(o.src, o.storage_options, o.kind)[1]]


def _open_csv(o: _Options) -> _Opened:
    files = _text_files(o)
    o = _without_written_index(o, o.src if files is None else files[0])
    # pyarrow's reader knows missing values, and does not read the columns dropped (an id, a
    # name, a ticket: text the plain reader, which parses every field as a number, refused)
    if o.categorical or o.fill_missing is not None or o.drop:
        return _open_table_csv(o)

    def csv_source(path: Any) -> CSVSource:
        return CSVSource(path, label_column=o.label_column, delimiter=o.delimiter,
                         dtype=o.dtype, storage_options=o.storage_options, drop=o.drop or ())

    source: CSVSource | CSVFiles = (csv_source(o.src) if files is None
                                    else CSVFiles([csv_source(f) for f in files]))
    if o.n_features is not None and o.n_features != source.n_features:
        raise ValueError(
            f"{o.name} has {source.n_features} feature columns but n_features={o.n_features}"
        )
    assert source.n_features is not None
    return _Opened(source, source.n_features, source.count_rows() if o.shuffle else None)


def _without_written_index(o: _Options, first: Any) -> _Options:
    """``o`` with the index ``DataFrame.to_csv`` wrote (an unnamed first column counting the
    rows) dropped, and a warning: it trained as a feature, a row counter (on rows in time
    order, their time), and raw rows without it (Parquet, or a CSV written with
    index=False) were then refused for missing the model's column ''."""
    named = {str(c) for c in (o.drop or ())} | {str(c) for c in (o.categorical or ())}
    if named & {"", "0"} or o.label_column in ("", 0, "0") \
            or not written_index(first, o.storage_options, o.delimiter):
        return o
    warn(f"{o.name}: its first column has no name and counts the rows (0, 1, 2, ...): the "
         "index DataFrame.to_csv writes (index=False leaves it out), not a feature; it is not "
         "read", UserWarning)
    return replace(o, drop=[*(o.drop or ()), ""])


def _open_numpy(o: _Options) -> _Opened:
    source = NumpySource(o.src, labels=o.labels, dtype=o.dtype,
                         storage_options=o.storage_options, labeled=o.labeled)
    if o.n_features is not None and o.n_features != source.n_features:
        source.close()
        raise ValueError(
            f"{o.name} has {source.n_features} columns but n_features={o.n_features}")
    return _Opened(source, source.n_features, source.n_samples, source.nnz)


def _open_table_csv(o: _Options, **preset: Any) -> _Opened:
    files = _text_files(o)
    options = {
        "label_column": o.label_column, "categorical": o.categorical or (),
        "hash_bits": o.hash_bits, "delimiter": o.delimiter, "dtype": o.dtype,
        "storage_options": o.storage_options, "fill_missing": o.fill_missing,
        "numeric_transform": o.numeric_transform or "none", "drop": o.drop or (), **preset}
    source: TableCSVSource | CSVFiles
    if files is None:
        source = TableCSVSource(o.src, **options)
    else:  # (each file's means are not the input's: those come from all files, one pass)
        means = options["fill_missing"] == MEAN
        if means:
            options["fill_missing"] = None
        source = CSVFiles([TableCSVSource(f, **options) for f in files], means=means)
    assert source.n_features is not None
    return _Opened(source, source.n_features, source.count_rows() if o.shuffle else None)


def _open_criteo(o: _Options) -> _Opened:
    """Criteo's layout: label, I1..I13, C1..C26, tab-separated, empty fields missing. Its test
    files leave the label out: 39 fields, converted unlabeled (for predict)."""
    line, _ = _first_line(first_file(o.src, o.storage_options), o.storage_options)
    n_fields = line.count(b"\t") + 1
    has_label = n_fields == len(CRITEO_COLUMNS)
    if not has_label and o.labeled:
        raise DataFormatError(f"{o.name}: {n_fields} tab-separated fields, not Criteo's "
                              f"{len(CRITEO_COLUMNS)} with a label first")
    return _open_table_csv(
        o, column_names=CRITEO_COLUMNS if has_label else CRITEO_COLUMNS[1:], delimiter="\t",
        label_column="label" if has_label and o.labeled is not False else None,
        categorical=o.categorical or [f"C{i}" for i in range(1, 27)],
        fill_missing=0.0 if o.fill_missing is None else o.fill_missing,
        # counts with heavy tails (up to ~1e5): trained raw, they swamp the hashed features
        # (objective 3.3e5, test accuracy below the no-click rate, #25)
        numeric_transform=o.numeric_transform or "log1p")


def _open_parquet(o: _Options) -> _Opened:
    # Parquet columns go by name; ParquetSource refuses an int like any other non-column
    categorical = cast("Sequence[str]", o.categorical or ())
    source = ParquetSource(o.src, label_column=o.label_column, feature_columns=o.feature_columns,
                           fill_missing=o.fill_missing, dtype=o.dtype,
                           storage_options=o.storage_options, categorical=categorical,
                           hash_bits=o.hash_bits, drop=[str(c) for c in o.drop or ()])
    assert source.n_features is not None
    if o.n_features is not None and o.n_features != source.n_features:
        raise ValueError(
            f"{o.name} has {source.n_features} feature columns but n_features={o.n_features}")
    return _Opened(source, source.n_features, source.n_samples)


_DRIVERS = {"libsvm": _open_libsvm, "csv": _open_csv, "numpy": _open_numpy,
            "parquet": _open_parquet, "criteo": _open_criteo}
FORMATS = tuple(_DRIVERS)


# Inputs users have that dsvm does not read, by name: what to do instead. Read as svmlight
# (the default for other names), a workbook said "token 'PK\x03\x04...' is not of the form
# index:value".
_NOT_READ = {
    (".xlsx", ".xlsm", ".xls", ".ods"): "a spreadsheet: save it as CSV (Excel: Save As, CSV "
                                        "UTF-8), or read it with pandas.read_excel and fit "
                                        "on the frame",
    (".json", ".jsonl", ".ndjson"): "JSON: read it with pandas.read_json (lines=True for one "
                                    "record a line) and fit on the frame, or save it as "
                                    "Parquet",
    (".feather", ".arrow", ".h5", ".hdf5", ".hdf"): "not a format dsvm reads: save it as "
                                                    "Parquet or CSV",
    (".pkl", ".pickle", ".joblib"): "a pickle, which dsvm never loads (it runs code): save "
                                    "the arrays with numpy.save (.npy/.npz) or as Parquet",
}


def _kind(src: Any, fmt: str | None, storage_options: dict | None) -> str:
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS} or None; got {fmt!r}")
        return fmt
    name = strip_compression(os.fspath(src)).lower()
    said = next((what for suffixes, what in _NOT_READ.items() if name.endswith(suffixes)), None)
    if said is not None:
        raise DataFormatError(f"{os.fspath(src)} is {said}")
    if is_parquet_path(src, storage_options):
        return "parquet"
    if is_many_files(src, storage_options):  # a folder or glob: as its first file is named
        return source_kind(files_of(src, storage_options)[1][0])
    return source_kind(src)


def _dataset_rewritten(o: _Options) -> Dataset | None:
    """A dsvm dataset given as ``src``: its shuffled copy with ``shuffle=True``, else an error
    (its chunk files were read as svmlight text: "token '?i\x05...' is not of the form
    index:value"); a model, checkpoint or predictions, an error; None for anything else."""
    found = kind_at(o.src, o.storage_options) if not is_glob(o.name) else None
    if found in (MODEL, CHECKPOINT, PREDICTIONS):
        raise DataFormatError(f"{o.name} is {found}, not data to convert")
    if found != DATASET:
        return None
    if o.shuffle:
        return shuffle_dataset(o.src, o.dst, seed=o.seed, chunk_rows=o.chunk_rows,
                               overwrite=o.overwrite, storage_options=o.storage_options)
    ds = open_dataset(o.src, storage_options=o.storage_options)
    raise ValueError(f"{o.name} is already a dsvm dataset ({ds.n_samples:,} rows x "
                     f"{ds.n_features:,} features): train on it as it is, or pass shuffle=True "
                     "/ --shuffle to write a copy of it with its rows shuffled")


def _plan_chunks(opened: _Opened, blocks: Iterable[Block], layout: str, dt: np.dtype,
                 chunk_rows: int | None) -> tuple[int, str, Iterable[Block]]:
    """Rows per chunk (given, or sized from the stored values), why, and the blocks."""
    if chunk_rows is not None:
        return chunk_rows, "given (chunk_rows=)", blocks
    n_samples, nnz = opened.n_samples, opened.nnz
    per_row = None if nnz is None or not n_samples else nnz / n_samples
    if per_row is None and layout == "sparse":
        first, blocks = _peek(blocks)
        per_row = _nnz_per_row(first)
    rows, reason = chunk_plan(layout, opened.n_features, dt, nnz_per_row=per_row,
                              n_samples=n_samples)
    return rows, reason, blocks


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
    label_column: int | str | None = "auto",
    dtype: Any = "float32",
    overwrite: bool = False,
    delimiter: str | None = None,
    storage_options: dict | None = None,
    labeled: bool | None = None,
    feature_columns: Sequence[str] | None = None,
    fill_missing: Fill = None,
    format: str | None = None,
    categorical: Sequence[int | str] | None = None,
    hash_bits: int | None = None,
    codec: str = DEFAULT_CODEC,
    numeric_transform: str | None = None,
    drop: Sequence[int | str] | None = None,
    feature_order: str = "given",
    zero_based: bool | str = "auto",
) -> Dataset:
    """Convert a file to a dsvm dataset, streaming (peak memory: a few chunks).

    ``src`` (path or fsspec URL) is svmlight/libsvm text (plain or .gz/.bz2/.xz; the default
    for unknown names), ``.npy`` (X; labels from ``labels=``), ``.npz`` (``X``, ``y``,
    optional ``sample_weight``, or a ``scipy.sparse.save_npz`` file plus ``labels=``),
    ``.csv``/``.tsv`` (header auto-detected) or Parquet (a file, a directory of files or a
    glob such as ``s3://bucket/part-*.parquet``); ``format=`` overrides the guess from the
    name. ``dst`` is the zarr group to create (``overwrite=True`` to replace one).

    - ``labels``: a .npy path or an array of labels, for .npy / sparse .npz input.
    - ``labeled``: None: .npy/.npz without labels give an unlabeled dataset (for predict
      only); False: no labels in any format (svmlight lines of ``index:value`` only, CSV or
      Parquet without a label column, like ``label_column=None``); True: labels required.
    - ``label_column``: CSV/Parquet label column, by position or name; "auto" (default): the
      one header column named ``label``, ``labels``, ``target`` or ``class`` (else ``y``,
      else ``click``), case aside; a header naming none (or several) is an error naming its
      columns; rows without a header: the first column, or the last where the first rows
      say the first cannot be classes and the last can (more than 20 distinct numbers or
      fractions against a few whole numbers or names: dsvm.data.label_column; a warning
      when the first reads like a row id); the column taken is kept in
      the provenance (``label_column``). A header's feature names are kept as the attribute
      ``feature_names`` (a model trained on the dataset takes them as ``feature_names_in_``,
      so that ``dsvm predict`` reads new CSV/Parquet rows by name). Numbers (Parquet
      booleans: 0/1), or text names ("yes"/"no"; the first data row says which): names are
      stored as codes 0..K-1 with the sorted names (scikit-learn's LabelEncoder order) as the
      attribute ``label_names``. The names are known only at the end of a streamed input, so
      codes go by first appearance and the writer rewrites ``y`` (never X) once into the
      sorted order before the dataset is marked complete: one pass over the input, where
      gathering the names first would read (and for CSV parse) it twice
      (dsvm.data.label_names).
    - ``feature_columns`` (Parquet): default every column but the label, all numeric.
    - ``fill_missing`` (CSV/TSV, Parquet): the value of a missing feature (a null; in text an
      empty field, NA, NaN, null, N/A...: pyarrow's CSV reader reads such a file), or "mean":
      each column's mean over its present values (one more pass over the file; the means are
      kept as the attribute ``fill_values``, and by a model trained on the dataset for raw
      rows, dsvm.data.fill); by default an error naming the file, line or row group, column
      and row.
    - ``categorical``/``hash_bits`` (CSV/TSV, Parquet): columns hashed as ``column=value``
      tokens into ``2**hash_bits`` signed features after the numeric ones, as scikit-learn's
      FeatureHasher does (dsvm.data.hashing; the spec is stored as attribute ``hashing``).
      ``format="criteo"``: label, I1..I13, C1..C26, tab-separated, empty fields missing.
    - ``numeric_transform`` (Criteo, CSV/TSV with categorical columns): "log1p" stores the
      numeric columns as sign(x) log(1 + |x|) (counts with heavy tails), "none" as they are;
      default "log1p" for Criteo, "none" otherwise. Stored with the hashing spec, so that
      ``dsvm predict`` on raw rows applies it again.
    - ``drop`` (CSV/TSV, Parquet): columns (names, or positions in a CSV without a header)
      that are not features, e.g. an id or a timestamp (a huge-valued id slows training
      30-250x); a name that is not a column is an error naming it.
    - ``n_features``: libsvm: an index above it is an error (default: the largest found).
    - ``zero_based`` (libsvm): whether feature indices count from 0 (scikit-learn's
      ``dump_svmlight_file`` writes so by default) or from 1 (svmlight's and LIBSVM's
      convention); "auto" (default) decides as ``load_svmlight_file`` does: 0-based when some
      index is 0. Recorded in the dataset's provenance. A test file of 0-based data that
      happens to lack index 0 reads as 1-based under "auto": give ``zero_based=True``.
    - ``chunk_rows``: default sized from the bytes stored per row (see ``auto_chunk_rows``).
    - ``layout``: "auto" keeps dense input dense and makes sparse input dense at density
      >= 0.25; or "dense" / "sparse".
    - ``shuffle``/``seed``: an external shuffle of all rows (temporary bucket files).
    - ``dtype``: "float32" or "float64" for X (labels are float64); ``delimiter``: CSV.
    - ``storage_options``: fsspec options for ``src``, ``labels`` and ``dst``.
    - ``codec``: how the arrays are compressed: "auto" (default: "blosc-lz4" where it shrinks
      the first chunk's values 1.5x, else "none"), "blosc-lz4", "zstd" (level 1: smaller,
      slower to decode) or "none"; benchmarks/bench_codecs.py measures them.
    - ``feature_order``: "given" (default) keeps the feature ids; "frequency" renumbers a
      sparse dataset's features by descending count, so that the frequent ones sit together
      at the front of the model (faster epochs on skewed data: hashed click logs, text; see
      dsvm.data.feature_layout and benchmarks/bench_layout.py). Models, ``coef_`` and
      predictions stay in the original ids; the map is stored with the dataset.

    Raises ``DataFormatError`` for malformed input, naming the file and line, row or row
    group, and ``FileExistsError`` when ``dst`` exists; nothing is left at ``dst`` on error.
    """
    require_path(src, "convert's src (the file to read)")
    require_path(dst, "convert's dst (the dataset to write)")
    return _convert(_Options(
        src, dst, labels=labels, n_features=n_features, chunk_rows=chunk_rows, layout=layout,
        shuffle=shuffle, seed=seed, label_column=label_column, dtype=dtype, overwrite=overwrite,
        delimiter=delimiter, storage_options=storage_options, labeled=labeled,
        feature_columns=feature_columns, fill_missing=fill_missing, format=format,
        categorical=categorical, hash_bits=hash_bits, codec=codec, drop=drop,
        numeric_transform=numeric_transform, feature_order=feature_order,
        zero_based=zero_based,
    ))


def _convert(o: _Options) -> Dataset:
    rewritten = _dataset_rewritten(o)
    if rewritten is not None:
        return rewritten
    opened = _DRIVERS[o.kind](o)
    n_samples, nnz = opened.n_samples, opened.nnz
    density = None if nnz is None or not n_samples else nnz / (n_samples * opened.n_features)
    layout = choose_layout(o.layout, sparse_input=opened.source.sparse, density=density)
    blocks = opened.source.blocks(opened.n_features)
    chunk_rows, reason, blocks = _plan_chunks(opened, blocks, layout, o.dtype, o.chunk_rows)
    if hasattr(opened.source, "block_rows") and not o.shuffle:
        # read blocks of one chunk each (NumpySource): its generator takes the size at its
        # first block, which planning did not peek at (a CSR .npz knows its nnz); had it,
        # blocks would only be stitched into chunks as for any other source
        opened.source.block_rows = chunk_rows
    if o.shuffle:
        assert n_samples is not None
        blocks = shuffle_blocks(blocks, seed=o.seed,
                                n_buckets=n_buckets_for(n_samples, chunk_rows), layout=layout,
                                dtype=o.dtype, tmp_dir=shuffle_tmp_dir(o.dst))
    labels, spec = o.labels, getattr(opened.source, "spec", None)
    sources = [o.name] + ([os.fspath(labels)] if isinstance(labels, (str, os.PathLike)) else [])
    provenance: dict[str, Any] = {"source": sources, "format": o.kind,
                                  "converter": "dsvm.data.convert"}
    if o.kind == "libsvm":
        provenance["zero_based"] = bool(opened.source.zero_based is True)
    if o.fill_missing is not None and not isinstance(o.fill_missing, dict):
        provenance["fill_missing"] = o.fill_missing
    if getattr(opened.source, "decimal_comma", False):
        provenance["decimal_comma"] = True  # (said by dsvm convert: read as no one asked)
    if getattr(opened.source, "encoding", "utf-8") != "utf-8":
        provenance["encoding"] = opened.source.encoding  # (likewise)
    label_name = getattr(opened.source, "label_name", None)
    if label_name is not None and o.kind in ("csv", "parquet"):
        provenance["label_column"] = label_name  # (chosen by "auto" unless given)
        if getattr(opened.source, "label_reason", None):
            provenance["label_reason"] = opened.source.label_reason
    logger.info("converting %s (%s) to %s: layout=%s chunk_rows=%d", o.name, o.kind,
                os.fspath(o.dst), layout, chunk_rows)
    dataset = _write(blocks, o.dst, name=o.name, n_features=opened.n_features, layout=layout,
                     dtype=o.dtype, chunk_rows=chunk_rows, overwrite=o.overwrite,
                     provenance=provenance, storage_options=o.storage_options,
                     attrs={"shuffled": bool(o.shuffle),
                            "shuffle_seed": int(o.seed) if o.shuffle else None,
                            "hashing": None if spec is None else spec.attrs(),
                            "feature_names": getattr(opened.source, "feature_names", None),
                            "fill_values": getattr(opened.source, "fill_values", None),
                            "chunk_reason": reason},
                     labeled=opened.source.labeled, codec=o.codec,
                     feature_order=o.feature_order,
                     label_names=getattr(opened.source, "label_names", None))
    if not o.shuffle and dataset.labeled:
        problem = clustered_labels(dataset)
        if problem is not None:
            warn(f"{o.name}: {problem}", DataOrderWarning)
    if o.label_column == AUTO and label_name is not None and dataset.labeled \
            and dataset.label_names is None and named_label([str(label_name)]) is None:
        first = dataset.read_chunk_labels(0)[0]
        if ids_as_labels(first):
            warn(f"{o.name}: the labels, its first column {label_name!r} (taken by default: no "
                 f"column is named label, target or class), are {first.size:,} distinct whole "
                 "numbers in the first rows: a row id? Pass label_column= / --label-column with "
                 "the label's column, and drop= / --drop the id.", UserWarning)
    return dataset
