"""What a scikit-learn user expects, measured on real data (issue #16), on a 2-worker
LocalCluster from zarr:

1. ijcnn1 (10% positives), linear, alpha = 1/n: balanced accuracy with class_weight="balanced"
   against LinearSVC(class_weight="balanced"), and both without weights.
2. a9a, loss="logistic": test log-loss of predict_proba against LogisticRegression(C=1/(n alpha)).
3. a9a, early_stopping=True: the epoch it stops at and its test accuracy against the full run.
4. Where each solver stops with the default tol (a9a, lambda = 1/n, no intercept): epochs run,
   the objective above LIBLINEAR's optimum, whether it warned.

    python -m benchmarks.bench_sklearn_parity
"""

from __future__ import annotations

import bz2
import warnings

import numpy as np

from benchmarks._common import WORK, write_section


def _load(rel, n_features):
    from tests.conftest import load_libsvm

    return load_libsvm(rel, n_features)


def _ijcnn1_test():
    from sklearn.datasets import load_svmlight_file

    from tests.conftest import shared_file

    with bz2.open(shared_file("ijcnn1/ijcnn1.t.bz2")) as f:
        return load_svmlight_file(f, n_features=22)


def _zarr(name, X, y):
    import dsvm

    path = WORK / f"parity-{name}.zarr"
    if path.exists():
        return dsvm.open_dataset(path)
    return dsvm.write_arrays(path, X.astype(np.float32), y, chunk_rows=4096)


def class_weights(client) -> str:
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.svm import LinearSVC

    import dsvm

    X, y = _load("ijcnn1/ijcnn1.tr.xz", 22)
    Xt, yt = _ijcnn1_test()
    ds = _zarr("ijcnn1", X, y)
    rows = ["| class_weight | dsvm pegasos, 2 workers | LinearSVC |", "|---|---|---|"]
    for cw in (None, "balanced"):
        ours = dsvm.SVMClassifier(alpha=1.0 / len(y), class_weight=cw, max_epochs=20,
                                  random_state=0, client=client).fit(ds)
        svc = LinearSVC(C=1.0, class_weight=cw, max_iter=20_000).fit(X, y)
        rows.append(f"| {cw} | {balanced_accuracy_score(yt, ours.predict(Xt)):.4f} "
                    f"({ours.n_iter_} epochs) "
                    f"| {balanced_accuracy_score(yt, svc.predict(Xt)):.4f} |")
    return "\n".join(rows)


def probabilities(client) -> str:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss

    import dsvm

    X, y = _load("a9a/a9a.xz", 123)
    Xt, yt = _load("a9a/a9a.t.xz", 123)
    alpha = 1.0 / len(y)
    ds = _zarr("a9a", X, y)
    ours = dsvm.SVMClassifier(solver="sgd", loss="logistic", alpha=alpha, random_state=0,
                              client=client).fit(ds)
    lr = LogisticRegression(C=1.0 / (len(y) * alpha), max_iter=2000).fit(X, y)
    a, b = log_loss(yt, ours.predict_proba(Xt)), log_loss(yt, lr.predict_proba(Xt))
    return (f"a9a test log-loss: dsvm sgd (logistic, {ours.n_iter_} epochs, 2 workers) {a:.5f}, "
            f"LogisticRegression {b:.5f}: ratio {a / b:.4f} (target <= 1.01).")


def early_stopping(client) -> str:
    import dsvm

    X, y = _load("a9a/a9a.xz", 123)
    Xt, yt = _load("a9a/a9a.t.xz", 123)
    ds = _zarr("a9a", X, y)
    kw = dict(alpha=1.0 / len(y), max_epochs=50, random_state=0, client=client)
    full = dsvm.SVMClassifier(tol=None, **kw).fit(ds)
    early = dsvm.SVMClassifier(early_stopping=True, n_iter_no_change=5, **kw).fit(ds)
    return (f"a9a pegasos, 2 workers, max_epochs=50: early_stopping=True (10% of the chunks "
            f"held out, n_iter_no_change=5) stopped after {early.n_iter_} epochs with test "
            f"accuracy {early.score(Xt, yt):.4f}; the full run {full.score(Xt, yt):.4f} "
            f"(difference {abs(early.score(Xt, yt) - full.score(Xt, yt)) * 100:.2f} points, "
            "target <= 0.3).")


def default_stops(client) -> str:
    import dsvm
    from dsvm.exceptions import ConvergenceWarning
    from tests.conftest import liblinear_objective

    X, y = _load("a9a/a9a.xz", 123)
    ds = _zarr("a9a", X, y)
    alpha = 1.0 / len(y)
    ref = liblinear_objective(X, y, alpha)
    rows = ["| solver | max_epochs | epochs run | above optimum | ConvergenceWarning |",
            "|---|---|---|---|---|"]
    for solver in ("pegasos", "sgd", "asset", "asset*", "nesvm"):
        for max_epochs in (10, 100):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                clf = dsvm.SVMClassifier(solver=solver, alpha=alpha, fit_intercept=False,
                                         max_epochs=max_epochs, random_state=0,
                                         client=client).fit(ds)
            w = clf.coef_.ravel().astype(np.float64)
            obj = 0.5 * alpha * w @ w + np.maximum(0.0, 1.0 - y * (X @ w)).mean()
            warned = any(issubclass(c.category, ConvergenceWarning) for c in caught)
            rows.append(f"| {solver} | {max_epochs} | {clf.n_iter_} "
                        f"| {100 * (obj / ref - 1):+.2f}% | {'yes' if warned else 'no'} |")
    return "\n".join(rows)


def main() -> None:
    from distributed import Client, LocalCluster

    WORK.mkdir(parents=True, exist_ok=True)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        parts = [
            "### class_weight on ijcnn1 (balanced accuracy on ijcnn1.t)\n\n"
            + class_weights(client),
            "### predict_proba\n\n" + probabilities(client),
            "### early stopping on held-out chunks\n\n" + early_stopping(client),
            "### Where each solver stops with the default tol=1e-3 (a9a, lambda = 1/n, no "
            "intercept, 2 workers)\n\n" + default_stops(client) + "\n\nA fit that reaches "
            "max_epochs while its objective still improves by more than tol (relative) warns; "
            "one that stops on tol does not.",
        ]
    body = "\n\n".join(parts)
    print(body)
    write_section("scikit-learn parity (issue #16)", body,
                  "python -m benchmarks.bench_sklearn_parity")


if __name__ == "__main__":
    main()
