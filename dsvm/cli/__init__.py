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

from dsvm.cli.common import USER_ERRORS, in_flags
from dsvm.cli.data import add_data_commands
from dsvm.cli.jobs import add_job_commands
from dsvm.cli.predict import add_predict_commands
from dsvm.cli.train import add_train_command

logger = logging.getLogger("dsvm")


def build_parser() -> argparse.ArgumentParser:
    from dsvm import __version__

    parser = argparse.ArgumentParser(
        prog="dsvm", description="Distributed, out-of-core SVM training on Dask.")
    parser.add_argument("--version", action="version", version=f"dsvm {__version__}")
    parser.add_argument("-v", "--log-level", default="WARNING",
                        help="logging level (DEBUG, INFO, WARNING)")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error (also: DSVM_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", required=True)
    add_data_commands(sub)
    add_train_command(sub)
    add_predict_commands(sub)
    add_job_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = getattr(logging, str(args.log_level).upper(), logging.WARNING)
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.command not in ("info", "convert"):
        from dsvm.training.cluster import quiet_cluster_logs

        quiet_cluster_logs(level)

    def show_warning(message: Any, category: Any, *_: Any, **__: Any) -> None:
        print(f"dsvm {args.command}: warning: {message}", file=sys.stderr)

    warnings.showwarning = show_warning  # one readable line, not Python's source excerpt
    try:
        return int(args.func(args))
    except USER_ERRORS as exc:
        if args.debug or os.environ.get("DSVM_DEBUG", "") not in ("", "0"):
            traceback.print_exc()  # what --debug is for; still a user error: exit 2 below
        print(f"dsvm {args.command}: error: {in_flags(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"dsvm {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``dsvm info x.zarr | head``): as Unix tools do, stop quietly;
        # stdout goes to devnull so that Python's flush at exit does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool ended by the closed pipe


if __name__ == "__main__":
    sys.exit(main())
