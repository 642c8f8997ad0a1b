"""``dsvm train``: a classifier or a regressor on a dataset, on a cluster or in the foreground.

The task comes from ``--task`` or from the dataset's labels (non-integer, or more than
``MAX_CLASSES_FOR_AUTO`` distinct values: regression, with a message saying so).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from dsvm.cli.common import (
    add_cluster_args,
    add_tls_args,
    check_output,
    client_arg,
    close_client,
    say_if_compiling,
)
from dsvm.cli.estimator_flags import add_estimator_args, estimator_kwargs

# With more distinct labels than this, or any non-integer label, ``--task auto`` trains a
# regressor. (A dataset records its classes only up to 1000 distinct values; beyond, none.)
MAX_CLASSES_FOR_AUTO = 100

def resolve_task(task: str, dataset: Any) -> str:
    """The task to train: as asked, or inferred from the dataset's labels (with a message)."""
    import numpy as np

    from dsvm.training.outcome import MANY_NUMBER_CLASSES

    if task != "auto":
        return task
    if getattr(dataset, "label_names", None):  # text labels are class names, however many
        return "classification"
    classes = dataset.classes
    if classes is None:
        reason = "more than 1000 distinct values"
    else:
        values = np.asarray(classes, dtype=np.float64)
        if len(values) <= MAX_CLASSES_FOR_AUTO and np.all(values == np.round(values)):
            if len(values) > MANY_NUMBER_CLASSES:  # (a count of rentals, 0-62: 63 classes?)
                print(f"dsvm train: the labels of {dataset.url} are {len(values)} distinct "
                      f"whole numbers ({values.min():g} to {values.max():g}): training a "
                      f"classifier of {len(values)} classes (pass --task regression if they "
                      "are a count or an amount)", file=sys.stderr)
            return "classification"
        reason = (f"{len(values)} distinct values" if len(values) > MAX_CLASSES_FOR_AUTO
                  else "non-integer values")
    print(f"dsvm train: the labels of {dataset.url} have {reason}: training a regressor "
          "(pass --task classification to train a classifier instead)", file=sys.stderr)
    return "regression"


def grid_of(args: argparse.Namespace) -> Any:
    """The grid of alphas asked for: ``--alphas auto`` or a list, ``--alpha`` as a comma list
    (None: one alpha)."""
    from dsvm.cli.estimator_flags import alpha_grid

    if args.alphas is not None:
        if isinstance(args.alpha, str) and "," in args.alpha:  # (the list was dropped)
            raise ValueError(f"--alphas {args.alphas} and --alpha {args.alpha} both give the "
                             "grid's alphas: give one of them")
        return "auto" if args.alphas == "auto" else alpha_grid(args.alphas, "--alphas")
    if isinstance(args.alpha, str) and "," in args.alpha:  # a list (or an error naming it)
        return alpha_grid(args.alpha)
    if isinstance(args.alpha, str) and args.alpha.strip().lower() == "auto":
        raise ValueError(f"--alpha {args.alpha}: --alpha takes a number (or a list of them: a "
                         "grid); --alphas auto chooses a grid of alphas from the data")
    return None


# A grid axis (the CV estimator's list parameter) -> the parameter of one fit it replaces.
AXIS_OF = {"losses": "loss", "l1_ratios": "l1_ratio", "class_weights": "class_weight"}


def axes_of(args: argparse.Namespace, cls: type) -> dict[str, list[Any]]:
    """The grid axes typed as lists besides the alphas (``--loss hinge,logistic``,
    ``--l1-ratio 0,0.5``, ``--class-weight none,balanced``), as the CV estimator's
    ``losses``, ``l1_ratios``, ``class_weights`` (``cls``: the plain estimator of the task,
    whose constraints check each value); a bad value is a ValueError naming the flag."""
    axes: dict[str, list[Any]] = {}
    loss = getattr(args, "loss", None)
    if isinstance(loss, str) and "," in loss:
        known = cls._parameter_constraints["loss"]  # type: ignore[attr-defined]
        items = loss.split(",")
        bad = [item for item in items if not known.is_satisfied_by(item)]
        if bad:
            raise ValueError(f"--loss: expected {known.describe()} or a comma list of them, "
                             f"got {bad[0]!r} in {loss!r}")
        axes["losses"] = items
    ratio = getattr(args, "l1_ratio", None)
    if isinstance(ratio, str) and "," in ratio:
        axes["l1_ratios"] = l1_ratio_list(ratio)
        if getattr(args, "solver", None) == "pegasos":
            raise ValueError(f"--l1-ratio {ratio}: --solver pegasos has no L1 part; use "
                             "--solver sgd or auto (FOLOS prox steps)")
        if args.penalty != "elasticnet":
            raise ValueError(f"--l1-ratio {ratio}: a list of ratios is a grid of elastic nets; "
                             f"add --penalty elasticnet (got --penalty {args.penalty})")
    weights = getattr(args, "class_weight", None)
    if isinstance(weights, list):
        axes["class_weights"] = weights
    return axes


def l1_ratio_list(text: str) -> list[float]:
    """``--l1-ratio 0,0.5,1``: floats in [0, 1], or a ValueError naming the flag."""
    try:
        values = [float(item) for item in text.split(",")]
    except ValueError:
        values = []
    if not values or not all(0.0 <= v <= 1.0 for v in values):
        raise ValueError(f"--l1-ratio: expected a float in [0, 1] or a comma-separated list "
                         f"of them (a grid, e.g. 0,0.5,1), got {text!r}")
    return values


def folds_of(args: argparse.Namespace, grid: Any) -> int | None:
    """``--cv K``: the grid's number of folds (an int >= 2), None without the flag."""
    text = getattr(args, "cv", None)
    if text is None:
        return None
    try:
        folds = int(text)
    except ValueError:
        folds = 0
    if folds < 2 or str(text).strip() != str(folds):
        raise ValueError(f"--cv: expected the number of folds, an int >= 2; got {text!r}")
    if grid is None:
        raise ValueError(f"--cv {folds}: folds score a grid of alphas; pass --alpha a,b,c "
                         "or --alphas")
    return folds


def make_estimator(args: argparse.Namespace, task: str, client: Any) -> Any:
    """The task's estimator with the parameters the command's flags hold (its own defaults for
    those that differ by task and were not typed); with a grid of alphas its CV variant."""
    from dsvm import SVMClassifier, SVMClassifierCV, SVMRegressor, SVMRegressorCV
    from dsvm.cli.estimator_flags import alpha_grid

    plain = SVMRegressor if task == "regression" else SVMClassifier
    grid = grid_of(args)
    axes = axes_of(args, plain)
    if grid is None and axes:  # a grid of other axes at the one alpha
        grid = alpha_grid(str(args.alpha))
    folds = folds_of(args, grid)
    if grid is not None:
        if args.validation or args.detach:
            raise ValueError("a grid (--alpha a,b,c, --alphas or another flag's comma list) "
                             "scores its candidates on held-out rows; it does not take "
                             "--validation or --detach yet")
        cv = SVMRegressorCV if task == "regression" else SVMClassifierCV
        kwargs = estimator_kwargs(args, plain)
        kwargs.pop("alpha", None)
        for many in axes:  # (the axis replaces the one value)
            kwargs.pop(AXIS_OF[many], None)
        return cv(client=client, alphas=grid, n_alphas=args.n_alphas, cv=folds, **axes,
                  **kwargs)
    cls = SVMRegressor if task == "regression" else SVMClassifier
    return cls(client=client, **estimator_kwargs(args, cls))


def add_model_args(p: argparse.ArgumentParser) -> None:
    """The estimators' parameters as flags (:mod:`dsvm.cli.estimator_flags`)."""
    from dsvm import SVMClassifier, SVMRegressor

    add_estimator_args(p, [("classification", SVMClassifier), ("regression", SVMRegressor)])


def check_outputs(args: argparse.Namespace) -> None:
    """The model file and the checkpoint, checked before any work starts."""
    from dsvm.data.location import CHECKPOINT, MODEL, kind_at, overlaps

    inputs = (args.dataset, args.validation or "")
    check_output(args.out, flag="--out", kind=MODEL, overwrite=args.overwrite, inputs=inputs)
    if args.resume and not args.checkpoint:
        raise ValueError("--resume needs --checkpoint PATH (the checkpoint to continue from)")
    if args.checkpoint:
        if overlaps(args.checkpoint, args.out):
            raise ValueError(f"--checkpoint and --out are both {args.out}; give them two paths.")
        if not (args.overwrite or args.resume) and kind_at(args.checkpoint) == CHECKPOINT:
            # (an interrupted fit's: "already exists; pass --overwrite" hid the way on)
            raise FileExistsError(
                f"--checkpoint {args.checkpoint} holds an earlier fit: pass --resume to "
                "continue it, or --overwrite to start over")
        check_output(args.checkpoint, flag="--checkpoint", kind=CHECKPOINT, inputs=inputs,
                     overwrite=args.overwrite or args.resume)


def cmd_train(args: argparse.Namespace) -> int:
    from dsvm import open_dataset
    from dsvm.data.model_columns import width_for

    check_outputs(args)
    dataset = open_dataset(args.dataset)
    dataset.require_labels("train")
    validation = open_dataset(args.validation) if args.validation else None
    if validation is not None:
        validation.require_labels("validate")
    if validation is not None and width_for(validation, dataset.n_features) \
            != dataset.n_features:
        raise ValueError(f"--validation {args.validation} has {validation.n_features} features "
                         f"but the training data {args.dataset} has {dataset.n_features}.")
    task = resolve_task(args.task, dataset)
    if args.class_weight is not None and task == "regression":
        raise ValueError("--class-weight applies to classification; the labels of "
                         f"{dataset.url} make this a regression (pass --task classification?)")
    if args.detach and task == "regression":
        raise ValueError("--detach trains classifiers only for now; run the regression in the "
                         "foreground (it resumes from --checkpoint if interrupted)")
    client = client_arg(args)
    est = make_estimator(args, task, client)
    try:
        if args.detach:
            from dsvm.cli.jobs import submit_detached

            return submit_detached(args, est, dataset, validation)
        if not args.scheduler:
            say_if_compiling("train", est)
        fit_in_flag_terms(est, dataset, validation, args.resume)
    finally:
        close_client(client)
    outcome = getattr(est, "outcome_", None)
    if outcome is not None and outcome.failed:
        return report_failed_fit(args, est, outcome)
    est.save(args.out)
    print(saved_line(args, est, task))
    return 0


def fit_in_flag_terms(est: Any, dataset: Any, validation: Any, resume: bool) -> None:
    """Fit; the fit's warnings follow it, their advice in the command's flags (a failed fit's
    is left out: the command reports it, exit 2)."""
    from dsvm.exceptions import FitFailedWarning

    with warnings.catch_warnings(record=True) as caught:
        if hasattr(est, "alphas"):  # a grid of alphas (its own held-out rows)
            est.fit(dataset, resume=resume)
            print(grid_lines(est), file=sys.stderr)
        else:
            est.fit(dataset, validation=validation, resume=resume)
    outcome = getattr(est, "outcome_", None)
    for warning in caught:
        if not issubclass(warning.category, FitFailedWarning):
            print(f"dsvm train: warning: {in_flag_terms(str(warning.message), outcome)}",
                  file=sys.stderr)


# The estimators' parameters in their warnings, as the command's flags.
PARAMETER_FLAGS = (("max_epochs=", "--epochs "), ("class_weight='balanced'",
                   "--class-weight balanced"), ("tol=None", "--tol none"), ("tol=", "--tol "),
                   ("more local_iters", "a larger --local-iters"),
                   ("n_streams=1", "--streams 1"), ("solver='sgd'", "--solver sgd"))


def in_flag_terms(message: str, outcome: Any) -> str:
    """A fit's warning with its advice for Python users (scikit-learn scalers, parameters)
    replaced by what a command-line user can do."""
    if outcome is not None:
        from dsvm.training.outcome import api_advice

        for estimator in ("SVMClassifier", "SVMRegressor"):
            message = message.replace(api_advice(outcome, estimator), cli_advice(outcome))
    for parameter, flag in PARAMETER_FLAGS:
        message = message.replace(parameter, flag)
    return message


def grid_lines(est: Any) -> str:
    """The table of a grid's candidates, as the log shows it."""
    from dsvm.training.progress import format_grid

    where = "held-out rows" if est.cv is None else f"{est.cv} folds of rows (their mean)"
    n_alphas = len(est.alphas_)
    sizes = [f"{n_alphas} alpha{'s' if n_alphas != 1 else ''}"] + [
        f"{len(values)} {many}" for many in ("l1_ratios", "losses", "class_weights")
        if (values := getattr(est, many, None)) is not None]
    what = sizes[0] if len(sizes) == 1 else \
        f"{len(est.cv_results_['params'])} candidates ({' x '.join(sizes)})"
    return (f"dsvm train: {what} in one read of the data, scored on "
            f"{where}:\n{format_grid(est.grid_table_)}")


def saved_line(args: argparse.Namespace, est: Any, task: str) -> str:
    """What the saved model is: its epochs, its objective on the training data (measured
    after the last epoch, what `dsvm eval` prints), and its last validation score."""
    last = est.history_[-1]
    what = "validation R^2" if task == "regression" else "validation accuracy"
    outcome = getattr(est, "outcome_", None)
    measured = "" if outcome is None or outcome.objective is None else \
        f", objective {outcome.objective:.6f} on the training data"
    return (f"saved {args.out}: {'regressor, ' if task == 'regression' else ''}{est.n_iter_} "
            f"epochs{measured}"
            + (f", {what} {last['val_accuracy']:.4f}"
               if last.get("val_accuracy") is not None else ""))


def cli_advice(outcome: Any) -> str:
    """What a command-line user can do about a failed fit."""
    if getattr(outcome, "numeric_classes", 0):
        return (f"its {outcome.numeric_classes} classes are numbers: if they are a count or an "
                "amount, not classes, --task regression regresses them; else "
                + _scaling_advice(outcome))
    return _scaling_advice(outcome)


def _scaling_advice(outcome: Any) -> str:
    if outcome.cause == "targets":
        return (f"the labels are in large units ({outcome.spread_text()}): --scale true "
                "scales them in the fit")
    if outcome.scaled:
        return ("the problem is hard at this alpha (the columns were scaled): a larger "
                "--alpha, more --epochs, or --solver auto; or the features do not predict the "
                "labels")
    return ("the features are probably not on a common scale: --scale true scales them in the "
            "fit (the default, auto, only scales columns above 16 in magnitude), or try a "
            "larger --alpha; or, with scaled features, its steps have not settled yet: more "
            "--epochs or --solver auto")


def report_failed_fit(args: argparse.Namespace, est: Any, outcome: Any) -> int:
    """Exit 2 with one line saying why and what to do; the model is saved only with
    --keep-failed."""
    kept = ""
    if args.keep_failed:
        est.save(args.out)
        kept = f"; saved anyway to {args.out} (--keep-failed)"
    else:
        kept = f"; nothing saved (--keep-failed saves the model to {args.out} anyway)"
    print(f"dsvm train: error: the fit failed: {outcome.problem()}. Likely cause: "
          f"{cli_advice(outcome)}{kept}", file=sys.stderr)
    return 2


def _add_task_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", default="auto", choices=["auto", "classification", "regression"],
                   help="auto: regression when the labels are not class-like (non-integer, or "
                        f"more than {MAX_CLASSES_FOR_AUTO} distinct values), else classification")
    p.add_argument("--validation", metavar="DATASET",
                   help="a labeled dataset scored after every epoch (default: none)")
    p.add_argument("--alphas", metavar="auto|LIST",
                   help="train a grid of alphas in one read of the data and save the best on "
                        "held-out rows: 'auto' (--n-alphas values around 1/n_samples) or a "
                        "comma list (as --alpha a,b,c); by default one alpha is trained (--alpha)")
    p.add_argument("--n-alphas", type=int, default=8, metavar="K",
                   help="candidates of --alphas auto (default %(default)s)")
    p.add_argument("--cv", metavar="K",
                   help="score the grid of alphas on K folds of rows (every row in one; the "
                        "candidates also train on all rows, and the best of those is saved) "
                        "instead of 10%% of every chunk's rows held out; (K+1) x the "
                        "candidates' arithmetic and memory, one read per epoch (default: "
                        "no folds, the held-out 10%%)")


def add_train_command(sub: Any) -> None:
    p = sub.add_parser("train", help="train a model on a dataset")
    p.add_argument("dataset", help="the labeled zarr dataset to train on (dsvm convert)")
    p.add_argument("--out", required=True, metavar="MODEL",
                   help="the model file to write (checked before training starts)")
    _add_task_args(p)
    p.add_argument("--resume", action="store_true",
                   help="continue from --checkpoint if it exists (else start from scratch)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing --out model (and start --checkpoint over)")
    p.add_argument("--keep-failed", action="store_true",
                   help="save the model of a failed fit anyway (the command still exits 2)")
    p.add_argument("--detach", action="store_true",
                   help="run the fit as a job on the cluster (needs --scheduler); print its id")
    add_cluster_args(p)
    add_tls_args(p)
    p.defer(add_model_args)  # (a CommandParser) when the command runs or prints its help
    p.set_defaults(func=cmd_train)
