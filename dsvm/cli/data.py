"""``dsvm demo`` and ``dsvm convert`` (``dsvm info`` is :mod:`dsvm.cli.info`)."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from dsvm.cli.common import (
    add_fill_missing_arg,
    add_zero_based_arg,
    say_if_compiling,
    zero_based,
)


def _bundled(name: str) -> Path:
    return Path(__file__).resolve().parents[1] / "datasets" / name


def copy_bundled_data(directory: str, overwrite: bool) -> int:
    """``dsvm demo --data DIR``: the bundled a9a files where the README's Guide expects them."""
    import shutil

    from dsvm.cli.common import check_output
    from dsvm.data.location import XZ

    if not os.path.isdir(directory):
        raise FileNotFoundError(f"--data {directory}: no such directory")
    names = ("a9a.xz", "a9a.t.xz")
    targets = [os.path.join(directory, name) for name in names]
    for target in targets:  # --overwrite replaces an xz file there, never anything else
        check_output(target, flag="--data", kind=XZ, overwrite=overwrite)
    for name, target in zip(names, targets):
        shutil.copyfile(_bundled(name), target)
        print(f"copied the bundled {name} (UCI Adult, LIBSVM's a9a; see its README) to {target}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    if args.data is not None:
        return copy_bundled_data(args.data, args.overwrite)
    from dsvm import SVMClassifier, convert

    with tempfile.TemporaryDirectory(prefix="dsvm-demo-") as tmp:
        print(f"dsvm demo: converting the bundled a9a (UCI Adult) to zarr in {tmp}")
        # 4,096-row chunks: a9a is small, and every worker's stream should get some chunks
        train = convert(_bundled("a9a.xz"), os.path.join(tmp, "a9a.zarr"), n_features=123,
                        chunk_rows=4096)
        test = convert(_bundled("a9a.t.xz"), os.path.join(tmp, "a9a.t.zarr"), n_features=123,
                       chunk_rows=4096)
        print(f"  train: {train.n_samples} rows x {train.n_features} features, "
              f"{train.n_chunks} chunks ({train.layout})")
        print(f"  test:  {test.n_samples} rows")
        n = train.n_samples
        alpha = 1.0 / n  # C = 1 in LIBLINEAR's terms
        clf = SVMClassifier(
            solver="pegasos", alpha=alpha, fit_intercept=False, max_epochs=args.epochs, tol=None,
            random_state=args.seed, verbose=2, n_workers=args.workers,
        )
        where = (f"on a LocalCluster of {args.workers} workers" if args.workers else
                 "in this process, one thread per core (a small dataset: --workers N starts "
                 "a LocalCluster)")
        print(f"training pegasos (alpha={alpha:.3g}, {args.epochs} epochs) {where}")
        say_if_compiling("demo", clf)
        clf.fit(train, validation=test)
        result = clf.evaluate(test)
        print(f"test accuracy: {result['accuracy']:.4f} on {result['n_samples']} rows")
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from dsvm import convert
    from dsvm.cli.common import check_output
    from dsvm.data.feature_layout import check_feature_order
    from dsvm.data.location import DATASET, url_to_fs

    check_feature_order(args.feature_order, "--feature-order")  # before any work

    # before the input is read: never the input itself, never a thing that is not a dataset
    check_output(args.dst, flag="dst", kind=DATASET, overwrite=args.overwrite,
                 inputs=(args.src, args.labels))
    if "://" in args.src:
        url_to_fs(args.src)  # s3:// on the base install: the extra to install, before any work

    layout = "dense" if args.dense else "sparse" if args.sparse else "auto"
    label_column: Any = args.label_column
    if label_column is not None and label_column.lstrip("-").isdigit():
        label_column = int(label_column)
    kwargs: dict[str, Any] = dict(
        labels=args.labels, n_features=args.n_features, chunk_rows=args.chunk_rows,
        layout=layout, shuffle=args.shuffle, seed=args.seed, dtype=args.dtype,
        overwrite=args.overwrite, codec=args.codec, feature_order=args.feature_order,
    )
    if zero_based(args) != "auto":
        kwargs["zero_based"] = zero_based(args)
    if args.no_labels:
        if args.labels or label_column is not None:
            raise ValueError("--no-labels cannot be combined with --labels or --label-column")
        kwargs["labeled"] = False
    elif label_column is not None:
        kwargs["label_column"] = label_column
    for flag in ("feature_columns", "fill_missing", "format", "categorical", "hash_bits",
                 "numeric_transform", "drop"):
        if getattr(args, flag) is not None:
            kwargs[flag] = getattr(args, flag)
    ds = convert(args.src, args.dst, **kwargs)
    print(f"wrote {ds.url}: {ds.n_samples} rows x {ds.n_features} features, "
          f"{ds.n_chunks} chunks, {ds.layout}, {ds.dtype}"
          + ("" if ds.labeled else ", unlabeled (for predict only)")
          + _label_said(ds, args.label_column)
          + (", numbers with decimal commas" if _provenance(ds).get("decimal_comma") else "")
          + (f", text read as {_provenance(ds)['encoding']}"
             if "encoding" in _provenance(ds) else "")
          + (", features renumbered by frequency" if ds.feature_order == "frequency" else ""))
    return 0


def _label_said(ds: Any, given: str | None) -> str:
    """Which column of a table became the labels, when dsvm chose it (", labels: column
    'target'"): the first column of a CSV whose label is elsewhere trained a useless model."""
    column = _provenance(ds).get("label_column")
    if given is not None or column is None or not ds.labeled:
        return ""
    from dsvm.data.label_column import named_label

    how = ("by its name" if named_label([str(column)]) is not None else
           _provenance(ds).get("label_reason") or "the first column")
    return f", labels: column {column!r} ({how}; --label-column to choose another)"


def _provenance(ds: Any) -> dict[str, Any]:
    return ds.attrs.get("provenance") or {}


def _column_list(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def add_data_commands(sub: Any) -> None:
    _add_demo_command(sub)
    _add_convert_command(sub)


def _add_demo_command(sub: Any) -> None:
    p = sub.add_parser("demo", help="convert the bundled a9a, train on a LocalCluster, test")
    p.add_argument("--epochs", type=int, default=10, help="Pegasos epochs over a9a")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes of the LocalCluster (default: one per core)")
    p.add_argument("--seed", type=int, default=0, help="random_state of the fit")
    p.add_argument("--data", metavar="DIR", default=None,
                   help="only copy the bundled a9a.xz and a9a.t.xz into DIR (for the README's "
                        "Guide) and exit (default: train and test in a scratch folder)")
    p.add_argument("--overwrite", action="store_true", help="with --data: replace the files")
    p.set_defaults(func=cmd_demo)


def _add_convert_command(sub: Any) -> None:
    p = sub.add_parser("convert",
                       help="convert libsvm/svmlight, .npy/.npz or CSV to a zarr dataset")
    p.add_argument("src", help="input file or URL: svmlight/libsvm text (plain, .gz, .bz2, "
                               ".xz), .npy, .npz, CSV/TSV, Parquet, Criteo TSV; a folder or "
                               "glob of svmlight or Parquet files")
    p.add_argument("dst", help="the zarr dataset to write (a folder or fsspec URL)")
    p.add_argument("--labels", metavar="Y.npy",
                   help="labels for a .npy X (default: a .npy X is converted unlabeled)")
    p.add_argument("--n-features", type=int, default=None, metavar="N",
                   help="svmlight: the number of features, an index above it an error "
                        "(default: the largest index found; give it for a test file that may "
                        "not use the last feature)")
    p.add_argument("--chunk-rows", type=int, default=None, metavar="ROWS",
                   help="rows per chunk (default: about 32 MB per chunk, at least two chunks "
                        "per worker of this machine; `dsvm info` says why)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--dense", action="store_true",
                   help="store X dense (default: dense or CSR chosen by density)")
    g.add_argument("--sparse", action="store_true",
                   help="store X as CSR (default: dense or CSR chosen by density)")
    p.add_argument("--shuffle", action="store_true",
                   help="shuffle rows across the whole file (an external shuffle in bounded "
                        "memory; training interleaves chunks anyway)")
    p.add_argument("--seed", type=int, default=0, help="seed of --shuffle")
    # validated by convert (dsvm.data.attrs.CODECS), which the CLI does not import up front
    p.add_argument("--codec", default="auto",
                   help="how the arrays are compressed: auto (default: blosc-lz4 where it "
                        "shrinks the first chunk 1.5x, else none), blosc-lz4, zstd (level 1) "
                        "or none; see benchmarks/bench_codecs.py")
    # validated by convert's command (dsvm.data.feature_layout.FEATURE_ORDERS), one line
    p.add_argument("--feature-order", default="given", metavar="ORDER",
                   help="given (default): keep the feature ids; frequency: renumber a sparse "
                        "dataset's features by descending count, so that the frequent ones "
                        "sit together in the model (faster epochs on skewed data: hashed "
                        "click logs, text; see benchmarks/bench_layout.py). Models and "
                        "predictions stay in the original ids")
    add_zero_based_arg(p)
    p.add_argument("--label-column", default=None, metavar="COLUMN",
                   help="CSV/TSV/Parquet label column, a position or a name (default: the "
                        "header's column named label, target, class, y or click; a header "
                        "naming none is refused; no header: the first column, or the last "
                        "where the first cannot be classes and the last can)")
    p.add_argument("--no-labels", action="store_true",
                   help="the data has no labels (svmlight lines of index:value only, CSV "
                        "without a label column): a dataset for predict only. .npy/.npz "
                        "without labels are converted so without this flag")
    p.add_argument("--format", choices=["libsvm", "csv", "numpy", "parquet", "criteo"],
                   default=None, help="input format (default: from the name); criteo: label, "
                   "13 integer and 26 categorical columns, tab-separated, empty fields missing")
    p.add_argument("--categorical", type=_column_list, default=None, metavar="A,B,...",
                   help="CSV/TSV/Parquet columns (names or positions) hashed as column=value "
                        "tokens into 2**--hash-bits signed features (scikit-learn's "
                        "FeatureHasher scheme; default: none)")
    p.add_argument("--hash-bits", type=int, default=None, metavar="B",
                   help="hashed features: 2**B (default 18, like VW's -b)")
    p.add_argument("--feature-columns", type=_column_list, default=None, metavar="A,B,...",
                   help="Parquet: the feature columns (default: all but the label)")
    p.add_argument("--numeric-transform", choices=["log1p", "none"], default=None,
                   help="Criteo, CSV/TSV with --categorical: log1p stores the numeric columns "
                        "as sign(x) log(1+|x|) (counts with heavy tails), none as they are "
                        "(default: log1p for --format criteo, else none)")
    p.add_argument("--drop", type=_column_list, default=None, metavar="A,B,...",
                   help="CSV/TSV/Parquet columns that are not features (an id, a timestamp): "
                        "not read into the dataset (default: none)")
    add_fill_missing_arg(p, "CSV/TSV, Parquet: the value of a missing feature (an empty "
                            "field, NA, NaN, null...), or mean: each column's mean (kept with "
                            "the dataset, and by its models for raw rows; default: an error "
                            "naming it)")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                   help="floating point type of the stored features")
    p.add_argument("--overwrite", action="store_true", help="replace an existing DST")
    p.set_defaults(func=cmd_convert)
