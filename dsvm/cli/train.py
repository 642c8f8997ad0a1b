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

# With more distinct labels than this, or any non-integer label, ``--task auto`` trains a
# regressor. (A dataset records its classes only up to 1000 distinct values; beyond, none.)
MAX_CLASSES_FOR_AUTO = 100

# --tol's default is the estimators' (the same stopping rule from the shell and from Python).
DEFAULT_TOL = 1e-3


def resolve_task(task: str, dataset: Any) -> str:
    """The task to train: as asked, or inferred from the dataset's labels (with a message)."""
    import numpy as np

    if task != "auto":
        return task
    classes = dataset.classes
    if classes is None:
        reason = "more than 1000 distinct values"
    else:
        values = np.asarray(classes, dtype=np.float64)
        if len(values) <= MAX_CLASSES_FOR_AUTO and np.all(values == np.round(values)):
            return "classification"
        reason = (f"{len(values)} distinct values" if len(values) > MAX_CLASSES_FOR_AUTO
                  else "non-integer values")
    print(f"dsvm train: the labels of {dataset.url} have {reason}: training a regressor "
          "(pass --task classification to train a classifier instead)", file=sys.stderr)
    return "regression"


def _common_params(args: argparse.Namespace) -> dict[str, Any]:
    return dict(alpha=args.alpha, penalty=args.penalty, l1_ratio=args.l1_ratio,
                fit_intercept=not args.no_intercept, max_epochs=args.epochs, tol=args.tol,
                n_iter_no_change=args.n_iter_no_change, early_stopping=args.early_stopping,
                validation_fraction=args.validation_fraction,
                batch_size=args.batch_size, average=not args.no_average, rho=args.rho,
                n_streams=args.streams, shuffle_window=args.shuffle_window,
                n_workers=args.workers, random_state=args.seed,
                verbose=0 if args.quiet else 2, checkpoint=args.checkpoint,
                kernel=args.kernel, n_components=args.components, gamma=args.gamma)


def make_estimator(args: argparse.Namespace, task: str, client: Any) -> Any:
    from dsvm import SVMClassifier, SVMRegressor

    if task == "regression":
        return SVMRegressor(solver=args.solver or "sgd", loss=args.loss or "epsilon_insensitive",
                            epsilon=args.epsilon, client=client, **_common_params(args))
    return SVMClassifier(solver=args.solver or "pegasos", loss=args.loss or "hinge",
                         mu=args.mu, mu0=args.mu0, budget=args.budget, merge=args.merge,
                         local_iters=args.local_iters,
                         class_weight=args.class_weight, client=client, **_common_params(args))


def check_outputs(args: argparse.Namespace) -> None:
    """The model file and the checkpoint, checked before any work starts."""
    from dsvm.data.location import CHECKPOINT, MODEL, overlaps

    inputs = (args.dataset, args.validation or "")
    check_output(args.out, flag="--out", kind=MODEL, overwrite=args.overwrite, inputs=inputs)
    if args.resume and not args.checkpoint:
        raise ValueError("--resume needs --checkpoint PATH (the checkpoint to continue from)")
    if args.checkpoint:
        if overlaps(args.checkpoint, args.out):
            raise ValueError(f"--checkpoint and --out are both {args.out}; give them two paths.")
        check_output(args.checkpoint, flag="--checkpoint", kind=CHECKPOINT, inputs=inputs,
                     overwrite=args.overwrite or args.resume)


def cmd_train(args: argparse.Namespace) -> int:
    from dsvm import open_dataset

    check_outputs(args)
    dataset = open_dataset(args.dataset)
    dataset.require_labels("train")
    validation = open_dataset(args.validation) if args.validation else None
    if validation is not None:
        validation.require_labels("validate")
    if validation is not None and validation.n_features != dataset.n_features:
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
        est.fit(dataset, validation=validation, resume=resume)
    outcome = getattr(est, "outcome_", None)
    for warning in caught:
        if not issubclass(warning.category, FitFailedWarning):
            print(f"dsvm train: warning: {in_flag_terms(str(warning.message), outcome)}",
                  file=sys.stderr)


# The estimators' parameters in their warnings, as the command's flags.
PARAMETER_FLAGS = (("max_epochs=", "--epochs "), ("class_weight='balanced'",
                   "--class-weight balanced"), ("tol=None", "--tol none"), ("tol=", "--tol "),
                   ("more local_iters", "a larger --local-iters"))


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
    """What a command-line user can do about a failed fit (dsvm does not scale data yet)."""
    if outcome.cause == "targets":
        return (f"the labels are in large units ({outcome.spread_text()}): divide them by "
                "about that before `dsvm convert`")
    return ("the features are probably not on a common scale: rescale each column to about "
            "[-1, 1] before `dsvm convert`, or try a larger --alpha; or, with scaled features, "
            "its steps have not settled yet: more --epochs or --solver sgd")


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
    p.add_argument("--solver", default=None, choices=["pegasos", "sgd", "asset", "asset*", "nesvm",
                                                       "bsgd", "cocoa"],
                   help="default: pegasos (classification), sgd (regression)")
    p.add_argument("--loss", default=None,
                   choices=["hinge", "squared_hinge", "logistic", "smoothed_hinge", "squared",
                            "epsilon_insensitive"],
                   help="default: hinge (classification), epsilon_insensitive (regression)")
    p.add_argument("--epsilon", type=float, default=0.0,
                   help="regression: half-width of the epsilon-insensitive tube")
    p.add_argument("--penalty", default="l2", choices=["l2", "l1", "elasticnet"],
                   help="l1/elasticnet: FOLOS prox steps (solver sgd); l1: LP-SVM (solver nesvm)")
    p.add_argument("--l1-ratio", type=float, default=0.15,
                   help="--penalty elasticnet: the share of L1 in the penalty")
    p.add_argument("--mu", type=float, default=0.03,
                   help="smoothing of the smoothed hinge (loss smoothed_hinge, solver nesvm)")
    p.add_argument("--rho", type=float, default=0.5,
                   help="ASSET: average the iterates from step rho*N on")
    p.add_argument("--alpha", type=float, default=1e-4, help="regularisation lambda = 1/(n C)")
    p.add_argument("--mu0", type=float, default=None,
                   help="nesvm: homotopy from mu0 down to mu (default: no homotopy)")


def _class_weight(text: str) -> str | dict[float, float]:
    """``balanced`` or ``LABEL:WEIGHT,LABEL:WEIGHT`` (numeric labels, as datasets store them)."""
    if text == "balanced":
        return text
    try:
        pairs = [item.split(":") for item in text.split(",") if item]
        return {float(label): float(weight) for label, weight in pairs}
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'balanced' or LABEL:WEIGHT pairs such as '1:5,-1:1', got {text!r}") from None


def _tol(text: str) -> float | None:
    """A relative tolerance, or 'none' (tol=None: no stopping rule)."""
    if text.lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'none', got {text!r}") from None


def _add_schedule_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epochs", type=int, default=10,
                   help="passes over the data at most (NESVM: gradient passes)")
    p.add_argument("--tol", type=_tol, default=DEFAULT_TOL,
                   help="stop when the objective improved by less than this (relative) for "
                        f"--n-iter-no-change epochs (default {DEFAULT_TOL:g}, as in Python; "
                        "'none': run all --epochs)")
    p.add_argument("--n-iter-no-change", type=int, default=3, metavar="N",
                   help="epochs without improvement before --tol or --early-stopping stops")
    p.add_argument("--early-stopping", action="store_true",
                   help="hold out --validation-fraction of the chunks and stop when their "
                        "objective stops improving (by more than --tol, default 0)")
    p.add_argument("--validation-fraction", type=float, default=0.1, metavar="F",
                   help="share of the chunks held out by --early-stopping (default 0.1)")
    p.add_argument("--class-weight", type=_class_weight, default=None, metavar="WEIGHTS",
                   help="'balanced' or LABEL:WEIGHT pairs, e.g. '1:5,-1:1' (classification; "
                        "default: every class weighs 1)")
    p.add_argument("--batch-size", type=int, default=1,
                   help="rows per stochastic step (Pegasos' mini-batch k)")
    p.add_argument("--streams", type=int, default=None, metavar="K",
                   help="parallel streams per epoch (default: number of workers)")
    p.add_argument("--shuffle-window", type=int, default=None, metavar="N",
                   help="chunks whose rows a stream interleaves, so that data stored sorted "
                        "(by label, by time) trains like shuffled data; 1: one chunk at a time "
                        "(default: 8, fewer above 128 MB of rows; `dsvm info` shows it)")
    p.add_argument("--no-intercept", action="store_true",
                   help="fit no intercept (default: an unregularised intercept)")
    p.add_argument("--no-average", action="store_true",
                   help="predict with the last iterate (Pegasos' Algorithm 2 exactly)")
    p.add_argument("--validation", metavar="DATASET",
                   help="a labeled dataset scored after every epoch (default: none)")
    p.add_argument("--seed", type=int, default=0,
                   help="random_state: chunk order, dealing to streams and row order")
    p.add_argument("--quiet", action="store_true", help="no progress output")


def _gamma(text: str) -> float | str:
    if text == "scale":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'scale', got {text!r}") from None


def _add_kernel_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kernel", default="linear", choices=["linear", "rff", "nystroem"],
                   help="Gaussian-kernel feature map applied to each chunk on the workers")
    p.add_argument("--components", type=int, default=1024, help="size of the --kernel map")
    p.add_argument("--gamma", type=_gamma, default="scale",
                   help="Gaussian kernel width exp(-gamma ||s-t||^2) (--kernel, --solver bsgd); "
                        "default 'scale': 1 / (n_features * variance of the features)")
    p.add_argument("--budget", type=int, default=500, help="--solver bsgd: support vectors kept")
    p.add_argument("--local-iters", type=float, default=50.0, metavar="PASSES",
                   help="--solver cocoa: passes of dual coordinate steps over each window of "
                        "chunks in memory per epoch (default 50)")
    p.add_argument("--merge", default="lookup-wd",
                   choices=["gss", "gss-precise", "lookup-h", "lookup-wd"],
                   help="--solver bsgd: merge coefficient by golden section search or lookup")


def add_train_command(sub: Any) -> None:
    p = sub.add_parser("train", help="train a model on a dataset")
    p.add_argument("dataset", help="the labeled zarr dataset to train on (dsvm convert)")
    p.add_argument("--out", required=True, metavar="MODEL",
                   help="the model file to write (checked before training starts)")
    _add_task_args(p)
    _add_schedule_args(p)
    _add_kernel_args(p)
    p.add_argument("--checkpoint", metavar="PATH_OR_URL", default=None,
                   help="write the training state here after every epoch (atomically; "
                        "default: none)")
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
    p.set_defaults(func=cmd_train)
