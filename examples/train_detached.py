"""Submit a fit as a detached job, disconnect, reconnect and collect the model.

    python examples/train_detached.py tcp://scheduler:8786 /shared/train.zarr /shared/model.dsvm

(or set DSVM_SCHEDULER). The job keeps running on the cluster between the two connections;
`dsvm jobs --scheduler ...` lists it from a shell meanwhile.
"""

from __future__ import annotations

import os
import sys

from distributed import Client

import dsvm


def main() -> None:
    address = sys.argv[1] if len(sys.argv) > 1 else os.environ["DSVM_SCHEDULER"]
    data = sys.argv[2] if len(sys.argv) > 2 else "train.zarr"
    out = sys.argv[3] if len(sys.argv) > 3 else "model.dsvm"

    with Client(address) as client:
        clf = dsvm.SVMClassifier(max_epochs=10, tol=None, random_state=0,
                                 checkpoint=out + ".ckpt")
        job = dsvm.submit(clf, data, client=client, out=out)
        print("submitted", job.id)
    # ... the submitting process may exit here; later, from anywhere:
    with Client(address) as client:
        job = dsvm.attach(job.id, client=client)
        job.watch(lambda record: print(f"epoch {record['epoch']}: {record['objective']:.6f}"))
        model = job.result()
        print(f"{model.n_iter_} epochs; the job saved {out}")


if __name__ == "__main__":
    main()
