"""Streams by default: one per worker, unless the labels are clustered over too few chunks
(dsvm.training.streams), and the per-chunk class counts the writer keeps for that choice."""

from __future__ import annotations

import numpy as np
import pytest

import dsvm
from dsvm.training.streams import effective_chunks, streams_for_labels


def _sorted_problem(n: int = 8_000, seed: int = 0):
    """Two Gaussian classes (a quarter positives), their rows sorted by label, as a file
    sorted by label is converted: every positive in the first of 4 chunks."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.25).astype(np.float64)
    X = rng.normal(size=(n, 5)) + 1.2 * y[:, None] * np.array([1.0, -1.0, 0.5, 0.0, 0.8])
    order = np.argsort(-y, kind="stable")  # positives first
    return X[order].astype(np.float32), y[order]


def test_effective_chunks_counts_how_many_chunks_a_class_fills():
    counts = np.array([[10, 0], [10, 30], [10, 0], [10, 0]])
    np.testing.assert_allclose(effective_chunks(counts), [4.0, 1.0])


@pytest.mark.parametrize(("counts", "streams", "expected"), [
    # a class in one of 4 chunks (a file sorted by label): one stream
    ([[40485, 8280], [0, 48765], [0, 48765], [0, 48762]], 2, (1, 0)),
    # the same rows shuffled: every chunk holds both classes
    ([[10100, 38665], [10150, 38615], [10110, 38655], [10125, 38637]], 2, (2, None)),
    # sorted, but the rarer class fills 8 of 40 chunks: enough for 4 streams, not for 8
    ([[100, 0]] * 8 + [[0, 100]] * 32, 4, (4, None)),
    ([[100, 0]] * 8 + [[0, 100]] * 32, 8, (4, 0)),
    # in about 2 of 8 chunks (bench_order's large chunks), 1.3 (w8a as distributed, 2,000-row
    # chunks), 2 of 4 (Parquet files sorted by label, 54/46): one stream
    ([[262144, 0]] * 6 + [[26293, 235851], [0, 262144]], 2, (1, 1)),
    ([[740, 1260], [1781, 219]] + [[2000, 0]] * 23, 2, (1, 1)),
    ([[10000, 0], [10000, 0], [1764, 8236], [0, 10000]], 2, (1, 1)),
    # one stream asked or no counts kept: as given
    ([[10, 0], [0, 10]], 1, (1, None)),
])
def test_streams_for_labels(counts, streams, expected):
    assert streams_for_labels(np.array(counts), streams) == expected
    assert streams_for_labels(None, streams) == (streams, None)


def test_the_writer_keeps_each_chunks_class_counts(tmp_path):
    X, y = _sorted_problem(1_000)
    ds = dsvm.write_arrays(tmp_path / "s.zarr", X, y, chunk_rows=300)
    expected = [np.bincount(y[i:i + 300].astype(int), minlength=2) for i in range(0, 1_000, 300)]
    np.testing.assert_array_equal(ds.chunk_class_counts(), expected)
    # text labels: the counts follow the sorted names the stored codes stand for
    path = tmp_path / "t.csv"
    names = np.array(["no", "yes"])[y.astype(int)]
    path.write_text("label,a\n" + "".join(f"{n},{v:.3f}\n" for n, v in zip(names, X[:, 0])))
    with pytest.warns(dsvm.exceptions.DataOrderWarning, match="clustered"):
        text = dsvm.convert(path, tmp_path / "t.zarr", chunk_rows=300)
    assert text.label_names == ["no", "yes"]
    np.testing.assert_array_equal(text.chunk_class_counts(), expected)
    # a regression target (more distinct values than classes may have) keeps none
    Xr, _ = _sorted_problem(1_500)
    reg = dsvm.write_arrays(tmp_path / "r.zarr", Xr, np.linspace(0, 1, 1_500) ** 2 + 0.123,
                            chunk_rows=300)
    assert reg.chunk_class_counts() is None


@pytest.mark.slow
@pytest.mark.distributed
def test_a_store_sorted_by_label_trains_on_one_stream_as_its_shuffled_copy(local_client,
                                                                         tmp_path, capsys):
    X, y = _sorted_problem()
    sorted_ds = dsvm.write_arrays(tmp_path / "sorted.zarr", X, y, chunk_rows=2_000)
    perm = np.random.default_rng(1).permutation(len(y))
    shuffled_ds = dsvm.write_arrays(tmp_path / "shuffled.zarr", X[perm], y[perm],
                                    chunk_rows=2_000)
    Xt, yt = _sorted_problem(4_000, seed=1)
    for solver in ("sgd", "cocoa"):
        clf = dsvm.SVMClassifier(solver=solver, random_state=0, verbose=1).fit(sorted_ds)
        assert clf.n_streams_ == 1, solver
        assert "streams: 1 (not one per worker, 2)" in capsys.readouterr().err
        ref = dsvm.SVMClassifier(solver=solver, random_state=0).fit(shuffled_ds)
        assert ref.n_streams_ == 2
        assert clf.score(Xt, yt) >= ref.score(Xt, yt) - 0.01, solver
    # the grid of alphas takes the same stage
    cv = dsvm.SVMClassifierCV(n_alphas=2, max_epochs=3, random_state=0).fit(sorted_ds)
    assert cv.n_streams_ == 1
    # a number of streams asked for is kept
    assert dsvm.SVMClassifier(n_streams=2, max_epochs=2).fit(sorted_ds).n_streams_ == 2


@pytest.mark.slow
@pytest.mark.distributed
def test_one_parquet_file_per_class_trains_on_one_stream(local_client, tmp_path, capsys):
    """A DataFrame read from one Parquet file per class: each partition holds one class, and
    on 2 streams averaged SGD trained to the majority rate (skin: 0.7925)."""
    import dask.dataframe as dd
    import pandas as pd

    X, y = _sorted_problem()
    folder = tmp_path / "by_class"
    folder.mkdir()
    for label in (0.0, 1.0):
        rows = y == label
        frame = pd.DataFrame(X[rows], columns=[f"x{j}" for j in range(X.shape[1])])
        frame["label"] = np.where(y[rows] == 1.0, "yes", "no")  # text labels, as files have
        frame.to_parquet(folder / f"class{int(label)}.parquet")
    ddf = dd.read_parquet(folder)
    assert ddf.npartitions == 2
    features = [f"x{j}" for j in range(X.shape[1])]
    clf = dsvm.SVMClassifier(solver="sgd", random_state=0, verbose=1).fit(ddf[features],
                                                                           ddf["label"])
    assert clf.n_streams_ == 1
    # the line names the class by its label, not by the code it trains as
    err = capsys.readouterr().err
    assert "streams: 1 (not one per worker, 2)" in err, err
    assert "class 'yes'" in err or "class 'no'" in err, err
    Xt, yt = _sorted_problem(4_000, seed=1)
    perm = np.random.default_rng(1).permutation(len(y))
    ref = dsvm.SVMClassifier(solver="sgd", random_state=0, n_streams=1).fit(X[perm], y[perm])
    assert clf.score(Xt, np.where(yt == 1.0, "yes", "no")) >= ref.score(Xt, yt) - 0.01
    assert list(clf.classes_) == ["no", "yes"]


def test_n_workers_given_for_arrays_runs_that_many_streams_here():
    """In-memory arrays train in this process whatever n_workers says: n_workers=2 trained
    one stream, silently, where a cluster of 2 runs two. It now sets the default streams,
    run in threads: the model of n_streams=2."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 6))
    y = np.where(X @ np.arange(1.0, 7.0) + rng.normal(size=4000) > 0, 1, -1)
    kw = dict(random_state=0, max_epochs=3, tol=None)
    by_workers = dsvm.SVMClassifier(n_workers=2, **kw).fit(X, y)
    by_streams = dsvm.SVMClassifier(n_streams=2, **kw).fit(X, y)
    one = dsvm.SVMClassifier(**kw).fit(X, y)
    assert (by_workers.n_streams_, by_streams.n_streams_, one.n_streams_) == (2, 2, 1)
    np.testing.assert_array_equal(by_workers.coef_, by_streams.coef_)
    assert not np.array_equal(by_workers.coef_, one.coef_)
