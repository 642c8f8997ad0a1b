"""Accuracy and objective on the real LIBSVM sets against LIBLINEAR (scikit-learn's LinearSVC).

For each dataset (../shared/data, or $DSVM_SHARED_DATA): convert to zarr, train dsvm's solvers on
a 2-worker LocalCluster at lambda = 1/n without intercept, and compare the primal hinge objective
on the training set and the test accuracy with LinearSVC(loss="hinge", C=1) on the same data.

    python -m benchmarks.bench_accuracy [--epochs 10 20]
"""

from __future__ import annotations

import argparse
import lzma
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import write_section

DATA = Path(os.environ.get("DSVM_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared/data"))
SETS = {"a9a": ("a9a/a9a.xz", "a9a/a9a.t.xz", 123), "w8a": ("w8a/w8a.xz", "w8a/w8a.t.xz", 300)}


def liblinear(Xtr, ytr, Xte, yte, alpha: float) -> tuple[float, float, float]:
    from sklearn.svm import LinearSVC

    Xtr = Xtr.tocsr()
    Xtr.indices, Xtr.indptr = Xtr.indices.astype(np.int32), Xtr.indptr.astype(np.int32)
    tic = time.perf_counter()
    svc = LinearSVC(loss="hinge", C=1.0 / (alpha * Xtr.shape[0]), fit_intercept=False,
                    dual=True, tol=1e-6, max_iter=200_000).fit(Xtr, ytr)
    seconds = time.perf_counter() - tic
    w = svc.coef_.ravel()
    obj = 0.5 * alpha * w @ w + np.maximum(0, 1 - ytr * (Xtr @ w)).mean()
    return float(obj), float(svc.score(Xte, yte)), seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, nargs="+", default=[10, 20])
    args = ap.parse_args()
    from distributed import Client, LocalCluster
    from sklearn.datasets import load_svmlight_file

    import dsvm

    rows = []
    with tempfile.TemporaryDirectory() as tmp, LocalCluster(
        n_workers=2, threads_per_worker=1, dashboard_address=None
    ) as cluster, Client(cluster) as client:
        for name, (tr, te, d) in SETS.items():
            if not (DATA / tr).exists():
                print(f"skipping {name}: {DATA / tr} not found")
                continue
            with lzma.open(DATA / tr) as f:
                Xtr, ytr = load_svmlight_file(f, n_features=d)
            with lzma.open(DATA / te) as f:
                Xte, yte = load_svmlight_file(f, n_features=d)
            alpha = 1.0 / Xtr.shape[0]
            opt, acc, secs = liblinear(Xtr, ytr, Xte, yte, alpha)
            rows.append(f"| {name} | LIBLINEAR (LinearSVC, dual CD) | - | {opt:.5f} | - | "
                        f"{acc:.4f} | {secs:.2f} |")
            # shuffled: w8a is sorted by label (see README)
            train = dsvm.convert(DATA / tr, f"{tmp}/{name}.zarr", n_features=d, chunk_rows=4096,
                                 shuffle=True, seed=0)
            test = dsvm.convert(DATA / te, f"{tmp}/{name}.t.zarr", n_features=d)
            for solver, average in (("pegasos", True), ("pegasos", False), ("sgd", True)):
                for epochs in args.epochs:
                    clf = dsvm.SVMClassifier(solver=solver, average=average, alpha=alpha,
                                             fit_intercept=False, max_epochs=epochs, tol=None,
                                             random_state=0, client=client)
                    tic = time.perf_counter()
                    clf.fit(train)
                    secs = time.perf_counter() - tic
                    obj = clf.evaluate(train)["objective"]
                    label = solver + ("" if average else " (last iterate, Alg. 2)")
                    extrap = clf.state_.extrapolation
                    if extrap is not None:
                        label += " (extrapolated)" if extrap.use else " (average kept)"
                    rows.append(f"| {name} | dsvm {label} | {epochs} | {obj:.5f} | "
                                f"{100 * (obj / opt - 1):+.2f}% | {clf.score(test):.4f} | "
                                f"{secs:.2f} |")
                    if extrap is not None:  # what the plain average would have given
                        w = clf.state_.avg_coef.ravel()
                        avg_obj = 0.5 * alpha * w @ w + np.maximum(0, 1 - ytr * (Xtr @ w)).mean()
                        avg_acc = float(np.mean(np.where(Xte @ w > 0, 1, -1) == yte))
                        rows.append(f"| {name} | ... its plain average | {epochs} | "
                                    f"{avg_obj:.5f} | {100 * (avg_obj / opt - 1):+.2f}% | "
                                    f"{avg_acc:.4f} | - |")
    body = "\n".join([
        "lambda = 1/n (C = 1), no intercept, hinge; dsvm on a LocalCluster of 2 workers "
        "(2 streams), training sets converted with shuffle=True into chunks of 4,096 rows, "
        "seed 0. Objective = lambda/2 ||w||^2 + mean hinge on the training set. Averaged "
        "Pegasos returns the Richardson extrapolation of its average when each epoch's probe "
        "measures it lower (dsvm/solvers/extrapolation.py); the row below it is the plain "
        "average of the same fit.",
        "",
        "| data | method | epochs | objective | vs LIBLINEAR | test accuracy | seconds |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ])
    print(body)
    write_section("Accuracy and objective on real data vs LIBLINEAR", body,
                  "python -m benchmarks.bench_accuracy")


if __name__ == "__main__":
    main()
