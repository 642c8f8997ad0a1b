"""L1 (FOLOS) on a9a and w8a: exact zeros and accuracy against the L2 model and scikit-learn's
``LinearSVC(penalty="l1", loss="squared_hinge", dual=False)``.

dsvm: solver="sgd" (hinge), L2 at alpha = 1/n (averaged SGD, the default) and L1 at
alpha = m/n (the last iterate: FOLOS' soft-threshold gives exact zeros; no average is kept), 20
epochs, seed 0, in this process (1 stream) and on a 2-worker LocalCluster (2 streams, zarr data
converted with shuffle=True in 4,096-row chunks). LinearSVC at C = 1/m (the same alpha = 1/(n C)
scale, its own loss) and C = 1. Issue target: >= 30% exact zeros within 1 point of L2.

    python -m benchmarks.bench_l1
"""

from __future__ import annotations

import tempfile
import time

import numpy as np

from benchmarks._common import write_section
from benchmarks.bench_accuracy import DATA, SETS
from benchmarks.bench_asset import load

L1_SCALE = {"a9a": 64, "w8a": 32}  # alpha = m / n for the L1 model
EPOCHS = 20


def linearsvc_row(name, Xtr, ytr, Xte, yte, C: float) -> str:
    from sklearn.svm import LinearSVC

    X32 = Xtr.copy()
    X32.indices, X32.indptr = X32.indices.astype(np.int32), X32.indptr.astype(np.int32)
    tic = time.perf_counter()
    svc = LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=C,
                    max_iter=5000).fit(X32, ytr)
    secs = time.perf_counter() - tic
    nnz = int(np.sum(svc.coef_ != 0))
    return (f"| {name} | LinearSVC(penalty='l1', squared hinge) C={C:g} | - | {nnz} | "
            f"{np.mean(svc.coef_ == 0):.1%} | {svc.score(Xte, yte):.4f} | {secs:.2f} |")


def dsvm_row(name, Xtr, ytr, Xte, yte, penalty: str, m: float, client=None, train=None,
             n_streams=None) -> tuple:
    import dsvm

    n = Xtr.shape[0]
    clf = dsvm.SVMClassifier(solver="sgd", penalty=penalty, alpha=m / n, max_epochs=EPOCHS,
                             tol=None, random_state=0, client=client, n_streams=n_streams)
    tic = time.perf_counter()
    clf.fit(train) if train is not None else clf.fit(Xtr, ytr)
    secs = time.perf_counter() - tic
    acc = clf.score(Xte, yte)
    where = "2 workers" if client is not None else "in process"
    if n_streams is not None:
        where += f", n_streams={n_streams}"
    nnz = int(np.sum(clf.coef_ != 0))
    zeros = float(np.mean(clf.coef_ == 0))
    row = (f"| {name} | dsvm sgd {penalty}, alpha={m:g}/n, {where} | {EPOCHS} | {nnz} "
           f"| {zeros:.1%} | {acc:.4f} | {secs:.2f} |")
    return row, zeros, acc


def main() -> None:
    from distributed import Client, LocalCluster

    import dsvm

    rows, verdicts = [], []
    with tempfile.TemporaryDirectory() as tmp, LocalCluster(
        n_workers=2, threads_per_worker=1, dashboard_address=None
    ) as cluster, Client(cluster) as client:
        for name in ("a9a", "w8a"):
            Xtr, ytr, Xte, yte = load(name)
            m = L1_SCALE[name]
            r2, _, acc2 = dsvm_row(name, Xtr, ytr, Xte, yte, "l2", 1.0)
            r1, z1, acc1 = dsvm_row(name, Xtr, ytr, Xte, yte, "l1", m)
            rows += [r2, r1]
            verdicts.append(f"{name} in process: {z1:.1%} zeros, accuracy {acc1:.4f} vs L2 "
                            f"{acc2:.4f} ({100 * (acc1 - acc2):+.2f} points): "
                            + ("met" if z1 >= 0.30 and acc1 >= acc2 - 0.01 else "not met"))
            train = dsvm.convert(DATA / SETS[name][0], f"{tmp}/{name}.zarr",
                                 n_features=SETS[name][2], chunk_rows=4096, shuffle=True, seed=0)
            r2d, _, acc2d = dsvm_row(name, Xtr, ytr, Xte, yte, "l2", 1.0, client, train)
            r1d, z1d, acc1d = dsvm_row(name, Xtr, ytr, Xte, yte, "l1", m, client, train)
            r1s, z1s, acc1s = dsvm_row(name, Xtr, ytr, Xte, yte, "l1", m, client, train, 1)
            rows += [r2d, r1d, r1s]
            verdicts.append(f"{name} on 2 workers, n_streams=1: {z1s:.1%} zeros, accuracy "
                            f"{acc1s:.4f} vs L2 {acc2d:.4f} ({100 * (acc1s - acc2d):+.2f} points): "
                            + ("met" if z1s >= 0.30 and acc1s >= acc2d - 0.01 else "not met"))
            verdicts.append(f"{name} on 2 workers: {z1d:.1%} zeros, accuracy {acc1d:.4f} vs L2 "
                            f"{acc2d:.4f} ({100 * (acc1d - acc2d):+.2f} points): "
                            + ("met" if z1d >= 0.30 and acc1d >= acc2d - 0.01 else "not met"))
            rows.append(linearsvc_row(name, Xtr, ytr, Xte, yte, 1.0 / m))
            rows.append(linearsvc_row(name, Xtr, ytr, Xte, yte, 1.0))
            for r in rows[-7:]:
                print(r, flush=True)
    body = "\n".join([
        __doc__.split("\n\n")[1].replace("\n", " "),
        "",
        "| data | method | epochs | nonzeros | exact zeros | test accuracy | seconds |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        *[f"- {v}" for v in verdicts],
        "",
        "The 2-worker model averages the two streams' last iterates each epoch, so a weight is "
        "exactly 0 only where both streams have it at 0: fewer zeros than one stream. "
        "`n_streams=1` on the cluster trains one stream over all chunks (a worker at a time) "
        "and avoids that averaging; the last iterate's sparsity still varies with the row order "
        "(compare it with the in-process row), so the 30% figure is met only at the edge.",
    ])
    print(body)
    write_section("L1 (FOLOS) sparsity vs L2 and LinearSVC(penalty='l1')", body,
                  "python -m benchmarks.bench_l1")


if __name__ == "__main__":
    main()
