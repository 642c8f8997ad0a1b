"""ASSET on a9a against LIBLINEAR's optimum, and objective vs epoch for pegasos, sgd, asset, asset*.

Both on a LocalCluster of 2 workers (2 streams), lambda = 1/n (a9a: 3.07e-5), no intercept, hinge,
training sets converted to zarr with shuffle=True in chunks of 4,096 rows, seed 0.

* ASSET acceptance (papers/000; the issue asks for within 1% of 0.35115 and >= 84.7% test
  accuracy): ``fit`` for each (epochs, rho) in the grid below.
* Objective vs epoch: ``partial_fit`` one epoch at a time (ASSET's N set to the plot's length
  through ``max_epochs``), the primal objective of the returned model (the average for
  pegasos/sgd/asset, the last iterate for asset*) after each epoch; plotted to
  benchmarks/asset_objective.png (matplotlib, the ``bench`` extra).

    python -m benchmarks.bench_asset [--plot-epochs 40] [--asset-epochs 100 200]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import write_section
from benchmarks.bench_accuracy import DATA, SETS, liblinear

PLOT = Path(__file__).with_name("asset_objective.png")
SOLVERS = ("pegasos", "sgd", "asset", "asset*")


def load(name: str):
    import lzma

    from sklearn.datasets import load_svmlight_file

    tr, te, d = SETS[name]
    with lzma.open(DATA / tr) as f:
        Xtr, ytr = load_svmlight_file(f, n_features=d)
    with lzma.open(DATA / te) as f:
        Xte, yte = load_svmlight_file(f, n_features=d)
    return Xtr.tocsr(), ytr, Xte.tocsr(), yte


def objective(coef, X, y, alpha: float) -> float:
    w = np.asarray(coef, np.float64).ravel()
    return float(0.5 * alpha * w @ w + np.maximum(0.0, 1.0 - y * (X @ w)).mean())


def asset_acceptance(client, tmp: str, grid) -> str:
    import dsvm

    Xtr, ytr, Xte, yte = load("a9a")
    alpha = 1.0 / Xtr.shape[0]
    opt, lin_acc, _ = liblinear(Xtr, ytr, Xte, yte, alpha)
    train = dsvm.convert(DATA / SETS["a9a"][0], f"{tmp}/a9a.zarr", n_features=123,
                         chunk_rows=4096, shuffle=True, seed=0)
    rows = [f"| LIBLINEAR (LinearSVC, dual CD) | - | - | {opt:.5f} | - | {lin_acc:.4f} | - |"]
    for epochs, rho in grid:
        clf = dsvm.SVMClassifier(solver="asset", alpha=alpha, fit_intercept=False,
                                 max_epochs=epochs, rho=rho, tol=None, random_state=0,
                                 client=client)
        tic = time.perf_counter()
        clf.fit(train)
        secs = time.perf_counter() - tic
        obj = objective(clf.coef_, Xtr, ytr, alpha)
        acc = float(np.mean(np.where(Xte @ clf.coef_.ravel() > 0, 1.0, -1.0) == yte))
        met = "met" if obj <= 1.01 * opt and acc >= 0.847 else "not met"
        rows.append(f"| dsvm asset | {epochs} | {rho} | {obj:.5f} | {100 * (obj / opt - 1):+.2f}% "
                    f"| {acc:.4f} | {secs:.1f} ({met}) |")
        print(rows[-1], flush=True)
    return "\n".join([
        "a9a, lambda = 1/n = 3.07e-5, no intercept, hinge; ASSET on 2 workers (2 streams); "
        "objective = lambda/2 ||w||^2 + mean hinge on the training set of the returned (averaged) "
        "model. Target: within 1% of 0.35115 and test accuracy >= 84.7%.",
        "",
        "| method | epochs | rho | objective | vs LIBLINEAR | test accuracy | seconds |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ])


def curves(client, tmp: str, n_epochs: int) -> tuple[str, dict]:
    import dsvm

    out: dict = {}
    rows = []
    for name in ("a9a", "w8a"):
        Xtr, ytr, Xte, yte = load(name)
        alpha = 1.0 / Xtr.shape[0]
        opt, _, _ = liblinear(Xtr, ytr, Xte, yte, alpha)
        train = dsvm.convert(DATA / SETS[name][0], f"{tmp}/{name}-c.zarr",
                             n_features=SETS[name][2], chunk_rows=4096, shuffle=True, seed=0)
        out[name] = {"optimum": opt}
        for solver in SOLVERS:
            clf = dsvm.SVMClassifier(solver=solver, alpha=alpha, fit_intercept=False,
                                     max_epochs=n_epochs, tol=None, random_state=0,
                                     client=client)
            objs = []
            tic = time.perf_counter()
            for _ in range(n_epochs):
                clf.partial_fit(train)
                objs.append(objective(clf.coef_, Xtr, ytr, alpha))
            secs = time.perf_counter() - tic
            out[name][solver] = objs
            pick = [objs[i - 1] for i in (1, 5, 10, 20, n_epochs) if i <= n_epochs]
            rows.append(f"| {name} | {solver} | " + " | ".join(
                f"{v:.5f} ({100 * (v / opt - 1):+.1f}%)" for v in pick) + f" | {secs:.1f} |")
            print(rows[-1], flush=True)
    heads = [str(i) for i in (1, 5, 10, 20, n_epochs) if i <= n_epochs]
    table = "\n".join([
        "| data | solver | " + " | ".join(f"epoch {h}" for h in heads) + " | seconds |",
        "|---|---|" + "---|" * len(heads) + "---|",
        *rows,
    ])
    return table, out


def plot(data: dict, n_epochs: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, name in zip(axes, ("a9a", "w8a")):
        opt = data[name]["optimum"]
        for solver in SOLVERS:
            sub = np.maximum(np.asarray(data[name][solver]) / opt - 1.0, 1e-5)
            ax.semilogy(np.arange(1, n_epochs + 1), sub, label=solver)
        ax.set_title(f"{name}, lambda = 1/n, 2 workers")
        ax.set_xlabel("epoch")
        ax.set_ylabel("(objective - LIBLINEAR optimum) / optimum")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(PLOT, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--plot-epochs", type=int, default=40)
    ap.add_argument("--asset-epochs", type=int, nargs="+", default=[100, 200])
    ap.add_argument("--rho", type=float, nargs="+", default=[0.5, 0.8])
    ap.add_argument("--skip-curves", action="store_true")
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory() as tmp, LocalCluster(
        n_workers=2, threads_per_worker=1, dashboard_address=None
    ) as cluster, Client(cluster) as client:
        grid = [(e, r) for e in args.asset_epochs for r in args.rho]
        body = asset_acceptance(client, tmp, grid)
        write_section("ASSET on a9a vs LIBLINEAR (2 workers)", body,
                      "python -m benchmarks.bench_asset")
        if args.skip_curves:
            return
        table, data = curves(client, tmp, args.plot_epochs)
    plot(data, args.plot_epochs)
    body = "\n".join([
        "Primal objective (lambda/2 ||w||^2 + mean hinge, training set) of the model each solver "
        "returns after each epoch (relative to LIBLINEAR's optimum in brackets); lambda = 1/n, "
        "no intercept, 2 workers (2 streams), one `partial_fit` per epoch. pegasos and sgd: "
        "their averaged iterates (dsvm's defaults); asset: averaging from rho N = N/2 of the "
        f"{args.plot_epochs} epochs; asset*: the last iterate (as the paper).",
        "",
        f"![objective vs epoch]({PLOT.name})",
        "",
        table,
    ])
    write_section("Objective vs epoch: pegasos, sgd, asset, asset* (a9a, w8a)", body,
                  "python -m benchmarks.bench_asset")


if __name__ == "__main__":
    main()
