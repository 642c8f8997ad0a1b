"""Dask DataFrames, Parquet and pandas as users hold their data (issue #11, item 1)."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm import SVMClassifier

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def frame():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = np.where(X[:, 0] - 0.5 * X[:, 2] > 0, "yes", "no")
    return pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)


def _kw(client):
    return dict(random_state=0, client=client, max_epochs=3, tol=None, n_streams=2)


def test_a_dask_dataframe_trains_by_partitions_and_predicts_alike(frame, local_client):
    import dask.dataframe as dd

    ddf = dd.from_pandas(frame, npartitions=4)
    clf = SVMClassifier(**_kw(local_client)).fit(ddf, "label")  # y: a column name
    assert list(clf.feature_names_in_) == ["a", "b", "c"]
    assert clf.classes_.tolist() == ["no", "yes"]
    # equal to the dask arrays of the same partitions
    arrays = SVMClassifier(**_kw(local_client)).fit(
        ddf[["a", "b", "c"]].to_dask_array(lengths=True),
        ddf["label"].to_dask_array(lengths=True))
    np.testing.assert_array_equal(clf.coef_, arrays.coef_)
    labels = clf.predict(ddf[["a", "b", "c"]])
    assert labels.npartitions == ddf.npartitions  # a Dask Series with the same partitions
    np.testing.assert_array_equal(labels.compute().to_numpy(), clf.predict(frame[["a", "b", "c"]]))
    assert (labels.compute().to_numpy() == frame["label"].to_numpy()).mean() > 0.95
    with pytest.raises(ValueError, match="feature names should match"):
        clf.predict(ddf[["c", "b", "a"]])


def test_a_parquet_path_trains_through_dask_dataframe(frame, local_client, tmp_path):
    import dask.dataframe as dd

    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    from_path = SVMClassifier(**_kw(local_client)).fit(path, "label")
    from_frame = SVMClassifier(**_kw(local_client)).fit(dd.read_parquet(path), "label")
    np.testing.assert_array_equal(from_path.coef_, from_frame.coef_)
    with pytest.raises(ValueError, match="'c0l' is not one of the columns"):
        SVMClassifier(**_kw(local_client)).fit(path, "c0l")


def test_pandas_input_keeps_feature_names(frame):
    clf = SVMClassifier(random_state=0, max_epochs=3, tol=None).fit(frame[["a", "b", "c"]],
                                                                     frame["label"])
    assert list(clf.feature_names_in_) == ["a", "b", "c"]
    assert isinstance(clf.predict(frame[["a", "b", "c"]]), np.ndarray)
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(frame[["c", "b", "a"]])


def test_a_feature_column_neither_numbers_nor_text_is_named(frame, local_client):
    import dask.dataframe as dd
    import pandas as pd

    # (text and category columns are hashed: tests/test_dataframe_inputs.py)
    bad = dd.from_pandas(frame.assign(when=pd.Timestamp("2026-01-01")), npartitions=2)
    with pytest.raises(ValueError, match="'when' has dtype datetime64"):
        SVMClassifier(**_kw(local_client)).fit(bad, "label")


def test_text_in_a_number_column_of_one_parquet_file_is_named(frame, local_client, tmp_path):
    """One file of a folder holds the column as text: the frame's type comes from the first
    file, and the partition's values used to fail as "could not convert string to float:
    'forty'", naming neither the partition nor the column."""
    import dask.dataframe as dd

    parts = [frame.iloc[:100], frame.iloc[100:200].copy()]
    parts[1]["b"] = parts[1]["b"].astype(str)
    parts[1].iloc[7, parts[1].columns.get_loc("b")] = "forty"
    for i, part in enumerate(parts):
        part.to_parquet(tmp_path / f"p{i}.parquet")
    ddf = dd.read_parquet(str(tmp_path / "p*.parquet"))
    with pytest.raises(ValueError, match=r"partition 1, column 'b', row 7: 'forty' is not a "
                                         r"number"):
        SVMClassifier(**_kw(local_client)).fit(ddf[["a", "b", "c"]], ddf["label"])


@pytest.mark.realdata
@pytest.mark.slow
def test_a9a_from_parquet_equals_the_zarr_conversion(local_client, tmp_path):
    """a9a written to Parquet (numeric columns, 4,096 rows per file) and read as a Dask
    DataFrame trains to the model of the zarr conversion of the same rows in the same order."""
    import pandas as pd

    import dsvm
    from tests.conftest import load_libsvm

    X, y = load_libsvm("a9a/a9a.xz", 123)
    Xt, yt = load_libsvm("a9a/a9a.t.xz", 123)
    dense = X.toarray().astype(np.float32)
    folder = tmp_path / "a9a.parquet"
    folder.mkdir()
    for i, lo in enumerate(range(0, len(y), 4096)):
        part = pd.DataFrame(dense[lo:lo + 4096], columns=[f"f{j}" for j in range(123)])
        part.assign(label=y[lo:lo + 4096]).to_parquet(folder / f"part-{i:03d}.parquet")
    zarr = dsvm.write_arrays(tmp_path / "a9a.zarr", dense, y, chunk_rows=4096)
    kw = dict(alpha=1.0 / len(y), fit_intercept=False, max_epochs=10, tol=None,
              random_state=0, n_streams=2, client=local_client)
    from_parquet = SVMClassifier(**kw).fit(folder, "label")
    from_zarr = SVMClassifier(**kw).fit(zarr)
    np.testing.assert_allclose(from_parquet.coef_, from_zarr.coef_, rtol=1e-6, atol=1e-9)
    assert from_parquet.score(Xt.toarray(), yt) >= 0.845


def _merged(npartitions=(4, 3), n=2000):
    """Two Dask DataFrames joined on an id (a P2P hash join on a cluster), as users join a
    table of features to a table of labels; and the same join in pandas."""
    import dask.dataframe as dd
    import pandas as pd

    rng = np.random.default_rng(1)
    left = pd.DataFrame({"id": np.arange(n), "a": rng.normal(size=n), "b": rng.normal(size=n)})
    right = pd.DataFrame({"id": rng.permutation(n), "c": rng.normal(size=n)})
    right["label"] = np.where(right["c"] - left["a"].to_numpy()[right["id"]] > 0, "yes", "no")
    joined = dd.merge(dd.from_pandas(left, npartitions=npartitions[0]),
                      dd.from_pandas(right, npartitions=npartitions[1]), on="id")
    return joined, left.merge(right, on="id")


def test_a_merge_of_two_dask_dataframes_trains(local_client):
    """Each partition of a merge takes rows from every input partition: a task that reads
    one chunk cannot compute it alone (a P2P join runs only through the scheduler, and the fit
    failed with "P2P ... failed during transfer phase"). It is computed once on the cluster
    and held there for the fit; so are arrays cut from it."""
    joined, pandas_join = _merged()
    features = ["a", "b", "c"]
    clf = SVMClassifier(**_kw(local_client)).fit(joined[features + ["label"]], "label")
    truth = pandas_join["label"].to_numpy()
    assert (clf.predict(pandas_join[features]) == truth).mean() > 0.95
    arrays = SVMClassifier(**_kw(local_client)).fit(
        joined[features].to_dask_array(lengths=True), joined["label"].to_dask_array(lengths=True))
    assert (arrays.predict(pandas_join[features].to_numpy()) == truth).mean() > 0.95


def test_chunks_spanning_partitions_are_told_from_chunks_computed_alone(tmp_path):
    """Which collections are held on the cluster for a fit (merges, shuffles, set_index) and
    which are read chunk by chunk by the fit's tasks (reads, column steps, a join with a pandas
    frame, a neighbour's rows)."""
    import dask.dataframe as dd
    import pandas as pd

    from dsvm.distributed.dask_source import spans_partitions

    joined, pandas_join = _merged()
    frame = dd.from_pandas(pandas_join, npartitions=8)
    frame.to_parquet(tmp_path / "p")
    spanning = {"merge": joined, "set_index": frame.set_index("c"), "shuffle": frame.shuffle("a"),
                "merge of 2 partitions": _merged((2, 2))[0]}
    alone = {"read_parquet": dd.read_parquet(tmp_path / "p"),
             "assign": frame.assign(d=frame["a"] * 2), "concat": dd.concat([frame, frame]),
             "join with pandas": frame.merge(pd.DataFrame({"id": [0, 1], "e": [1.0, 2.0]}),
                                             on="id", how="left"),
             "map_overlap": frame["a"].map_overlap(lambda s: s, 1, 1),
             "one partition": dd.from_pandas(pandas_join, npartitions=1)}
    assert {k: spans_partitions(v) for k, v in spanning.items()} == dict.fromkeys(spanning, True)
    assert {k: spans_partitions(v) for k, v in alone.items()} == dict.fromkeys(alone, False)


def test_a_client_that_is_not_the_default_runs_the_frames_own_passes_too(frame, _session_client):
    """``client=`` a Client made with ``set_as_default=False`` (this session's is): only the
    fit's tasks used it, and the DataFrame's first pass (row counts, values checked) ran in
    this process, the rows passing through it."""
    import dask.dataframe as dd
    from distributed import get_task_stream

    ddf = dd.from_pandas(frame, npartitions=4)
    with get_task_stream(_session_client) as stream:
        SVMClassifier(**_kw(_session_client)).fit(ddf, "label")
    ran = {str(t["key"][0] if isinstance(t["key"], tuple) else t["key"]).split("-")[0]
           for t in stream.data}
    assert "_summary" in ran, sorted(ran)
