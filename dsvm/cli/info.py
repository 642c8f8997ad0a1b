"""``dsvm info``: what a dataset or a saved model holds, as lines or as one JSON document."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any


def cmd_info(args: argparse.Namespace) -> int:
    if "://" not in args.dataset and not os.path.exists(args.dataset):
        raise FileNotFoundError(f"{args.dataset} does not exist (dsvm info reads a dataset, a "
                                "model file or a checkpoint)")
    if not is_file(args.dataset):
        info = dataset_info(args.dataset, args.json)
    elif _is_checkpoint(args.dataset):
        info = checkpoint_info(args.dataset)
    else:
        info = model_info(args.dataset)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        for key, value in info.items():
            print(f"{key:>16}: {_text(key, value)}")
    return 0


def is_file(path: str) -> bool:
    """A model is one file; a dataset is a folder (a zarr group), local or at a URL."""
    if "://" in path and not path.startswith("file://"):
        import fsspec

        fs, fpath = fsspec.core.url_to_fs(path)
        return bool(fs.isfile(fpath))
    return os.path.isfile(path.removeprefix("file://"))


def dataset_info(path: str, as_json: bool) -> dict[str, Any]:
    from dsvm import open_dataset
    from dsvm.data.window import dataset_window

    dataset = open_dataset(path)
    info = dataset.info()
    window = dataset_window(dataset)
    # what a fit with default settings interleaves (dsvm train --shuffle-window)
    info["shuffle_window"] = window.as_dict() if as_json else window.describe()
    return info


def _is_checkpoint(path: str) -> bool:
    from dsvm.data.location import CHECKPOINT, kind_at

    return kind_at(path) == CHECKPOINT


def checkpoint_info(path: str) -> dict[str, Any]:
    """What a checkpoint holds (``dsvm info`` said "not a dsvm model: it lacks ['coef',
    'intercept']"): the fit it continues, how far it went, and how to go on."""
    from dsvm.training.checkpoints import load_checkpoint

    ckpt = load_checkpoint(path)
    last = ckpt.history[-1] if ckpt.history else None
    return {
        "url": path,
        "kind": f"dsvm checkpoint of a {ckpt.estimator} fit",
        "epochs_done": ckpt.epoch,
        "converged": ckpt.converged,
        "source": ckpt.source,
        "n_samples": ckpt.n_samples,
        "n_features": ckpt.n_features,
        "classes": ckpt.classes.tolist() if ckpt.classes.size else None,
        "parameters": ckpt.params,
        "last_epoch": last,
        "continue": "the same dsvm train command with --resume (or fit(..., resume=True) "
                    "with checkpoint= this path)",
    }


def model_info(path: str) -> dict[str, Any]:
    """A model file's contents: what it is, its classes and features, how it was trained (the
    solver, every parameter, the epochs and the last epoch's history record) and the hashing
    of raw rows it applies. Read from the file alone: nothing is fitted or imported beyond io."""
    from dsvm.io import load_model_record

    record = load_model_record(path)
    regressor = record.estimator == "SVMRegressor"
    classes = record.classes.tolist()
    coef = record.coef
    return {
        "url": path,
        "kind": f"dsvm model: {record.estimator}, {_task(regressor, len(classes))}",
        "classes": None if regressor else classes,
        "n_features": record.n_features_in,
        # a DataFrame's columns (what dsvm predict reads by name from Parquet or CSV)
        **({"feature_names": record.extra_meta["feature_names"]}
           if record.extra_meta.get("feature_names") else {}),
        "solver": _solver(record),
        "scaling": _scaling(record),
        "parameters": {k: v for k, v in sorted(record.params.items()) if k != "solver"},
        "epochs_trained": record.n_iter,
        "last_epoch": record.history[-1] if record.history else None,
        "feature_map": record.map_meta,
        "hashing": record.extra_meta.get("hashing"),
        # the column means raw rows' missing values take (convert --fill-missing mean)
        **({"fill_values": record.extra_meta["fill_values"]}
           if record.extra_meta.get("fill_values") else {}),
        # the training data's label column, which dsvm eval takes from raw rows that have it
        **({"label_column": record.extra_meta["label_column"]}
           if record.extra_meta.get("label_column") else {}),
        "coef": {"shape": list(coef.shape), "dtype": str(coef.dtype),
                 "nonzero": int((coef != 0).sum())},
        "intercept": record.intercept.tolist(),
        # a grid of alphas trained in one pass (dsvm train --alpha a,b,c): its candidates
        **({"alpha_grid": record.extra_meta["grid"]} if record.extra_meta.get("grid") else {}),
    }


# column names listed in the text listing (--json lists them all)
MAX_NAMES_SHOWN = 20


def _scaling(record: Any) -> Any:
    """The fit's scaling (folded into a linear model), or the one a kernel map keeps as its
    input stage (dsvm.features.input_stage)."""
    folded = (record.extra_meta.get("fit") or {}).get("scaling")
    kept = (record.map_meta or {}).get("input_scaling")
    if folded is None and kept is not None:
        return {"description": f"{kept}: the columns are scaled by the kernel map's first "
                               "stage, kept in the model and applied to every row it maps"}
    return folded


def _solver(record: Any) -> str:
    """The solver that ran, and who chose it."""
    asked = record.params.get("solver")
    ran = (record.extra_meta.get("fit") or {}).get("solver") or asked
    return f"{ran} (chosen by solver='auto')" if asked == "auto" and ran != "auto" else str(ran)


def _task(regressor: bool, n_classes: int) -> str:
    if regressor:
        return "regression"
    return "binary classification" if n_classes <= 2 else \
        f"one-vs-rest classification over {n_classes} classes"


def _text(key: str, value: Any) -> str:
    """One line for ``key``'s value in the text listing."""
    if key == "parameters":
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if key == "last_epoch" and value is not None:
        from dsvm.training.progress import format_epoch

        return format_epoch(value)
    if key == "hashing" and value:
        return (f"{value.get('format') or 'csv'} rows: {len(value['numeric'])} numeric columns, "
                f"{len(value['categorical'])} hashed into 2**{value['hash_bits']} features")
    if key == "scaling":
        return "none: the rows were trained as given" if value is None else value["description"]
    if key == "fill_values":
        value = [f"{k}={v:.6g}" for k, v in value.items()]
    if key in ("feature_names", "fill_values"):
        shown = ", ".join(value[:MAX_NAMES_SHOWN])
        more = len(value) - MAX_NAMES_SHOWN
        return shown + (f", ... ({more} more; --json lists all)" if more > 0 else "")
    if key == "alpha_grid":
        from dsvm.training.progress import format_grid

        return "\n" + format_grid(value)
    if key == "coef" and isinstance(value, dict):
        return f"{tuple(value['shape'])} {value['dtype']}, {value['nonzero']} non-zero"
    return "none" if value is None else str(value)


def add_info_command(sub: Any) -> None:
    p = sub.add_parser("info", help="describe a dataset or a saved model")
    p.add_argument("dataset", metavar="DATASET_OR_MODEL",
                   help="a zarr dataset (folder or URL) or a model file written by dsvm train")
    p.add_argument("--json", action="store_true", help="print one JSON document instead")
    p.set_defaults(func=cmd_info)
