"""The CLI's regression side: choosing the task, training an SVMRegressor, printing R^2.

Kept apart from :mod:`dsvm.cli` so that the command module only gains a few lines of wiring.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

# With more distinct labels than this, or any non-integer label, ``--task auto`` trains a
# regressor. (A dataset records its classes only up to 1000 distinct values; beyond, none.)
MAX_CLASSES_FOR_AUTO = 100


def add_regression_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", default="auto", choices=["auto", "classification", "regression"],
                   help="auto: regression when the labels are not class-like (non-integer, or "
                        f"more than {MAX_CLASSES_FOR_AUTO} distinct values), else classification")
    p.add_argument("--epsilon", type=float, default=0.0,
                   help="regression: half-width of the epsilon-insensitive tube")
    p.add_argument("--penalty", default="l2", choices=["l2", "l1", "elasticnet"],
                   help="l1/elasticnet: FOLOS prox steps (solver sgd); l1: LP-SVM (solver nesvm)")
    p.add_argument("--l1-ratio", type=float, default=0.15)
    p.add_argument("--mu", type=float, default=0.03,
                   help="smoothing of the smoothed hinge (loss smoothed_hinge, solver nesvm)")
    p.add_argument("--rho", type=float, default=0.5,
                   help="ASSET: average the iterates from step rho*N on")


def resolve_task(task: str, dataset: Any) -> str:
    """The task to train: as asked, or inferred from the dataset's labels (with a message)."""
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


def classifier_options(args: argparse.Namespace) -> dict[str, Any]:
    return dict(penalty=args.penalty, l1_ratio=args.l1_ratio, mu=args.mu, rho=args.rho)


def train_regressor(args: argparse.Namespace, dataset: Any, validation: Any) -> int:
    from dsvm import SVMRegressor
    from dsvm.cli import _client_arg, _close_client

    if args.detach:
        raise ValueError("--detach trains classifiers only for now; run the regression in the "
                         "foreground (it resumes from --checkpoint if interrupted)")

    reg = SVMRegressor(
        solver=args.solver or "sgd", loss=args.loss or "epsilon_insensitive", alpha=args.alpha,
        penalty=args.penalty, l1_ratio=args.l1_ratio, epsilon=args.epsilon,
        fit_intercept=not args.no_intercept, max_epochs=args.epochs, tol=args.tol,
        batch_size=args.batch_size, average=not args.no_average, rho=args.rho,
        n_streams=args.streams, n_workers=args.workers, random_state=args.seed,
        verbose=0 if args.quiet else 2, client=_client_arg(args), checkpoint=args.checkpoint,
        kernel=args.kernel, n_components=args.components, gamma=args.gamma,
    )
    try:
        reg.fit(dataset, validation=validation, resume=args.resume)
    finally:
        _close_client(reg.client)
    reg.save(args.out)
    last = reg.history_[-1]
    print(f"saved {args.out}: regressor, {reg.n_iter_} epochs, objective estimate "
          f"{last['objective']:.6f}"
          + (f", validation R^2 {last['val_accuracy']:.4f}"
             if last.get("val_accuracy") is not None else ""))
    return 0


def print_regression_eval(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, indent=2))
        return
    print(f"r2:        {result['r2']:.6f}  ({result['n_samples']} rows)")
    print(f"mse:       {result['mse']:.6g}")
    print(f"objective: {result['objective']:.6f}  ({result['loss_name']}, "
          f"alpha={result['alpha']:g})")
