"""The ``dsvm`` command: demo, convert, info, train, eval, predict.

It parses arguments, builds datasets and estimators, and calls the public API; it holds no
training logic. Known user errors exit with code 2 and one line on stderr, without a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from dsvm.cli_regression import (
    add_regression_args,
    classifier_options,
    print_regression_eval,
    resolve_task,
    train_regressor,
)
from dsvm.exceptions import DataFormatError, DataLayoutError, ModelFormatError

logger = logging.getLogger("dsvm")

USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError, IsADirectoryError, TypeError,
               DataFormatError, DataLayoutError, ModelFormatError, PermissionError)


class UserError(Exception):
    """An error in how the command was called."""


def _bundled(name: str) -> Path:
    return Path(__file__).parent / "datasets" / name


# -- subcommands ---------------------------------------------------------------------------------
def cmd_demo(args: argparse.Namespace) -> int:
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
        print(f"training pegasos (alpha={alpha:.3g}, {args.epochs} epochs) on a LocalCluster")
        clf.fit(train, validation=test)
        result = clf.evaluate(test)
        print(f"test accuracy: {result['accuracy']:.4f} on {result['n_samples']} rows")
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from dsvm import convert

    layout = "dense" if args.dense else "sparse" if args.sparse else "auto"
    label_column: Any = args.label_column
    if label_column is not None and label_column.lstrip("-").isdigit():
        label_column = int(label_column)
    kwargs: dict[str, Any] = dict(
        labels=args.labels, n_features=args.n_features, chunk_rows=args.chunk_rows,
        layout=layout, shuffle=args.shuffle, seed=args.seed, dtype=args.dtype,
        overwrite=args.overwrite,
    )
    if label_column is not None:
        kwargs["label_column"] = label_column
    ds = convert(args.src, args.dst, **kwargs)
    print(f"wrote {ds.url}: {ds.n_samples} rows x {ds.n_features} features, "
          f"{ds.n_chunks} chunks, {ds.layout}, {ds.dtype}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from dsvm import open_dataset

    info = open_dataset(args.dataset).info()
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        for key, value in info.items():
            print(f"{key:>16}: {value}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from dsvm import SVMClassifier, open_dataset

    dataset = open_dataset(args.dataset)
    validation = open_dataset(args.validation) if args.validation else None
    if args.resume and not args.checkpoint:
        raise ValueError("--resume needs --checkpoint PATH (the checkpoint to continue from)")
    if resolve_task(args.task, dataset) == "regression":
        return train_regressor(args, dataset, validation)
    client = _client_arg(args)
    clf = SVMClassifier(
        solver=args.solver or "pegasos", loss=args.loss or "hinge", alpha=args.alpha,
        fit_intercept=not args.no_intercept,
        mu0=args.mu0,
        max_epochs=args.epochs, tol=args.tol, batch_size=args.batch_size,
        average=not args.no_average,
        n_streams=args.streams, n_workers=args.workers, random_state=args.seed,
        verbose=0 if args.quiet else 2, client=client,
        **classifier_options(args),
        kernel=args.kernel, n_components=args.components, gamma=args.gamma, budget=args.budget,
        merge=args.merge,
    )
    clf.checkpoint = args.checkpoint
    try:
        if args.detach:
            from dsvm.cli_jobs import submit_detached

            return submit_detached(args, clf, dataset, validation)
        clf.fit(dataset, validation=validation, resume=args.resume)
    finally:
        _close_client(client)
    clf.save(args.out)
    last = clf.history_[-1]
    print(f"saved {args.out}: {clf.n_iter_} epochs, objective estimate {last['objective']:.6f}"
          + (f", validation accuracy {last['val_accuracy']:.4f}"
             if last.get("val_accuracy") is not None else ""))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    import dsvm

    clf = dsvm.load(args.model)
    clf.client = _client_arg(args)
    try:
        result = clf.evaluate(args.dataset)
    finally:
        _close_client(clf.client)
    result = {"model": args.model, "dataset": args.dataset, **result,
              "loss_name": clf.loss, "alpha": clf.alpha}
    if "r2" in result:  # a regressor
        print_regression_eval(result, args.json)
        return 0
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"accuracy:  {result['accuracy']:.6f}  ({result['n_samples']} rows)")
        print(f"objective: {result['objective']:.6f}  ({clf.loss}, alpha={clf.alpha:g})")
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    import dsvm

    clf = dsvm.load(args.model)
    clf.client = _client_arg(args)
    what = "decision values" if args.decision else "labels"
    try:
        if args.out.rstrip("/").endswith(".zarr"):
            dataset = dsvm.open_dataset(args.dataset)  # opened once: metadata only
            url = clf.write_predictions(dataset, args.out, decision=args.decision,
                                        overwrite=args.overwrite)
            print(f"wrote {dataset.n_samples} {what} to {url} (zarr, written by the workers)")
            return 0
        values = (clf.decision_function(args.dataset) if args.decision
                  else clf.predict(args.dataset))
    finally:
        _close_client(clf.client)
    out = args.out
    if out.endswith(".npy"):
        np.save(out, values)
    else:
        fmt = "%.9g"
        np.savetxt(out, values, fmt=fmt, delimiter=",")
    print(f"wrote {len(values)} {'decision values' if args.decision else 'labels'} to {out}")
    return 0


def _client_arg(args: argparse.Namespace) -> Any:
    address = getattr(args, "scheduler", None)
    if not address:
        return None
    tls = [getattr(args, k, None) for k in ("tls_ca_file", "tls_cert", "tls_key")]
    if any(tls) or address.startswith("tls://"):
        from dsvm.distributed.client import connect, tls_security

        return connect(address, security=tls_security(*tls))
    return address


def _close_client(client: Any) -> None:
    """Close a Client this command opened (an address string is opened and closed by dsvm)."""
    if client is not None and not isinstance(client, str):
        client.close()


# -- parser ---------------------------------------------------------------------------------------
def _add_cluster_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address (tcp://host:8786) or scheduler file; "
                        "default: an embedded LocalCluster")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes of the embedded LocalCluster (default: one per core)")


def _add_tls_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tls-ca-file", default=None, metavar="PEM",
                   help="CA certificate of a tls:// scheduler")
    p.add_argument("--tls-cert", default=None, metavar="PEM", help="client certificate")
    p.add_argument("--tls-key", default=None, metavar="PEM",
                   help="client private key (if not inside --tls-cert)")


def build_parser() -> argparse.ArgumentParser:
    from dsvm import __version__

    parser = argparse.ArgumentParser(
        prog="dsvm", description="Distributed, out-of-core SVM training on Dask.")
    parser.add_argument("--version", action="version", version=f"dsvm {__version__}")
    parser.add_argument("-v", "--log-level", default="WARNING",
                        help="logging level (DEBUG, INFO, WARNING)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="convert the bundled a9a, train on a LocalCluster, test")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--workers", type=int, default=None, metavar="N")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("convert", help="convert libsvm/svmlight, .npy/.npz or CSV to a zarr dataset")
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--labels", metavar="Y.npy", help="labels for a .npy X")
    p.add_argument("--n-features", type=int, default=None)
    p.add_argument("--chunk-rows", type=int, default=None)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--dense", action="store_true")
    g.add_argument("--sparse", action="store_true")
    p.add_argument("--shuffle", action="store_true", help="shuffle rows (bounded memory)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--label-column", default=None, help="CSV label column (index or name)")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--overwrite", action="store_true")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("info", help="describe a dataset")
    p.add_argument("dataset")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("train", help="train a model on a dataset")
    p.add_argument("dataset")
    p.add_argument("--out", required=True, metavar="MODEL")
    p.add_argument("--solver", default=None, choices=["pegasos", "sgd", "asset", "asset*", "nesvm",
                                                       "bsgd"],
                   help="default: pegasos (classification), sgd (regression)")
    p.add_argument("--loss", default=None,
                   choices=["hinge", "squared_hinge", "logistic", "smoothed_hinge", "squared",
                            "epsilon_insensitive"],
                   help="default: hinge (classification), epsilon_insensitive (regression)")
    add_regression_args(p)
    p.add_argument("--alpha", type=float, default=1e-4, help="regularisation lambda = 1/(n C)")
    p.add_argument("--mu0", type=float, default=None,
                   help="nesvm: homotopy from mu0 down to mu (default: no homotopy)")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--tol", type=float, default=None,
                   help="stop early when the objective stalls (default: run all epochs)")
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--streams", type=int, default=None,
                   help="parallel streams per epoch (default: number of workers)")
    p.add_argument("--no-intercept", action="store_true")
    p.add_argument("--no-average", action="store_true",
                   help="predict with the last iterate (Pegasos' Algorithm 2 exactly)")
    p.add_argument("--validation", metavar="DATASET")
    p.add_argument("--kernel", default="linear", choices=["linear", "rff", "nystroem"],
                   help="Gaussian-kernel feature map applied to each chunk on the workers")
    p.add_argument("--components", type=int, default=1024, help="size of the --kernel map")
    p.add_argument("--gamma", type=float, default=1.0,
                   help="Gaussian kernel width exp(-gamma ||s-t||^2) (--kernel, --solver bsgd)")
    p.add_argument("--budget", type=int, default=500, help="--solver bsgd: support vectors kept")
    p.add_argument("--merge", default="lookup-wd",
                   choices=["gss", "gss-precise", "lookup-h", "lookup-wd"],
                   help="--solver bsgd: merge coefficient by golden section search or lookup")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--checkpoint", metavar="PATH_OR_URL", default=None,
                   help="write the training state here after every epoch (atomically)")
    p.add_argument("--resume", action="store_true",
                   help="continue from --checkpoint if it exists (else start from scratch)")
    p.add_argument("--detach", action="store_true",
                   help="run the fit as a job on the cluster (needs --scheduler); print its id")
    _add_cluster_args(p)
    _add_tls_args(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("eval", help="accuracy (R^2 for regressors) and primal objective of a "
                                    "model on a dataset")
    p.add_argument("model")
    p.add_argument("dataset")
    p.add_argument("--json", action="store_true")
    p.add_argument("--scheduler", metavar="ADDRESS")
    _add_tls_args(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("predict", help="write predicted labels (or decision values)")
    p.add_argument("model")
    p.add_argument("dataset")
    p.add_argument("--out", required=True, metavar="FILE",
                   help=".zarr (written by the workers, chunk by chunk: any size), or .npy or "
                        "text (.csv/.txt), gathered here")
    p.add_argument("--decision", action="store_true", help="write decision values, not labels")
    p.add_argument("--overwrite", action="store_true", help="replace an existing .zarr output")
    p.add_argument("--scheduler", metavar="ADDRESS")
    _add_tls_args(p)
    p.set_defaults(func=cmd_predict)

    from dsvm.cli_jobs import add_job_commands

    add_job_commands(sub, _add_tls_args)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = getattr(logging, str(args.log_level).upper(), logging.WARNING)
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    # distributed logs every client and worker coming and going at INFO: keep the command's own
    # output readable unless asked for more. (It sets its loggers' levels when imported, so
    # import it first.)
    import distributed  # noqa: F401

    for name in ("distributed", "dask"):
        logging.getLogger(name).setLevel(max(level, logging.WARNING) if level > logging.INFO
                                          else level)

    def show_warning(message: Any, category: Any, *_: Any, **__: Any) -> None:
        print(f"dsvm {args.command}: warning: {message}", file=sys.stderr)

    warnings.showwarning = show_warning  # one readable line, not Python's source excerpt
    try:
        return int(args.func(args))
    except USER_ERRORS as exc:
        print(f"dsvm {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"dsvm {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
