"""What every command shares: user errors, cluster arguments and the client they make."""

from __future__ import annotations

import argparse
from typing import Any

from dsvm.exceptions import DataFormatError, DataLayoutError, ModelFormatError

# Errors caused by how the command was called or by its inputs: one line on stderr, exit 2.
# (TypeError is not among them: it is a bug, and its traceback is what a report needs.)
USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError, IsADirectoryError,
               NotADirectoryError, DataFormatError, DataLayoutError, ModelFormatError,
               PermissionError)


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
