"""Click logs through the README's recipe with default settings (#25): `dsvm convert` (Criteo's
layout, or a CSV with hashed columns and its id dropped), `dsvm train` with no options, then
`dsvm predict --decision` on the held-out file. The model must rank clicks at least as well as
scikit-learn's FeatureHasher + SGDClassifier on the same split (with log1p on Criteo's counts,
as click-log pipelines do), and its exit code and saved file must say it worked."""

from __future__ import annotations

import csv
import lzma
import math

import numpy as np
import pytest

from dsvm.cli import main
from tests.conftest import shared_file

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


def _auc(y, scores):
    from sklearn.metrics import roc_auc_score

    return roc_auc_score(y, scores)


def _recipe(tmp_path, train, test, *convert_flags):
    for src, dst in ((train, "train.zarr"), (test, "test.zarr")):
        assert main(["convert", str(src), str(tmp_path / dst), *convert_flags]) == 0
    assert main(["train", str(tmp_path / "train.zarr"), "--out", str(tmp_path / "m.dsvm")]) == 0
    assert main(["predict", str(tmp_path / "m.dsvm"), str(tmp_path / "test.zarr"), "--out",
                 str(tmp_path / "d.npy"), "--decision"]) == 0
    return np.load(tmp_path / "d.npy")


def _criteo_rows(path):
    ys, counts, tokens = [], [], []
    for line in lzma.open(path, "rt"):
        f = line.rstrip("\n").split("\t")
        ys.append(int(f[0]))
        counts.append([math.log1p(max(float(v), 0.0)) if v else 0.0 for v in f[1:14]])
        tokens.append([f"C{j}={v}" for j, v in enumerate(f[14:], 1) if v])
    return np.array(ys), np.array(counts), tokens


def test_criteo_with_defaults_ranks_clicks_as_well_as_scikit_learn(tmp_path):
    import scipy.sparse as sp
    from sklearn.feature_extraction import FeatureHasher
    from sklearn.linear_model import SGDClassifier

    train = shared_file("criteo_sample/criteo_kaggle_head8000_train.txt.xz")
    test = shared_file("criteo_sample/criteo_kaggle_head8000_test.txt.xz")
    scores = _recipe(tmp_path, train, test, "--format", "criteo")
    y, _, _ = _criteo_rows(test)

    def features(path):
        labels, counts, tokens = _criteo_rows(path)
        hashed = FeatureHasher(n_features=2**18, input_type="string").transform(tokens)
        return sp.hstack([sp.csr_matrix(counts), hashed]).tocsr(), labels

    peer = SGDClassifier(loss="log_loss", random_state=0).fit(*features(train))
    peer_auc = _auc(y, peer.decision_function(features(test)[0]))
    # measured: dsvm 0.744 (solver="auto": averaged SGD, more features in use than rows; CoCoA+'s
    # optimum 0.682), scikit-learn 0.71 (0.617 before Criteo's counts were log-scaled)
    assert _auc(y, scores) >= peer_auc
    assert np.mean((scores > 0) == (y == 1)) > 1 - y.mean()  # above always "no click"


def test_avazu_with_defaults_ranks_clicks_as_well_as_scikit_learn(tmp_path):
    from sklearn.feature_extraction import FeatureHasher
    from sklearn.linear_model import SGDClassifier

    train_xz = shared_file("avazu_sample/avazu_head9000_train.csv.xz")
    test_xz = shared_file("avazu_sample/avazu_head9000_test.csv.xz")
    text = lzma.open(train_xz, "rt").read()
    header = text.split("\n", 1)[0]
    (tmp_path / "train.csv").write_text(text)
    # the sample's test file has no header; a user's would have the training file's
    (tmp_path / "test.csv").write_text(header + "\n" + lzma.open(test_xz, "rt").read())
    hashed = [c for c in header.split(",") if c not in ("id", "click")]
    scores = _recipe(tmp_path, tmp_path / "train.csv", tmp_path / "test.csv",
                     "--label-column", "click", "--categorical", ",".join(hashed),
                     "--drop", "id")

    def features(path):
        rows = list(csv.DictReader(open(path)))
        tokens = [[f"{c}={r[c]}" for c in hashed] for r in rows]
        return (FeatureHasher(n_features=2**18, input_type="string").transform(tokens),
                np.array([int(r["click"]) for r in rows]))

    X_test, y = features(tmp_path / "test.csv")
    peer = SGDClassifier(random_state=0).fit(*features(tmp_path / "train.csv"))
    # measured: dsvm 0.735 (averaged SGD; CoCoA+'s optimum 0.672), SGDClassifier's hinge
    # 0.67-0.71 over seeds (log_loss 0.73)
    assert _auc(y, scores) >= _auc(y, peer.decision_function(X_test))
