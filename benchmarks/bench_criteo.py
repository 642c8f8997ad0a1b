"""Click logs through the hashing trick, end to end (#11 acceptance): a generated Criteo-layout
TSV converted with ``--format criteo --hash-bits 20``, trained on 2 workers, against
scikit-learn's FeatureHasher + SGDClassifier(hinge) on the same rows; the unlabeled test file
(Criteo's test layout: the 39 fields without the label) predicted as the hashed labeled one.

Data (fixed seed): ``--rows`` (1,000,000) training rows and ``--test-rows`` (200,000) test
rows; I1..I13 small counts (Poisson, 20% missing, kept as numeric features as Criteo's layout
has them); C1..C26 categorical, column j drawing from a vocabulary of 10 .. 100,000 values
(log-spaced cardinalities) with a Zipf-like skew (value index floor(c * u**4)), 10% missing,
written as 8-hex-digit tokens like Criteo's. Labels from a known logistic model on the hashed
features: every token "Cj=value" has the weight N(0, 1) of its hashed feature (times its
sign), the counts weight 0.05 each, and a bias of -2.8; y ~ Bernoulli.

scikit-learn's side builds FeatureHasher(n_features=2**20, input_type="string")'s matrix of the
same rows by hashing each column's vocabulary once through FeatureHasher and gathering (the same
matrix as FeatureHasher on the rows' token lists, without 26M Python-level tokens; dsvm's
hashed features equal FeatureHasher's, tests/data/test_hashing.py), with I1..I13 in front.

    python -m benchmarks.bench_criteo [--rows 1000000] [--test-rows 200000]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks._common import WORK, worker_peak_rss, write_section

BITS = 20
N_CATEGORICAL = 26
N_NUMERIC = 13


def vocabularies(rng: np.random.Generator) -> list[np.ndarray]:
    sizes = np.round(np.logspace(1, 5, N_CATEGORICAL)).astype(int)
    return [np.array([f"{v:08x}" for v in rng.choice(2**32, size=n, replace=False)])
            for n in sizes]


def token_features(vocab: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per column: each vocabulary value's hashed feature and sign, through FeatureHasher."""
    from sklearn.feature_extraction import FeatureHasher

    hasher = FeatureHasher(n_features=2**BITS, input_type="string")
    out = []
    for j, values in enumerate(vocab, 1):
        m = hasher.transform([[f"C{j}={v}"] for v in values]).tocsr()
        assert np.all(np.diff(m.indptr) == 1)
        out.append((m.indices.astype(np.int64), m.data.astype(np.float64)))
    return out


def draw_rows(rng, n, vocab):
    """Value indices per categorical column (-1: missing) and the counts (NaN: missing)."""
    cats = np.empty((n, N_CATEGORICAL), np.int64)
    for j, values in enumerate(vocab):
        idx = np.floor(len(values) * rng.random(n) ** 4).astype(np.int64)
        idx[rng.random(n) < 0.10] = -1
        cats[:, j] = idx
    counts = rng.poisson(1.0, size=(n, N_NUMERIC)).astype(np.float64)
    counts[rng.random((n, N_NUMERIC)) < 0.20] = np.nan
    return cats, counts


def hashed_matrix(cats, counts, feats):
    """The rows as scikit-learn sees them: I1..I13 (missing: 0), then the hashed tokens."""
    import scipy.sparse as sp

    n = cats.shape[0]
    rows, cols, vals = [], [], []
    for j, (index, sign) in enumerate(feats):
        present = np.flatnonzero(cats[:, j] >= 0)
        v = cats[present, j]
        rows.append(present)
        cols.append(index[v])
        vals.append(sign[v])
    hashed = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                           shape=(n, 2**BITS)).tocsr()  # collisions in a row add up
    blocks = [sp.csr_matrix(np.nan_to_num(counts, nan=0.0)), hashed]
    return sp.hstack(blocks, format="csr", dtype=np.float32)


def write_tsv(path, cats, counts, vocab, y=None):
    import pandas as pd

    cols = {}
    if y is not None:
        cols["label"] = y.astype(np.int64)
    for i in range(N_NUMERIC):
        c = counts[:, i]
        cols[f"I{i + 1}"] = pd.array(np.where(np.isnan(c), -1, c).astype(np.int64))
        cols[f"I{i + 1}"][np.isnan(c)] = pd.NA
    for j, values in enumerate(vocab):
        idx = cats[:, j]
        col = np.where(idx >= 0, values[np.maximum(idx, 0)], "")
        cols[f"C{j + 1}"] = col
    pd.DataFrame(cols).to_csv(path, sep="\t", header=False, index=False, na_rep="")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--test-rows", type=int, default=200_000)
    args = ap.parse_args()

    from distributed import Client, LocalCluster
    from sklearn.linear_model import SGDClassifier

    import dsvm

    work = WORK / "criteo"
    work.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    vocab = vocabularies(rng)
    feats = token_features(vocab)
    w_true = rng.standard_normal(2**BITS)
    contrib = [sign * w_true[index] for index, sign in feats]

    def labels(cats, counts):
        logit = np.nan_to_num(counts, nan=0.0).sum(axis=1) * 0.05
        for j in range(N_CATEGORICAL):
            present = cats[:, j] >= 0
            logit[present] += contrib[j][cats[present, j]]
        logit -= 2.8  # the bias: the positives' share is printed with the results
        return (rng.random(len(logit)) < 1 / (1 + np.exp(-logit))).astype(np.int64)

    tic = time.perf_counter()
    train = draw_rows(rng, args.rows, vocab)
    test = draw_rows(rng, args.test_rows, vocab)
    y, yt = labels(*train), labels(*test)
    write_tsv(work / "train.txt", *train, vocab, y)
    write_tsv(work / "test-labeled.txt", *test, vocab, yt)
    write_tsv(work / "test.txt", *test, vocab)  # Criteo's test layout: no label
    generated = time.perf_counter() - tic

    convert_s = {}
    for name in ("train", "test-labeled", "test"):
        tic = time.perf_counter()
        dsvm.convert(work / f"{name}.txt", work / f"{name}.zarr", format="criteo",
                     hash_bits=BITS, overwrite=True)
        convert_s[name] = time.perf_counter() - tic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="4GiB",
                          dashboard_address=None) as cluster, Client(cluster) as client:
            tic = time.perf_counter()
            clf = dsvm.SVMClassifier(random_state=0, client=client).fit(
                str(work / "train.zarr"))
            fit_s = time.perf_counter() - tic
            acc = clf.score(str(work / "test-labeled.zarr"))
            p_labeled = clf.predict(str(work / "test-labeled.zarr"))
            p_raw = clf.predict(str(work / "test.zarr"))
            rss = max(worker_peak_rss(client).values()) / 2**20
        X, Xt = hashed_matrix(*train, feats), hashed_matrix(*test, feats)
        tic = time.perf_counter()
        sk = SGDClassifier(loss="hinge", random_state=0).fit(X, y)
        sk_s = time.perf_counter() - tic
        sk_acc = sk.score(Xt, yt)

    same = bool(np.array_equal(p_labeled, p_raw))
    gap = (sk_acc - acc) * 100
    body = "\n".join([
        f"{args.rows:,} training rows, {args.test_rows:,} test rows (generated in "
        f"{generated:.0f} s), Criteo layout, 26 categorical columns of 10 .. 100,000 values, "
        f"hash bits {BITS}; positives {y.mean():.1%}.", "",
        "| step | seconds | result |", "|---|---|---|",
        f"| dsvm convert train.txt --format criteo --hash-bits {BITS} | "
        f"{convert_s['train']:.1f} | {args.rows / convert_s['train']:,.0f} rows/s |",
        f"| dsvm convert test.txt (unlabeled, 39 fields) | {convert_s['test']:.1f} | - |",
        f"| dsvm SVMClassifier() defaults, 2 workers, fit | {fit_s:.1f} | {clf.n_iter_} epochs, "
        f"test accuracy {acc:.4f}, worker peak RSS {rss:.0f} MiB |",
        f"| scikit-learn FeatureHasher + SGDClassifier(hinge) defaults, fit | {sk_s:.1f} | "
        f"{sk.n_iter_} epochs, test accuracy {sk_acc:.4f} |", "",
        f"- accuracy: dsvm {acc:.2%} vs scikit-learn {sk_acc:.2%}: {gap:+.2f} points "
        f"({'met' if gap <= 0.5 else 'NOT met'}: within 0.5)",
        f"- predictions of the unlabeled test file (converted with the same flags) equal those "
        f"of the labeled one: {'yes' if same else 'NO'} ({len(p_raw):,} rows)",
    ])
    print(body)
    write_section("Click logs through hashing: Criteo layout (#11)", body,
                  f"python -m benchmarks.bench_criteo --rows {args.rows} "
                  f"--test-rows {args.test_rows}")


if __name__ == "__main__":
    main()
