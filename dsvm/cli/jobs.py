"""The ``dsvm`` commands for detached jobs: ``train --detach``, ``jobs``, ``attach``, ``cancel``.

A detached job runs its driver on the cluster (:mod:`dsvm.distributed.jobs`); these commands
only talk to the scheduler, so the shell may exit while the job trains.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys
from typing import Any

from dsvm.cli.common import add_tls_args, check_output, client_arg


def _connect(args: argparse.Namespace) -> Any:
    from dsvm.training.cluster import connect

    if not getattr(args, "scheduler", None):
        raise ValueError(f"dsvm {args.command} needs --scheduler ADDRESS (the cluster that "
                         f"runs the jobs).")
    client = client_arg(args)
    return connect(client) if isinstance(client, str) else client


def submit_detached(args: argparse.Namespace, clf: Any, dataset: Any, validation: Any) -> int:
    """``dsvm train --detach``: submit and print the job id (the model is saved by the job)."""
    from dsvm.training.cluster import connect
    from dsvm.training.jobs import submit

    if not args.scheduler:
        raise ValueError("--detach needs --scheduler ADDRESS: the job runs on that cluster.")
    client = clf.client
    own = isinstance(client, str)
    if own:
        client = connect(client)
    try:
        kwargs = {"validation": validation} if validation is not None else {}
        if args.resume:
            kwargs["resume"] = True
        job = submit(clf, dataset, client=client, out=os.path.abspath(args.out),
                     keep_failed=args.keep_failed, **kwargs)
    finally:
        if own:
            client.close()
    print(job.id)
    print(f"submitted dsvm job {job.id}; follow it with: dsvm attach {job.id} --scheduler "
          f"{args.scheduler}", file=sys.stderr)
    return 0


def _when(ts: Any) -> str:
    if not ts:
        return "-"
    return _dt.datetime.fromtimestamp(float(ts)).strftime("%Y-%m-%d %H:%M:%S")


def cmd_jobs(args: argparse.Namespace) -> int:
    import json

    from dsvm.training.jobs import jobs

    with _connect(args) as client:
        records = jobs(client)
    if args.json:
        print(json.dumps(records, indent=2, default=str))
        return 0
    if not records:
        print("no dsvm jobs on this scheduler")
        return 0
    print(f"{'id':<14}{'status':<11}{'epoch':>9}  {'submitted':<20}data")
    for r in records:
        print(f"{r['id']:<14}{r['status']:<11}{r['epoch']:>4}/{r['max_epochs']:<4}  "
              f"{_when(r.get('submitted')):<20}{r.get('data', '')}")
    return 0


def cmd_attach(args: argparse.Namespace) -> int:
    from dsvm.data.location import MODEL
    from dsvm.training.jobs import attach
    from dsvm.training.progress import format_epoch

    if args.out:  # before following the job, as train checks --out before the fit
        check_output(args.out, flag="--out", kind=MODEL, overwrite=args.overwrite)
    with _connect(args) as client:
        job = attach(args.job_id, client)
        info = job.info()
        print(f"dsvm job {job.id}: {info['status']}, epoch {info['epoch']}/{info['max_epochs']}, "
              f"{info.get('data', '')}")

        def show(record: dict) -> None:
            print(format_epoch(record), flush=True)

        if args.no_wait:
            for record in info.get("history", []):
                show(record)
            return 0
        info = job.watch(show, timeout=args.timeout)
        if info["status"] != "finished":
            print(f"dsvm attach: job {job.id} {info['status']}"
                  + (f": {info['error']}" if info.get("error") else ""), file=sys.stderr)
            return 1
        if args.out:
            job.result().save(args.out)
            print(f"saved {args.out}")
        elif info.get("out"):
            print(f"the job saved its model to {info['out']}")
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    from dsvm.training.jobs import attach

    with _connect(args) as client:
        job = attach(args.job_id, client)
        status = job.status
        job.cancel()
    if status in ("queued", "running"):
        print(f"cancelled dsvm job {job.id} (it stops after its current epoch)")
    else:  # (it ran to its end: what cancel does then is drop its result from the cluster)
        print(f"dsvm job {job.id} had {status} already: its result is dropped from the "
              "cluster (a model it saved to its --out stays)")
    return 0


def add_job_commands(sub: Any) -> None:
    def scheduler(p: argparse.ArgumentParser) -> None:
        p.add_argument("--scheduler", metavar="ADDRESS", required=True,
                       help="the Dask scheduler the jobs run on")
        add_tls_args(p)

    p = sub.add_parser("jobs", help="list the detached dsvm jobs on a cluster")
    p.add_argument("--json", action="store_true", help="print one JSON document instead")
    scheduler(p)
    p.set_defaults(func=cmd_jobs)

    p = sub.add_parser("attach", help="follow a detached job's progress until it ends")
    p.add_argument("job_id", help="the id dsvm train --detach printed")
    p.add_argument("--out", metavar="MODEL",
                   help="also save the fitted model here (default: only where the job saves it)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a model file at --out (nothing else is ever replaced)")
    p.add_argument("--no-wait", action="store_true", help="print the progress so far and exit")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="stop following after this long (default: until the job ends)")
    scheduler(p)
    p.set_defaults(func=cmd_attach)

    p = sub.add_parser("cancel", help="cancel a detached job")
    p.add_argument("job_id", help="the id dsvm train --detach printed")
    scheduler(p)
    p.set_defaults(func=cmd_cancel)
