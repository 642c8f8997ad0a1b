"""The ``dsvm`` command: demo, convert, info, train, eval, predict, and detached jobs.

It parses arguments, builds datasets and estimators, and calls the public API; it holds no
training logic. Known user errors exit with code 2 and one line on stderr, without a traceback.
Each command module imports what it needs when it runs, so ``dsvm --help`` answers at once.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from typing import Any

from dsvm.cli.common import USER_ERRORS, in_flags, storage_error, use_help_formatter
from dsvm.cli.data import add_data_commands
from dsvm.cli.estimator_flags import CommandParser
from dsvm.cli.info import add_info_command
from dsvm.cli.jobs import add_job_commands
from dsvm.cli.predict import add_predict_commands
from dsvm.cli.train import add_train_command

logger = logging.getLogger("dsvm")

COMMANDS = ("demo", "convert", "info", "train", "eval", "predict", "jobs", "attach", "cancel")


def build_parser() -> argparse.ArgumentParser:
    from dsvm import __version__

    parser = CommandParser(
        prog="dsvm", description="Distributed, out-of-core SVM training on Dask.")
    parser.add_argument("--version", action="version", version=f"dsvm {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also show Dask's own log lines and warnings (workers starting "
                             "and stopping, large task graphs)")
    parser.add_argument("--log-level", default="WARNING", type=str.upper,
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="the least severe log lines shown on stderr")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error (also: DSVM_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_data_commands(sub)
    add_info_command(sub)
    add_train_command(sub)
    add_predict_commands(sub)
    add_job_commands(sub)
    use_help_formatter(parser)
    return parser


def setup_output(args: argparse.Namespace) -> None:
    """What a command prints besides its own lines: log lines from ``--log-level`` on, and
    warnings as one line each. Dask's own log lines and warnings (workers coming and going, a
    nanny killing a worker at shutdown, "Sending large graph") only with ``--verbose`` (from
    INFO on) or ``--log-level INFO``: they say nothing a user can act on. Call inside
    ``warnings.catch_warnings()``, which puts the filters back afterwards."""
    level = getattr(logging, args.log_level)
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.command not in ("info", "convert"):
        from dsvm.training.cluster import quiet_cluster_logs

        quiet_cluster_logs(min(level, logging.INFO) if args.verbose else level)

    def show_warning(message: Any, category: Any, *_: Any, **__: Any) -> None:
        print(f"dsvm {args.command}: warning: {message}", file=sys.stderr)

    warnings.showwarning = show_warning  # one readable line, not Python's source excerpt


def starts_a_cluster(argv: Sequence[str]) -> bool:
    """Whether the command line asks for an embedded LocalCluster (``train`` or ``demo`` with
    ``--workers`` and no ``--scheduler``), read from the raw arguments, before parsing: the
    parser's first use imports the estimators, the time the cluster's server imports in."""
    command = next((a for a in argv if a in COMMANDS), None)
    if command not in ("train", "demo"):
        return False
    flags = [a.split("=", 1)[0] for a in argv if a.startswith("--")]
    return "--workers" in flags and "--scheduler" not in flags


def main(argv: Sequence[str] | None = None) -> int:
    try:
        if starts_a_cluster(sys.argv[1:] if argv is None else argv):
            from dsvm.training.cluster import start_workers_early

            start_workers_early()
        parser = build_parser()
        args = parser.parse_args(argv)
    except KeyboardInterrupt:  # (in the imports of a command's first second)
        print("dsvm: interrupted", file=sys.stderr)
        return 130
    with warnings.catch_warnings():
        setup_output(args)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(f"dsvm {args.command}: interrupted{_resumable(args)}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``dsvm info x.zarr | head``): as Unix tools do, stop quietly;
        # stdout goes to devnull so that Python's flush at exit does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool ended by the closed pipe
    except Exception as exc:  # noqa: BLE001 - a user error, or re-raised as it is
        message = str(exc) if isinstance(exc, USER_ERRORS) else storage_error(exc, urls_in(args))
        if message is None:
            raise
        if args.debug or os.environ.get("DSVM_DEBUG", "") not in ("", "0"):
            traceback.print_exc()  # what --debug is for; still a user error: exit 2 below
        print(f"dsvm {args.command}: error: {in_flags(message)}", file=sys.stderr)
        return 2


def _resumable(args: argparse.Namespace) -> str:
    """How an interrupted ``dsvm train --checkpoint`` goes on, when its checkpoint exists."""
    path = getattr(args, "checkpoint", None) if args.command == "train" else None
    if not path:
        return ""
    from dsvm.data.location import CHECKPOINT, kind_at

    if kind_at(path) != CHECKPOINT:
        return ""
    return (f"; --checkpoint {path} holds the epochs done: the same command with --resume "
            "continues from there")


def urls_in(args: argparse.Namespace) -> list[str]:
    """The storage URLs the user typed (not a scheduler's address)."""
    return [v for v in vars(args).values()
            if isinstance(v, str) and "://" in v and not v.startswith(("tcp://", "tls://"))]


if __name__ == "__main__":
    sys.exit(main())
