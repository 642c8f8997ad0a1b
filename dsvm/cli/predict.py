"""``dsvm eval`` and ``dsvm predict``: a saved model on a dataset."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from dsvm.cli.common import (
    add_fill_missing_arg,
    add_tls_args,
    add_zero_based_arg,
    check_output,
    client_arg,
    close_client,
    zero_based,
)
from dsvm.exceptions import DataFormatError

# without one, a dataset is scored in this process (dsvm.training.engines.prediction_engine)
SCHEDULER_HELP = ("Dask scheduler address (tcp://host:8786) or scheduler file to score on "
                  "(default: in this process, chunk by chunk)")


def _print_regression(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, indent=2))
        return
    print(f"r2:        {result['r2']:.6f}  ({result['n_samples']} rows)")
    print(f"mse:       {result['mse']:.6g}")
    print(f"objective: {result['objective']:.6f}  ({result['loss_name']}, "
          f"alpha={result['alpha']:g})")


def cmd_eval(args: argparse.Namespace) -> int:
    import dsvm

    clf = dsvm.load(args.model)
    raw = _check_rows(clf, args)
    if not raw:
        dsvm.open_dataset(args.dataset).require_labels("evaluate a model")
    clf.client = client_arg(args)
    # raw rows are converted into the scratch folder the workers share, as CoCoA+'s duals are
    scratch = os.environ.get("DSVM_SCRATCH") or None
    try:
        with _rows(clf, args, raw, scratch=scratch, prefix=".dsvm-eval-") as dataset:
            if raw and not dataset.labeled:  # (named by the user's rows, not the scratch copy)
                raise DataFormatError(f"{args.dataset}: no label column found beside the "
                                      "model's features (the one other column, or one named "
                                      "label, target or class), so it cannot evaluate a "
                                      "model: name it with --label-column, or use predict")
            result = _evaluate(clf, dataset, args.dataset if raw else None,
                               guessed=args.label_column is None)
    finally:
        close_client(clf.client)
    result = {"model": args.model, "dataset": args.dataset, **result,
              "loss_name": clf.loss, "alpha": clf.alpha}
    if "r2" in result:  # a regressor
        _print_regression(result, args.json)
        return 0
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"accuracy:  {result['accuracy']:.6f}  ({result['n_samples']} rows; always "
              f"predicting the most frequent class: {result['majority_rate']:.6f})")
        print(f"balanced accuracy: {result['balanced_accuracy']:.6f}"
              + ("" if "f1" in result else f"  macro f1: {result['macro_f1']:.6f}"))
        _print_classes(result["per_class"])
        print(f"objective: {result['objective']:.6f}  ({clf.loss}, alpha={clf.alpha:g})")
    return 0


MAX_CLASSES_SHOWN = 20


def _print_classes(per_class: dict[str, dict[str, Any]]) -> None:
    """A line per class (its precision, recall and F1: on rare positives, what accuracy
    hides), up to :data:`MAX_CLASSES_SHOWN` (``--json`` has them all)."""
    width = max(len(name) for name in per_class)
    for name, r in list(per_class.items())[:MAX_CLASSES_SHOWN]:
        print(f"class {name:<{width}}  precision {r['precision']:.4f}  recall "
              f"{r['recall']:.4f}  f1 {r['f1']:.4f}  ({r['support']:,} "
              f"row{'' if r['support'] == 1 else 's'})")
    if len(per_class) > MAX_CLASSES_SHOWN:
        print(f"({len(per_class) - MAX_CLASSES_SHOWN} more classes: --json)")


def _evaluate(clf: Any, dataset: Any, raw: str | None, *, guessed: bool) -> dict[str, Any]:
    """``clf.evaluate(dataset)``; for raw rows (named ``raw``), an error names them and the
    column read as labels, not the scratch dataset they were converted into, and says how to
    name another when that column was a guess (``guessed``: not given, nor named like one)."""
    from dsvm.data.label_column import named_label

    try:
        return clf.evaluate(dataset)
    except (ValueError, DataFormatError) as exc:
        if raw is None or dataset.url not in str(exc):
            raise
        label = (dataset.attrs.get("provenance") or {}).get("label_column")
        where = raw if label is None else f"{raw} (labels from its column {label!r})"
        hint = (" Name the label with --label-column (rows without one: predict)."
                if guessed and named_label([str(label)]) is None else "")
        raise type(exc)(str(exc).replace(dataset.url, where) + hint) from None


OUTPUT_KINDS = (".zarr", ".npy", ".csv", ".txt", ".parquet")


def _output_kind(out: str) -> str:
    kind = os.path.splitext(out.rstrip("/"))[1].lower()
    if kind not in OUTPUT_KINDS:
        raise ValueError(f"--out {out}: unknown output type {kind or '(none)'!r}; use one of "
                         f"{', '.join(OUTPUT_KINDS)}.")
    return kind


def _stored_kind(kind: str) -> str:
    """What --out of this type is (dsvm.data.location's kinds): --overwrite replaces only
    predictions written the same way, never a dataset or a file of the user's."""
    from dsvm.data import location

    return {".zarr": location.PREDICTIONS, ".npy": location.NPY,
            ".parquet": location.PREDICTIONS_PARQUET}.get(kind, location.PREDICTIONS_TEXT)


def write_values(out: str, kind: str, values: Any, what: str, classes: Any = None) -> None:
    """Predictions gathered here, as .npy, text (.csv/.txt) or Parquet (``classes``: the
    model's, which name the columns of decision values, one per class)."""

    values = np.asarray(values)
    names = prediction_columns(what, values, classes)
    if kind == ".npy":
        np.save(out, values)
    elif kind == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = values.reshape(len(values), -1).T
        pq.write_table(pa.table(dict(zip(names, columns, strict=True))), out)
    else:  # .csv with a header (pandas.read_csv took the first value for one), .txt without
        np.savetxt(out, values, fmt="%.9g" if values.dtype.kind in "fiub" else "%s",
                   delimiter=",", header=",".join(names) if kind == ".csv" else "",
                   comments="")


def prediction_columns(what: str, values: Any, classes: Any = None) -> list[str]:
    """The column names of written predictions: label, prediction (a regressor's) or decision
    (one per class for several: decision_<class>, e.g. decision_cat or decision_3)."""
    from dsvm.data.location import PREDICTION_COLUMNS

    name = PREDICTION_COLUMNS[what]
    if values.ndim == 1:
        return [name]
    keys = (list(classes) if classes is not None and len(classes) == values.shape[1]
            else list(range(values.shape[1])))
    return [f"{name}_{_short(k)}" for k in keys]


def _short(value: Any) -> str:
    """A class as a column name's suffix: 3.0 as 3, text as it is."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).replace(",", "_")  # (a comma would split the .csv header)


def cmd_predict(args: argparse.Namespace) -> int:
    import dsvm

    kind = _output_kind(args.out)
    check_output(args.out, flag="--out", kind=_stored_kind(kind), overwrite=args.overwrite,
                 inputs=(args.dataset, args.model))
    clf = dsvm.load(args.model)
    raw = _check_rows(clf, args)
    clf.client = client_arg(args)
    try:
        # raw rows: converted into a scratch dataset beside --out
        with _rows(clf, args, raw, scratch=os.path.dirname(os.path.abspath(args.out)),
                   prefix=".dsvm-predict-") as dataset:
            return _predict(clf, dataset, args, kind)
    finally:
        close_client(clf.client)


def _is_raw(args: argparse.Namespace) -> bool:
    """Rows to convert first: a file or a folder of Parquet files (a dsvm dataset is a folder
    of zarr arrays), or any input given a --format."""
    from dsvm.data.location import FOLDER, is_glob, kind_at
    from dsvm.data.parquet_source import is_parquet_path

    return (bool(args.format) or os.path.isfile(args.dataset) or is_parquet_path(args.dataset)
            or is_glob(args.dataset)
            or kind_at(args.dataset) == FOLDER)  # a folder of files (not a zarr store)


def _check_rows(clf: Any, args: argparse.Namespace) -> str | None:
    """How DATASET is read (eval and predict take the same inputs): None, a dsvm dataset;
    "hashed", raw rows converted with the model's hashing; "svmlight", a raw svmlight/libsvm
    file converted with the model's number of features (nothing else to know). Refuses other
    raw rows, and raw-row flags given with a dataset."""
    if not _is_raw(args):
        if (args.format or args.fill_missing is not None or zero_based(args) != "auto"
                or args.label_column is not None):
            raise ValueError(f"--format, --fill-missing, --label-column and --zero-based are "
                             f"for raw rows; {args.dataset} is a dsvm dataset already")
        import dsvm
        from dsvm.data.model_columns import width_for

        # (its metadata only; an svmlight test file's rows may stop short of the model's)
        width = width_for(dsvm.open_dataset(args.dataset), clf.n_features_in_)
        if width != clf.n_features_in_:  # named by the files typed, not "X" (#25's rule)
            raise ValueError(f"{args.dataset} has {width:,} features, but the model "
                             f"{args.model} was trained on {clf.n_features_in_:,}: convert "
                             "the rows as its training data was converted")
        return None
    if getattr(clf, "hashing_", None):
        return "hashed"
    if getattr(clf, "feature_names_in_", None) is not None and args.format != "criteo":
        return "columns"  # (a model fitted on a DataFrame of numbers: its columns by name)
    from dsvm.data.text import source_kind

    if not args.format and args.fill_missing is None and source_kind(args.dataset) == "libsvm":
        if args.label_column is not None:
            raise ValueError(f"--label-column is for CSV/TSV and Parquet rows; {args.dataset} "
                             "is svmlight/libsvm text (its label comes first on every line)")
        return "svmlight"
    if zero_based(args) != "auto":
        raise ValueError(f"--zero-based is for svmlight/libsvm text; {args.dataset} is not")
    raise ValueError(f"{args.dataset} is not a dsvm dataset; convert it first (dsvm convert"
                     f" ... with the flags the model's training data was converted with)")


@contextlib.contextmanager
def _rows(clf: Any, args: argparse.Namespace, raw: str | None, *, scratch: str | None,
          prefix: str) -> Iterator[Any]:
    """DATASET as the model reads it (see :func:`_check_rows`): the dataset itself, or the raw
    rows converted into a scratch dataset under ``scratch``, removed afterwards."""
    if raw is None:
        yield args.dataset
        return
    from dsvm.data.convert import convert
    from dsvm.data.rehash import convert_columns, convert_like
    from dsvm.exceptions import DataOrderWarning

    with tempfile.TemporaryDirectory(prefix=prefix, dir=scratch) as tmp, \
            warnings.catch_warnings():
        # (rows to score, not to train on: the order of their labels does not matter)
        warnings.simplefilter("ignore", DataOrderWarning)
        dst = os.path.join(tmp, "rows.zarr")
        if raw == "svmlight":
            yield convert(args.dataset, dst, n_features=clf.n_features_in_,
                          zero_based=zero_based(args))
        elif raw == "columns":
            yield convert_columns(args.dataset, dst, [str(c) for c in clf.feature_names_in_],
                                  format=args.format, fill_missing=_fill(clf, args),
                                  label_column=args.label_column,
                                  trained_label=getattr(clf, "label_column_", None))
        else:
            yield convert_like(args.dataset, dst, clf.hashing_, format=args.format,
                               fill_missing=_fill(clf, args), label_column=args.label_column,
                               trained_label=getattr(clf, "label_column_", None))


def _fill(clf: Any, args: argparse.Namespace) -> Any:
    """Raw rows' missing values: as --fill-missing says, else with the means the model's
    training data was filled with (``fill_values_``), else an error naming them."""
    if args.fill_missing is not None:
        return args.fill_missing
    return getattr(clf, "fill_values_", None)


def _predict(clf: Any, dataset: Any, args: argparse.Namespace, kind: str) -> int:
    import dsvm

    what = ("decision values" if args.decision else
            "labels" if hasattr(clf, "classes_") else "predicted values")  # (a regressor's)
    if kind == ".zarr":
        if not isinstance(dataset, dsvm.Dataset):
            dataset = dsvm.open_dataset(dataset)  # opened once: metadata only
        url = clf.write_predictions(dataset, args.out, decision=args.decision,
                                    overwrite=args.overwrite)
        print(f"wrote {dataset.n_samples} {what} to {url} (zarr, written by the workers)")
        return 0
    # (a regressor's decision values are its predictions, as write_predictions writes them)
    decide = args.decision and hasattr(clf, "decision_function")
    values = clf.decision_function(dataset) if decide else clf.predict(dataset)
    write_values(args.out, kind, values, what, getattr(clf, "classes_", None))
    print(f"wrote {len(values)} {what} to {args.out}")
    return 0


def _add_raw_row_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default=None, choices=["csv", "criteo", "parquet"],
                   help="DATASET is raw rows in this layout (a file is raw rows anyway): "
                        "converted with the model's hashing of categorical columns first "
                        "(default: the training data's layout)")
    add_fill_missing_arg(p, "raw rows: the value of a missing numeric field, as at training "
                            "(default: the training data's column means for a model whose "
                            "data was converted with --fill-missing mean; else as convert's)")
    p.add_argument("--label-column", default=None, metavar="COLUMN",
                   help="raw CSV/TSV/Parquet rows: the label among the columns that are not "
                        "the model's (default: the one such column, else the one named "
                        "label, target or class, else y); other columns are not read")
    add_zero_based_arg(p)


def add_predict_commands(sub: Any) -> None:
    p = sub.add_parser("eval", help="accuracy (R^2 for regressors) and primal objective of a "
                                    "model on a dataset")
    p.add_argument("model", help="a model file written by dsvm train")
    p.add_argument("dataset", help="a labeled dsvm dataset, or raw rows as predict takes them")
    p.add_argument("--json", action="store_true", help="print one JSON document instead")
    _add_raw_row_args(p)
    p.add_argument("--scheduler", metavar="ADDRESS", help=SCHEDULER_HELP)
    add_tls_args(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("predict", help="write predicted labels (or decision values)")
    p.add_argument("model", help="a model file written by dsvm train")
    p.add_argument("dataset", help="a dsvm dataset, or raw rows of the model's training data "
                                   "(see --format)")
    p.add_argument("--out", required=True, metavar="FILE",
                   help=".zarr (written by the workers, chunk by chunk: any size), or .npy, "
                        ".parquet or text (.csv/.txt), gathered here")
    p.add_argument("--decision", action="store_true", help="write decision values, not labels")
    _add_raw_row_args(p)
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    p.add_argument("--scheduler", metavar="ADDRESS", help=SCHEDULER_HELP)
    add_tls_args(p)
    p.set_defaults(func=cmd_predict)
