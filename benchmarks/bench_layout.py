"""Skewed sparse features laid out for the cache (#28 item 1): one core, in process, averaged
``sgd`` and ``pegasos`` epochs on a dataset written as given and with
``feature_order="frequency"`` (dsvm.data.feature_layout), against scikit-learn's
``SGDClassifier(loss="hinge", max_iter=1)`` on the original feature ids.

Data (each problem is written twice with ``dsvm.write_arrays``, codec "none", the same chunks):

- ``zipf``: ``--rows`` (1,000,000) x 2^20, 40 distinct feature ids a row drawn from Zipf(1.3)
  and scattered over the ids by a fixed random permutation (as hashing or arbitrary ids
  scatter them), values 1; labels the sign of a sparse true weight vector's score (a random
  10% of the features, N(0, 1)) plus N(0, 0.5 sd) noise; ``--rows // 4`` test rows.
- ``criteo``, ``avazu``: shared/data's samples hashed to 2^22 with scikit-learn's
  FeatureHasher (Criteo: the 26 categorical fields as "Cj=value" tokens, the 13 counts as
  ("Ij", log1p(count)) pairs; Avazu: every column but id and click as "column=value");
  trained on the train file, tested on dev + test.
- ``imdb``, ``sst2``: review / sentence tokens hashed to 2^22 by HashingVectorizer
  (scikit-learn's default tokens, l2-normalised counts, no alternate sign); IMDB's train and
  test halves, SST-2's train and dev files.

The real samples are small (7,200 to 67,349 rows: an epoch of a few ms, within the timer's
noise), so their training rows are repeated in a fixed random order up to ``--min-rows``
(400,000) rows; each row's features, and so the hot set a pass touches, are the sample's.
The number of repeats is in the table.

Timing: ``--repeat`` rounds, interleaved (each round fits every configuration once); dsvm's
epoch is the shortest epoch in ``history_`` of its 3-epoch fits (tol=None, n_streams=1, the
store read in this process, whatever its size: held for the fit when it is no larger than one
window, else read every epoch, dsvm.data.held), scikit-learn's the shortest
``fit(max_iter=1)``. Accuracy on the test rows after 3 epochs (scikit-learn: max_iter=3,
tol=None). Vowpal Wabbit is reported when
its Python module is installed.

    python -m benchmarks.bench_layout [--rows 1000000] [--min-rows 400000] [--repeat 3]
        [--only zipf,criteo,avazu,imdb,sst2] [--quick] [--no-write]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import lzma
import math
import re
import shutil
import tarfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from benchmarks._common import WORK, write_section
from dsvm import open_dataset
from dsvm.training import engines

ALPHA = 1e-5
DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
SOLVERS = ("sgd", "pegasos")
# the renumbered store fitted without the hold and the reads ahead of dsvm.data.held
ASKED = "frequency, every window read when asked"


# -- problems -----------------------------------------------------------------------------------
def zipf_rows(n: int, d: int, per_row: int, rng: np.random.Generator,
              scatter: np.ndarray) -> sp.csr_matrix:
    """``n`` rows of ``per_row`` distinct ids drawn from Zipf(1.3) over ``d`` (fewer where 3x
    as many draws gave fewer distinct ones), scattered by ``scatter``; values 1."""
    blocks = []
    for lo in range(0, n, 50_000):
        m = min(50_000, n - lo)
        draws = (rng.zipf(1.3, size=(m, 3 * per_row)) - 1) % d
        order = np.argsort(draws, axis=1, kind="stable")
        ranked = np.take_along_axis(draws, order, axis=1)
        first = np.ones_like(ranked, dtype=bool)
        first[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
        keep = np.zeros_like(first)
        np.put_along_axis(keep, order, first, axis=1)  # first occurrences, in draw order
        keep &= np.cumsum(keep, axis=1) <= per_row
        rows = np.nonzero(keep)[0]
        cols = scatter[draws[keep]]
        block = sp.csr_matrix((np.ones(rows.shape[0], np.float32), (rows, cols)), shape=(m, d))
        block.sort_indices()
        blocks.append(block)
    return sp.vstack(blocks, format="csr")


def zipf_problem(n: int, d: int = 2**20, per_row: int = 40, seed: int = 0):
    rng = np.random.default_rng(seed)
    scatter = rng.permutation(d)
    w = np.where(rng.random(d) < 0.1, rng.normal(size=d), 0.0)
    X = zipf_rows(n + n // 4, d, per_row, rng, scatter)
    score = X @ w
    y = np.where(score + rng.normal(scale=0.5 * score.std(), size=score.shape[0]) > 0, 1, -1)
    return X[:n], y[:n], X[n:], y[n:], f"{n:,} x 2^20, Zipf(1.3) ids, {per_row} a row"


def _hash_pairs(rows: list[list[tuple[str, float]]]) -> sp.csr_matrix:
    from sklearn.feature_extraction import FeatureHasher

    hasher = FeatureHasher(n_features=2**22, input_type="pair", dtype=np.float32)
    return hasher.transform(rows).tocsr()


def criteo_problem():
    def read(name: str):
        ys, rows = [], []
        path = DATA / "criteo_sample" / f"criteo_kaggle_head8000_{name}.txt.xz"
        for line in lzma.open(path, "rt"):
            f = line.rstrip("\n").split("\t")
            ys.append(1 if f[0] == "1" else -1)
            pairs = [(f"I{j}", math.log1p(max(float(v), 0.0))) for j, v in enumerate(f[1:14], 1)
                     if v]
            rows.append(pairs + [(f"C{j}={v}", 1.0) for j, v in enumerate(f[14:], 1) if v])
        return _hash_pairs(rows), np.array(ys)

    (X, y), tests = read("train"), [read("dev"), read("test")]
    return (X, y, sp.vstack([t[0] for t in tests], format="csr"),
            np.concatenate([t[1] for t in tests]), "criteo_sample hashed to 2^22")


def avazu_problem():
    header = None

    def read(name: str):
        nonlocal header
        text = lzma.open(DATA / "avazu_sample" / f"avazu_head9000_{name}.csv.xz", "rt").read()
        if header is None:
            header, text = text.split("\n", 1)
        records = list(csv.DictReader(io.StringIO(text), fieldnames=header.split(",")))
        cols = [c for c in header.split(",") if c not in ("id", "click")]
        rows = [[(f"{c}={r[c]}", 1.0) for c in cols] for r in records]
        return _hash_pairs(rows), np.array([1 if r["click"] == "1" else -1 for r in records])

    (X, y), tests = read("train"), [read("dev"), read("test")]
    return (X, y, sp.vstack([t[0] for t in tests], format="csr"),
            np.concatenate([t[1] for t in tests]), "avazu_sample hashed to 2^22")


def _hash_texts(texts: list[str]) -> sp.csr_matrix:
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(n_features=2**22, alternate_sign=False,
                             dtype=np.float32).transform(texts).tocsr()


def imdb_problem():
    parts: dict[str, tuple[list[str], list[int]]] = {"train": ([], []), "test": ([], [])}
    pattern = re.compile(r"aclImdb/(train|test)/(pos|neg)/[^/]+\.txt$")
    with tarfile.open(DATA / "imdb" / "imdb_aclImdb_v1_labeled.tar.xz") as tar:
        for member in tar:
            m = pattern.search(member.name)
            if m and member.isfile():
                f = tar.extractfile(member)
                assert f is not None
                texts, ys = parts[m.group(1)]
                texts.append(f.read().decode("utf-8", "replace").replace("<br />", " "))
                ys.append(1 if m.group(2) == "pos" else -1)
    (tx, ty), (sx, sy) = parts["train"], parts["test"]
    return (_hash_texts(tx), np.array(ty), _hash_texts(sx), np.array(sy),
            "IMDB reviews, tokens hashed to 2^22")


def sst2_problem():
    def read(name: str):
        lines = lzma.open(DATA / "sst2" / f"sst2_glue_{name}.tsv.xz", "rt").read().splitlines()
        rows = [line.rsplit("\t", 1) for line in lines[1:] if line.strip()]
        return (_hash_texts([r[0] for r in rows]),
                np.array([1 if r[1].strip() == "1" else -1 for r in rows]))

    (X, y), (Xt, yt) = read("train"), read("dev")
    return X, y, Xt, yt, "SST-2 sentences, tokens hashed to 2^22"


def tiled(X: sp.csr_matrix, y: np.ndarray, min_rows: int, seed: int = 0):
    """The rows repeated in a fixed random order up to ``min_rows`` (at least once)."""
    k = max(1, math.ceil(min_rows / X.shape[0]))
    idx = np.random.default_rng(seed).permutation(np.tile(np.arange(X.shape[0]), k))
    return X[idx], y[idx], k


# -- measurements -------------------------------------------------------------------------------
def dsvm_fit(solver: str, X, y=None, epochs: int = 3):
    """A 3-epoch fit of ``X``: a store's URL, or in-memory rows with their labels ``y``."""
    from dsvm import SVMClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SVMClassifier(solver=solver, alpha=ALPHA, max_epochs=epochs, tol=None,
                             random_state=0, n_streams=1).fit(X, y)


@contextlib.contextmanager
def reads_as_asked():
    """A store fit in this process without its hold or its reads ahead (dsvm.data.held): every
    window read when its pass asks for it, as before them."""
    from dsvm.engine import local

    saved = local.holdable, local.reads_ahead_of
    local.holdable = local.reads_ahead_of = lambda *args: False  # type: ignore[assignment]
    try:
        yield
    finally:
        local.holdable, local.reads_ahead_of = saved


def sklearn_fit(X, y, epochs: int):
    from sklearn.linear_model import SGDClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning for max_iter=1
        return SGDClassifier(loss="hinge", alpha=ALPHA, max_iter=epochs, tol=None,
                             random_state=0).fit(X, y)


def vw_pass(X, y) -> float | None:
    """Seconds of one VW pass (hinge, -b 22) from its cache, or None without vowpalwabbit."""
    try:
        import vowpalwabbit  # noqa: F401

        from benchmarks.bench_kernels import _vw_pass
    except ImportError:
        return None
    return _vw_pass(X, y, 1)


def measure(name: str, problem, repeat: int, min_rows: int, root: Path) -> list[str]:
    from dsvm import write_arrays

    X, y, Xt, yt, what = problem
    k = 1
    if X.shape[0] < min_rows:
        X, y, k = tiled(X, y, min_rows)
    stores, convert_s = {}, {}
    for order in ("given", "frequency"):
        dst = root / f"{name}-{order}.zarr"
        tic = time.perf_counter()
        stores[order] = write_arrays(dst, X, y, feature_order=order, codec="none",
                                     overwrite=True).url
        convert_s[order] = time.perf_counter() - tic
    layout = open_dataset(stores["frequency"]).feature_layout()
    assert layout is not None
    # the cache layout alone: in-memory rows in the original and in the renumbered ids, the
    # whole 2^k state (what the store's fit adds: it keeps the used features only)
    renumbered = X[:, layout.order].tocsr()
    renumbered.sort_indices()
    inputs = {"given": (stores["given"], None), "frequency": (stores["frequency"], None),
              ASKED: (stores["frequency"], None),
              "memory, original ids": (X, y), "memory, renumbered ids": (renumbered, y)}
    for solver in SOLVERS:  # numba compile / cache load, not timed
        dsvm_fit(solver, stores["frequency"], epochs=1)
    epochs: dict[tuple[str, str], float] = {}
    models = {}
    t_sk = math.inf
    for _ in range(repeat):  # interleaved rounds: each configuration once a round
        for solver in SOLVERS:
            for order, (rows, labels) in inputs.items():
                with reads_as_asked() if order == ASKED else contextlib.nullcontext():
                    clf = dsvm_fit(solver, rows, labels)
                best = min(h["seconds"] for h in clf.history_)
                epochs[solver, order] = min(epochs.get((solver, order), math.inf), best)
                models[solver, order] = clf
        tic = time.perf_counter()
        sklearn_fit(X, y, 1)
        t_sk = min(t_sk, time.perf_counter() - tic)
    acc_sk = sklearn_fit(X, y, 3).score(Xt, yt)
    t_vw = vw_pass(X, y) if name == "zipf" else None
    used = int(np.count_nonzero(layout.counts))
    top = layout.hot_share(4096)
    nnz = X.nnz / X.shape[0]
    lines = [f"### {name}: {what}", "",
             f"{X.shape[0]:,} training rows ({f'the sample repeated {k}x' if k > 1 else 'as is'}"
             f"), {nnz:.1f} nonzeros a row, {used:,} features used; the 4,096 most frequent "
             f"hold {top:.0%} of the nonzeros; {len(yt):,} test rows. Writing the store: "
             f"{convert_s['given']:.1f} s as given, {convert_s['frequency']:.1f} s renumbered.",
             "", "| implementation | epoch s | sklearn / epoch | layout speed-up | "
             "test accuracy (3 epochs) | vs scikit-learn |", "|---|---|---|---|---|---|"]
    for solver in SOLVERS:
        for order in inputs:
            ep, clf = epochs[solver, order], models[solver, order]
            coef = clf.coef_ if order != "memory, renumbered ids" else layout.to_user(clf.coef_)
            acc = float(np.mean(np.where(Xt @ coef[0] + clf.intercept_[0] > 0, 1, -1) == yt))
            base = "given" if order in ("given", "frequency", ASKED) else "memory, original ids"
            what = f"store, feature_order={order}" if base == "given" else order
            lines.append(f"| dsvm {solver}, {what} | {ep:.3f} | {t_sk / ep:.2f}x "
                         f"| {epochs[solver, base] / ep:.2f}x | {acc:.4f} | "
                         f"{100 * (acc - acc_sk):+.2f} points |")
    lines.append(f"| scikit-learn SGDClassifier(hinge), original ids | {t_sk:.3f} | 1.00x | - | "
                 f"{acc_sk:.4f} | - |")
    if name == "zipf":
        lines.append("| Vowpal Wabbit | not installed (no `vw`, no vowpalwabbit module) | | | | |"
                     if t_vw is None else
                     f"| Vowpal Wabbit (hinge, -b 22, one pass from its cache) | {t_vw:.3f} | "
                     f"{t_sk / t_vw:.2f}x | - | - | - |")
    lines.append("")
    for solver in SOLVERS:
        ep = epochs[solver, "frequency"]
        acc = models[solver, "frequency"].score(Xt, yt)
        asked = epochs[solver, ASKED]
        lines.append(f"- {solver}, renumbered: {t_sk / ep:.2f}x scikit-learn (target >= 2x: "
                     f"{'PASS' if t_sk / ep >= 2 else 'FAIL'}), accuracy "
                     f"{100 * (acc - acc_sk):+.2f} points (target: not more than 0.3 below: "
                     f"{'PASS' if acc >= acc_sk - 0.003 else 'FAIL'}); every window read "
                     f"when asked: {asked:.3f} s, {t_sk / asked:.2f}x scikit-learn (held or "
                     f"read ahead: {asked / ep:.2f}x faster).")
    for order in ("given", "frequency"):
        shutil.rmtree(stores[order], ignore_errors=True)
    return lines


PROBLEMS = {"zipf": None, "criteo": criteo_problem, "avazu": avazu_problem,
            "imdb": imdb_problem, "sst2": sst2_problem}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--min-rows", type=int, default=400_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=",".join(PROBLEMS))
    ap.add_argument("--quick", action="store_true",
                    help="100,000 Zipf rows, samples repeated to 50,000 rows, 2 rounds")
    ap.add_argument("--no-write", action="store_true", help="print, do not touch RESULTS.md")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.min_rows, args.repeat = 100_000, 50_000, 2
    # one core, in process, whatever the store's size (a fit starts a LocalCluster for a store
    # over 256 MB otherwise; the 1M-row Zipf set's is ~480 MB)
    engines.IN_PROCESS_BYTES = 1 << 40
    root = WORK / "layout"
    root.mkdir(parents=True, exist_ok=True)
    lines = [f"alpha={ALPHA}, one process, one stream (n_streams=1), best of {args.repeat} "
             "interleaved rounds. dsvm's 'store' rows fit the zarr store (codec none) as a fit "
             "in this process does: a store of no more than one window's bytes (128 MB: "
             "criteo, avazu and sst2 here) is read once for the fit and held, a larger one "
             "(zipf, imdb) is read every epoch, each epoch's first window while the previous "
             "epoch's last trains (dsvm.data.held), and 'every window read when asked' is the "
             "renumbered store fitted without either, side by side; on the renumbered store "
             "the fit keeps "
             "only the features its rows use; "
             "its 'memory' rows fit in-memory CSR with the whole state, in the original and in "
             "the renumbered ids (the cache layout alone); scikit-learn fits in-memory CSR in "
             "the original ids. 'layout speed-up': the epoch of the same input in the original "
             "ids / this one's.", ""]
    for name in args.only.split(","):
        make = PROBLEMS[name]
        problem = zipf_problem(args.rows) if make is None else make()
        part = measure(name, problem, args.repeat, args.min_rows, root)
        print("\n".join(part), flush=True)
        lines += part + [""]
    command = "python -m benchmarks.bench_layout" + (" --quick" if args.quick else "")
    if not args.no_write:
        write_section("Feature layout: skewed sparse epochs vs scikit-learn", "\n".join(lines),
                      command)


if __name__ == "__main__":
    main()
