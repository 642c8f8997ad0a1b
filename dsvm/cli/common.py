"""What every command shares: user errors, cluster arguments and the client they make."""

from __future__ import annotations

import argparse
import os
import re
from typing import Any

from dsvm.exceptions import (
    ClusterConnectionError,
    DataFormatError,
    DataLayoutError,
    ModelFormatError,
    SchedulerLostError,
    WorkerLostError,
)

# Errors caused by how the command was called, by its inputs or by its cluster: one line on
# stderr, exit 2. (TypeError is not among them: it is a bug, and its traceback is what a report
# needs; --debug shows the traceback of any error.)
USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError, IsADirectoryError,
               NotADirectoryError, DataFormatError, DataLayoutError, ModelFormatError,
               PermissionError, ClusterConnectionError, WorkerLostError, SchedulerLostError)

# The flag a user typed for each estimator parameter the commands set.
FLAGS = {
    "max_epochs": "--epochs", "n_workers": "--workers", "n_streams": "--streams",
    "n_components": "--components", "batch_size": "--batch-size", "l1_ratio": "--l1-ratio",
    "random_state": "--seed", "n_iter_no_change": "--n-iter-no-change",
    "validation_fraction": "--validation-fraction", "class_weight": "--class-weight",
    "fit_intercept": "--no-intercept", "average": "--no-average", "overwrite": "--overwrite",
    "chunk_rows": "--chunk-rows", "n_features": "--n-features", "label_column": "--label-column",
    "shuffle_window": "--shuffle-window", "local_iters": "--local-iters",
}


def in_flags(message: str) -> str:
    """A library message rephrased with the command's flags: "The 'max_epochs' parameter of
    SVMClassifier must be ..." becomes "--epochs must be ...", "pass overwrite=True" becomes
    "pass --overwrite"."""
    def flag(name: str) -> str:
        return FLAGS.get(name, "--" + name.replace("_", "-"))

    message = re.sub(r"The '(\w+)' parameter of \w+ must be",
                     lambda m: f"{flag(m.group(1))} must be", message)
    return re.sub(r"\b(\w+)=True\b", lambda m: flag(m.group(1)) if m.group(1) in FLAGS
                  else m.group(0), message)


def check_output(path: str, *, flag: str, kind: str, overwrite: bool,
                 inputs: tuple[str, ...] = ()) -> None:
    """Before any work: ``path``, where the command writes ``kind`` (one of dsvm.data.location's
    kinds: DATASET, MODEL, ...), is none of its inputs, its folder exists and is writable, and
    what is there now may be replaced: nothing, or ``kind`` with ``--overwrite``. The Python API
    makes the same decision (dsvm.data.location.check_replaceable) when it writes."""
    from dsvm.data.location import check_replaceable

    label = f"{flag} {path}"
    if "://" not in path:
        folder = os.path.dirname(os.path.abspath(path)) or "."
        if not os.path.isdir(folder):
            raise FileNotFoundError(f"{label}: the folder {folder} does not exist.")
        if not os.access(folder, os.W_OK):
            raise PermissionError(f"{label}: the folder {folder} is not writable.")
    check_replaceable(path, kind, overwrite=overwrite, inputs=[i for i in inputs if i],
                      label=label)


def add_cluster_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address (tcp://host:8786) or scheduler file; "
                        "default: an embedded LocalCluster")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes of the embedded LocalCluster (default: one per core)")


def add_tls_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tls-ca-file", default=None, metavar="PEM",
                   help="CA certificate of a tls:// scheduler")
    p.add_argument("--tls-cert", default=None, metavar="PEM", help="client certificate")
    p.add_argument("--tls-key", default=None, metavar="PEM",
                   help="client private key (if not inside --tls-cert)")


def client_arg(args: argparse.Namespace) -> Any:
    """What ``client=`` gets from ``--scheduler`` (and the TLS flags): None, an address that
    dsvm opens and closes, or a connected client for TLS."""
    address = getattr(args, "scheduler", None)
    if not address:
        return None
    tls = tuple(getattr(args, k, None) for k in ("tls_ca_file", "tls_cert", "tls_key"))
    if any(tls) or address.startswith("tls://"):
        from dsvm.training.cluster import connect

        return connect(address, tls=tls)  # type: ignore[arg-type]
    return address


def close_client(client: Any) -> None:
    """Close a client this command opened (an address string is opened and closed by dsvm)."""
    if client is not None and not isinstance(client, str):
        client.close()
