"""Train with dsvm on a SLURM (or PBS) cluster through dask-jobqueue.

    pip install dsvm dask-jobqueue
    python slurm_cluster.py s3://bucket/train.zarr /shared/model.dsvm --jobs 8

Each batch job runs single-threaded dask workers; the script is the driver (run it on a login
node, or inside a small job). Not tested here (no SLURM): the classes and arguments are
dask-jobqueue's. With ``--checkpoint`` on shared storage, re-running the same command after a
failure (or a pre-empted allocation) resumes from the last epoch.
"""

from __future__ import annotations

import argparse

import dsvm


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("dataset")
    p.add_argument("out")
    p.add_argument("--jobs", type=int, default=4, help="batch jobs (each a node's share)")
    p.add_argument("--workers-per-job", type=int, default=8)
    p.add_argument("--memory", default="32GB", help="memory per batch job")
    p.add_argument("--queue", default=None)
    p.add_argument("--account", default=None)
    p.add_argument("--walltime", default="02:00:00")
    p.add_argument("--pbs", action="store_true", help="PBS/Torque instead of SLURM")
    p.add_argument("--checkpoint", default=None, help="shared path or URL")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--alpha", type=float, default=1e-5)
    args = p.parse_args()

    from dask_jobqueue import PBSCluster, SLURMCluster
    from distributed import Client

    Cluster = PBSCluster if args.pbs else SLURMCluster
    cluster = Cluster(
        cores=args.workers_per_job,            # one thread per worker ...
        processes=args.workers_per_job,        # ... and one worker per core
        memory=args.memory,
        queue=args.queue,
        account=args.account,
        walltime=args.walltime,
        job_script_prologue=["export DSVM_TUNE_MALLOC=1"],
    )
    cluster.scale(jobs=args.jobs)
    with Client(cluster) as client:
        client.wait_for_workers(args.workers_per_job, timeout=600)
        clf = dsvm.SVMClassifier(alpha=args.alpha, max_epochs=args.epochs, tol=None,
                                 random_state=0, verbose=2, client=client,
                                 # fixed, so that workers joining late do not change the model
                                 n_streams=args.jobs * args.workers_per_job,
                                 checkpoint=args.checkpoint)
        clf.fit(args.dataset, resume=args.checkpoint is not None)
        clf.save(args.out)
        print(f"saved {args.out}: {clf.n_iter_} epochs")
    cluster.close()


if __name__ == "__main__":
    main()
