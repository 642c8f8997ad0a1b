"""Default settings on raw sparse columns (#25): the scaling of CSR columns, against peers.

Three cases where the rows are CSR and some columns hold raw values, trained with default
settings (``scale="auto"``) and with each sparse rule forced through the same fit:

1. A user's table: a pandas DataFrame with a category column (``city``, 4 values: the frame is
   hashed into CSR, its numeric columns kept raw), a heavy-tailed ``income`` (lognormal(10, 1):
   a few values in the millions among tens of thousands) and ``age``; the label depends on
   log(income) and the city. 15,000 training rows, 5,000 test rows. Peer: LinearSVC on
   standardised one-hot rows.
2. Raw breast_cancer with a 3-value category column, ``solver="nesvm"`` and ``"asset"``
   (the default CoCoA+ does not feel whether the numbers are centred; these do), 398 training
   rows and 171 test rows. Peer: LinearSVC on standardised one-hot rows.
3. MNIST's test file (../shared/data/mnist_test) as CSR raw pixels 0-255, the first 8,000 rows
   to train and the last 2,000 to test, even/odd and 10 digits. Peer: LinearSVC on
   MaxAbsScaler rows (scikit-learn's sparse-safe scaler).

The rules (dsvm.features.scaling): "max-abs" divides a column by its largest magnitude (the
rule before); "stored RMS, nearest" by the root mean square of its nonzero values rounded to
the nearest power of two; "stored RMS, up" (the default) rounded up, with the columns stored
in at least half the rows centred and divided by their standard deviation (a hashed frame's
numbers, MNIST's central pixels); "not centred" is the default without that (the rule before).

    python -m benchmarks.bench_scaling [--no-write]
"""

from __future__ import annotations

import argparse
import gzip
import os
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from benchmarks._common import write_section

DATA = Path(os.environ.get("DSVM_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared/data"))

TITLE = "Default settings on raw sparse columns (#25)"


def income_frame(n: int = 20_000, seed: int = 0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    income = rng.lognormal(10, 1, n)
    city = rng.choice(list("abcd"), n)
    frame = pd.DataFrame({"income": income, "age": rng.integers(18, 90, n),
                          "city": pd.Categorical(city)})
    y = np.log(income) + (city == "a") + rng.normal(0, 0.5, n) > 10.2
    return frame, np.where(y, "yes", "no")


def mnist():
    folder = DATA / "mnist_test"
    with gzip.open(folder / "t10k-images-idx3-ubyte.gz") as f:
        X = np.frombuffer(f.read()[16:], np.uint8).reshape(-1, 784).astype(np.float64)
    with gzip.open(folder / "t10k-labels-idx1-ubyte.gz") as f:
        y = np.frombuffer(f.read()[8:], np.uint8)
    return sp.csr_matrix(X), y


def _rules() -> dict[str, Callable[..., np.ndarray] | None]:
    from dsvm.features import scaling

    shipped = scaling.stored_rms

    def nearest(count, sum_sq):
        up = shipped(count, sum_sq)
        rms = np.sqrt(np.divide(sum_sq, count, out=np.zeros(count.shape), where=count > 0))
        return np.where(up > 0, np.exp2(np.round(np.log2(np.where(rms > 0, rms, 1.0)))), 0.0)

    return {"stored RMS, up (default)": None, "stored RMS, up, not centred": "uncentred",
            "stored RMS, nearest": nearest, "max-abs": "max"}


def dsvm_score(rule, X, y, Xt, yt, solver="auto") -> tuple[float, str]:
    """Test accuracy of ``SVMClassifier()`` (in this process) with the sparse rule ``rule``:
    None as shipped, "max" without the stored values' sums (as for a dataset written before
    they were kept: max-abs), "uncentred" with no column centred, else a function in place of
    ``scaling.stored_rms``."""
    import dsvm.engine.tasks as tasks
    from dsvm import SVMClassifier
    from dsvm.features import scaling

    saved = (scaling.stored_rms, tasks.block_stats, scaling.centred_where_dense)

    def without_sums(chunk, block):
        out = saved[1](chunk, block)
        out.stored_count = out.stored_sum_sq = None
        return out

    if rule == "max":
        tasks.block_stats = without_sums
    elif rule == "uncentred":
        scaling.centred_where_dense = lambda stats, rows, spread: (None, spread)
    elif rule is not None:
        scaling.stored_rms = rule
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = SVMClassifier(solver=solver, random_state=0).fit(X, y)
        return float(clf.score(Xt, yt)), clf.scaling_.kind
    finally:
        scaling.stored_rms, tasks.block_stats, scaling.centred_where_dense = saved


def cancer_rows() -> list[tuple[str, str, float, float, str]]:
    """Raw breast_cancer with a 3-value category column (hashed: the 30 numbers become CSR
    columns stored in nearly every row), NESVM and ASSET, whose steps feel the conditioning
    that the default CoCoA+ does not; peer: LinearSVC on standardised one-hot rows."""
    import pandas as pd
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    site = np.random.default_rng(0).choice(["a", "b", "c"], len(X))
    frame = X.rename(columns=lambda c: c.replace(" ", "_")).assign(site=pd.Categorical(site))
    onehot = pd.get_dummies(frame).astype(float)
    tr, te = train_test_split(np.arange(len(X)), test_size=0.3, random_state=0)
    peer = make_pipeline(StandardScaler(), LinearSVC()).fit(onehot.iloc[tr], y.iloc[tr])
    peer_acc = peer.score(onehot.iloc[te], y.iloc[te])
    out = []
    for solver in ("nesvm", "asset"):
        for name, rule in list(_rules().items())[:2]:
            acc, kind = dsvm_score(rule, frame.iloc[tr], y.iloc[tr], frame.iloc[te], y.iloc[te],
                                   solver=solver)
            out.append((f"breast_cancer + site (hashed frame), {solver}", name, acc, peer_acc,
                        kind))
    return out


def rows() -> list[tuple[str, str, float, float, str]]:
    import pandas as pd
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler
    from sklearn.svm import LinearSVC

    out = []
    frame, y = income_frame()
    tr, te = slice(0, 15_000), slice(15_000, None)
    onehot = pd.get_dummies(frame).astype(float).to_numpy()
    peer = make_pipeline(StandardScaler(), LinearSVC()).fit(onehot[tr], y[tr])
    peer_acc = peer.score(onehot[te], y[te])
    for name, rule in _rules().items():
        acc, kind = dsvm_score(rule, frame.iloc[tr], y[tr], frame.iloc[te], y[te])
        out.append(("income, age, city (hashed frame)", name, acc, peer_acc, kind))
    out += cancer_rows()
    if not (DATA / "mnist_test").exists():
        print(f"MNIST skipped: {DATA / 'mnist_test'} not found (set DSVM_SHARED_DATA)")
        return out
    X, digits = mnist()
    for task, labels in (("MNIST even/odd", digits % 2), ("MNIST 10 digits", digits)):
        tr, te = slice(0, 8000), slice(8000, None)
        peer = make_pipeline(MaxAbsScaler(), LinearSVC()).fit(X[tr], labels[tr])
        peer_acc = peer.score(X[te], labels[te])
        for name, rule in _rules().items():
            acc, kind = dsvm_score(rule, X[tr], labels[tr], X[te], labels[te])
            out.append((task, name, acc, peer_acc, kind))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    table = rows()
    lines = ["`SVMClassifier()` with default settings (test accuracy), each sparse scaling rule "
             "forced through the same fit; the peer is LinearSVC on standardised one-hot rows "
             "(the frame) or on MaxAbsScaler rows (MNIST). See the module docstring for the "
             "data.", "",
             "| data | sparse rule | dsvm | peer | scaling_.kind |", "|---|---|---|---|---|"]
    lines += [f"| {d} | {r} | {a:.4f} | {p:.4f} | {k} |" for d, r, a, p, k in table]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section(TITLE, body, "python -m benchmarks.bench_scaling")


if __name__ == "__main__":
    main()
