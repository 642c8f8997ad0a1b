"""What every command shares: user errors, cluster arguments and the client they make."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from dsvm.cli.estimator_flags import HELP, flag_of
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

# The flag a user typed for each parameter the commands set: the estimators' (dsvm train's
# flags) and the converters'.
FLAGS = {
    **{name: flag_of(name) for name in HELP},
    "overwrite": "--overwrite", "chunk_rows": "--chunk-rows", "n_features": "--n-features",
    "label_column": "--label-column",
}


class HelpFormatter(argparse.HelpFormatter):
    """``--help`` shows every option's default: "(default: X)" is added to its text unless the
    text already says what happens by default, the option is required, or it is a switch
    (off unless given)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (not action.option_strings or action.required or "default" in text
                or action.default in (None, argparse.SUPPRESS) or action.nargs == 0):
            return text
        return f"{text} (default: %(default)s)"


# Errors of cloud storage clients that a user fixes, not dsvm: missing or refused credentials,
# an endpoint that cannot be reached. Recognised by name and module, so that the CLI does not
# import botocore or google-auth to catch them (they are there only with the s3/gcs extras).
STORAGE_ERRORS = {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError",
                  "EndpointConnectionError", "DefaultCredentialsError", "RefreshError",
                  "ClientAuthenticationError"}
STORAGE_MODULES = ("botocore", "aiobotocore", "google.auth", "azure")


def storage_error(exc: BaseException, urls: list[str]) -> str | None:
    """One line for an error of a cloud storage client (in ``exc`` or what it was raised from)
    while dsvm used ``urls``, or None when it is not one."""
    seen = 0
    while exc is not None and seen < 8:  # the chain of causes, bounded
        kind = type(exc)
        if kind.__name__ in STORAGE_ERRORS or kind.__module__.startswith(STORAGE_MODULES):
            where = ", ".join(urls) or "the storage"
            return (f"{where}: refused or not reachable ({kind.__name__}: {exc}); "
                    "check the credentials (e.g. AWS_ACCESS_KEY_ID/AWS_PROFILE for s3://, "
                    "GOOGLE_APPLICATION_CREDENTIALS for gs://) and the URL")
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
        seen += 1
    return None


def use_help_formatter(parser: argparse.ArgumentParser) -> None:
    """:class:`HelpFormatter` for ``parser`` and all its subcommands (``add_parser`` does not
    pass its parent's formatter on)."""
    parser.formatter_class = HelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                use_help_formatter(sub)


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
            above = next(p for p in [Path(folder), *Path(folder).parents] if p.exists())
            raise FileNotFoundError(
                f"{label}: {above} is a file, not a folder." if above.is_file() else
                f"{label}: the folder {folder} does not exist.")
        if not os.access(folder, os.W_OK):
            raise PermissionError(f"{label}: the folder {folder} is not writable.")
    check_replaceable(path, kind, overwrite=overwrite, inputs=[i for i in inputs if i],
                      label=label)


def say_if_compiling(command: str, est: Any, cache_dir: Any = None) -> None:
    """One line before a fit of ``est`` that compiles dsvm's kernels first (a minute or two,
    once per installation), which would otherwise look like a hang. For fits on this machine
    (the embedded LocalCluster's workers share the driver's cache; a scheduler's workers keep
    their own). ``est``'s parameters are checked first, as its fit checks them first, so that
    a bad flag stays the command's one line. ``cache_dir``: the kernels' cache folder
    (default: where numba puts it)."""
    from dsvm.kernels._jit import kernels_not_compiled
    from dsvm.training.engines import compiling_said

    est._validate()  # (SVMBase) raises what fit would raise before any work
    compiling_said()  # (the fit's own notice would repeat this line in the log's format)
    if kernels_not_compiled(cache_dir):
        print(f"dsvm {command}: compiling dsvm's kernels for this machine (once, a minute or "
              "two)...", file=sys.stderr, flush=True)


def add_cluster_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address (tcp://host:8786) or scheduler file; "
                        "default: this process, one thread per core, for a dataset under "
                        "256 MB, else an embedded LocalCluster")


def add_tls_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tls-ca-file", default=None, metavar="PEM",
                   help="CA certificate of a tls:// scheduler (default: none, plain tcp://)")
    p.add_argument("--tls-cert", default=None, metavar="PEM",
                   help="client certificate (default: none)")
    p.add_argument("--tls-key", default=None, metavar="PEM",
                   help="client private key (default: the key inside --tls-cert)")


def client_arg(args: argparse.Namespace) -> Any:
    """What ``client=`` gets from ``--scheduler`` (and the TLS flags): None, an address that
    dsvm opens and closes, or a connected client for TLS."""
    address = getattr(args, "scheduler", None)
    if address is not None and not address.strip():
        raise ValueError("--scheduler is empty: give the scheduler's address (tcp://host:8786) "
                         "or its scheduler file, or leave the flag out to train here")
    workers = getattr(args, "n_workers", None) or getattr(args, "workers", None)
    if address and workers:
        raise ValueError(f"--workers {workers} starts dsvm's own LocalCluster, and "
                         f"--scheduler {address} names a running one: give one of them")
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


def add_zero_based_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--zero-based", default="auto", choices=["auto", "true", "false"],
                   help="svmlight/libsvm text: whether feature indices count from 0 "
                        "(scikit-learn's dump_svmlight_file writes so by default) or from 1 "
                        "(svmlight's and LIBSVM's convention); auto: 0-based when some index "
                        "is 0, as scikit-learn's load_svmlight_file decides (give true for a "
                        "test file of 0-based data that may lack index 0)")


def zero_based(args: argparse.Namespace) -> bool | str:
    """``--zero-based`` as ``convert``'s ``zero_based=``."""
    return {"true": True, "false": False}.get(args.zero_based, "auto")


def add_fill_missing_arg(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--fill-missing", type=fill_value, default=None, metavar="VALUE|mean",
                   help=help)


def fill_value(text: str) -> float | str:
    """``--fill-missing``: a finite number, or ``mean`` (each column's mean, dsvm.data.fill)."""
    from dsvm.data.fill import check_fill

    try:
        value = check_fill("mean" if text.strip().lower() == "mean" else text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a finite number or 'mean', not {text!r}") from None
    assert isinstance(value, (float, str))
    return value
