"""DataFrames as users build them (issue #25): read_parquet with a column selection and filters,
read_csv, merge / repartition / dropna (unknown divisions and lengths), category and text
columns, pyarrow-backed and nullable dtypes, a one-column frame as y.

X and y cut from one frame must line up row for row whatever dask-expr does to the partitions;
the frames here are labelled ``label = "yes" if a > 0 else "no"`` with ``a`` the first feature,
so that every chunk read can be checked row by row. Text and category columns are hashed as
``dsvm convert --categorical`` hashes them.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning

from dsvm import SVMClassifier
from dsvm.training.inputs import hashed_rows, source_of

pytestmark = pytest.mark.timeout(240)
FEATURES = ["a", "b", "n", "city", "dev"]


def _frame(n=1200, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    return pd.DataFrame({
        "id": np.arange(n),
        "a": a,
        "b": pd.array(rng.normal(size=n), dtype="Float64"),
        "n": pd.array(rng.integers(0, 5, n), dtype="int64[pyarrow]"),
        "city": pd.Categorical(rng.choice(["paris", "oslo", "lima"], n)),
        "dev": pd.array(rng.choice(["x", "y", None], n), dtype="string[pyarrow]"),
        "label": np.where(a > 0, "yes", "no"),
    })


@pytest.fixture(scope="module")
def parquet_folder(tmp_path_factory):
    """8 Parquet files of 150 rows: dask-expr fuses them differently for each column set."""
    folder = tmp_path_factory.mktemp("frames") / "parts"
    folder.mkdir()
    frame = _frame()
    for i in range(8):
        frame.iloc[150 * i:150 * (i + 1)].to_parquet(folder / f"part-{i}.parquet")
    return folder


def _lines_up(X, y, n_rows):
    """Every chunk of the source of (X, y): its labels are its first feature's sign."""
    source, classes = source_of(X, y)
    assert source.n_samples == n_rows
    for i in range(source.n_chunks):
        block = source.read_chunk(i)
        first = block.to_matrix()[:, [0]]
        first = first.toarray().ravel() if hasattr(first, "toarray") else first.ravel()
        np.testing.assert_array_equal(block.y, (first > 0).astype(float))
    return source


def test_frames_as_users_build_them_line_up_row_for_row(parquet_folder, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.read_parquet(parquet_folder)
    # the case: projected read (dask-expr fused 8 files into 4 for the row counts)
    source = _lines_up(ddf[["a", "b", "n"]], ddf["label"], 1200)
    assert source.n_features == 3 and source.feature_names == ["a", "b", "n"]
    _lines_up(ddf[["a", "b"]], ddf[["label"]], 1200)  # a one-column frame as y
    weighted, _ = source_of(ddf[["a"]], ddf["label"], ddf["a"].abs() + 1)
    for i in range(weighted.n_chunks):
        block = weighted.read_chunk(i)
        np.testing.assert_array_equal(block.sample_weight, np.abs(block.X[:, 0]) + 1)
    filtered = dd.read_parquet(parquet_folder, columns=["a", "n", "label", "id"],
                               filters=[("id", ">=", 500)])
    _lines_up(filtered[["a", "n"]], filtered["label"], 700)
    _frame().to_csv(tmp_path / "t.csv", index=False)
    csv = dd.read_csv(tmp_path / "t.csv", blocksize=20_000)
    hashed = _lines_up(csv[FEATURES], csv["label"], 1200)  # text columns: hashed, CSR
    assert hashed.n_features == 3 + 2**18
    lookup = _frame()[["id"]].iloc[::3].assign(w=1.0)
    merged = ddf.merge(lookup, on="id").dropna()  # unknown divisions and lengths
    _lines_up(merged[["a", "w"]], merged["label"], len(_frame().merge(lookup).dropna()))
    arrays = _frame()[["a", "b"]].to_numpy(dtype=float)  # a frame of an array: columns 0, 1
    unnamed = dd.from_pandas(pytest.importorskip("pandas").DataFrame(arrays), npartitions=2)
    bools = _lines_up(unnamed[[0, 1]], unnamed[0] > 0, 1200)
    assert bools.labels.tolist() == [0.0, 1.0]  # counted by the first pass: no second one
    fewer = ddf.repartition(npartitions=3)
    _lines_up(fewer[["a"]], fewer["label"], 1200)
    # a Dask array X beside a Dask Series y pairs rows by position, as NumPy's does (it was an
    # AttributeError: 'Series' object has no attribute 'chunks'), whatever the partitions
    array = ddf[["a", "b"]].values  # (unknown chunk lengths, counted on the cluster)
    _lines_up(array, ddf["label"], 1200)
    weighted, _ = source_of(array, fewer[["label"]], fewer["a"].abs() + 1)
    for i in range(weighted.n_chunks):
        block = weighted.read_chunk(i)
        np.testing.assert_array_equal(block.sample_weight, np.abs(block.X[:, 0]) + 1)
        np.testing.assert_array_equal(block.y, (block.X[:, 0] > 0).astype(float))
    with pytest.raises(ValueError, match=r"y is a DataFrame of 2 columns \['label', 'a'\]"):
        source_of(array, ddf[["label", "a"]])
    with pytest.raises(ValueError, match=r"X and y are Dask collections that do not come from "
                                         r"one DataFrame \(X: 8 partitions, y: 3"):
        source_of(ddf[["a"]], fewer["label"])
    other = dd.from_pandas(_frame(seed=1), npartitions=8)
    with pytest.raises(ValueError, match="do not come from one DataFrame"):
        source_of(ddf[["a"]], other["label"])


def test_missing_values_are_named_or_give_no_token():
    dd = pytest.importorskip("dask.dataframe")
    frame = _frame(n=300)
    frame.loc[170, "b"] = None  # pd.NA in a nullable Float64 feature
    ddf = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(ValueError, match=r"partition 1, column 'b', row 20: a missing value "
                                         r"\(NaN/NA\); fill or drop"):
        source_of(ddf[["a", "b"]], ddf["label"])
    with pytest.raises(ValueError, match=r"column 'b', row 170: a missing value"):
        SVMClassifier(max_epochs=1).fit(frame[FEATURES], frame["label"])
    counts = frame["n"].astype("Int64").where(frame.index != 5)  # pd.NA in a nullable Int64
    with pytest.raises(ValueError, match=r"partition 0, column 'n', row 5: a missing value"):
        source_of(dd.from_pandas(frame.assign(n=counts), npartitions=2)[["a", "n"]],
                  ddf["label"].to_dask_array(lengths=True))
    labels = frame["label"].where(frame.index != 30, None)
    with pytest.raises(ValueError, match=r"partition 0, row 30: missing label"):
        source_of(ddf[["a"]], dd.from_pandas(frame.assign(label=labels), npartitions=2)["label"])
    # a missing text value (None, NA, "") is no token, as convert's; the other column's stays
    rows = hashed_rows(frame[["a", "city", "dev"]], {
        "categorical": ["city", "dev"], "numeric": ["a"], "hash_bits": 18})
    missing = frame["dev"].isna().to_numpy()
    assert missing.any() and (rows.getnnz(axis=1)[missing] == 2).all()
    assert (rows.getnnz(axis=1)[~missing] == 3).all()


def test_a_pandas_frame_is_hashed_as_convert_hashes_the_same_rows(tmp_path):
    """A pandas category column was trained as its ordinal code; text and category columns
    are now hashed into the features ``convert --categorical`` gives the same rows."""
    import dsvm

    frame = _frame(n=600)
    clf = SVMClassifier(random_state=0, max_epochs=3, tol=None).fit(frame[FEATURES],
                                                                    frame["label"])
    assert clf.n_features_in_ == 3 + 2**18
    assert clf.hashing_["categorical"] == ["city", "dev"] and clf.hashing_["numeric"] == [
        "a", "b", "n"]
    # the frame's columns are its feature_names_in_, as a Dask frame's are (they were none)
    assert list(clf.feature_names_in_) == FEATURES
    partial = SVMClassifier(random_state=0).partial_fit(frame[FEATURES], frame["label"],
                                                        classes=["no", "yes"])
    assert list(partial.feature_names_in_) == FEATURES
    assert clf.score(frame[FEATURES], frame["label"]) > 0.9
    with pytest.warns(DataConversionWarning):  # scikit-learn's word on a (n, 1) y
        one_column = SVMClassifier(random_state=0, max_epochs=3, tol=None).fit(
            frame[FEATURES], frame[["label"]])
    np.testing.assert_array_equal(one_column.coef_, clf.coef_)
    frame.to_parquet(tmp_path / "t.parquet")
    ds = dsvm.convert(tmp_path / "t.parquet", tmp_path / "t.zarr", label_column="id",
                      drop=["label"], categorical=["city", "dev"], dtype="float64")
    assert {k: ds.attrs["hashing"][k] for k in clf.hashing_} == clf.hashing_
    converted = sp.vstack([ds.read_chunk(i).to_matrix() for i in range(ds.n_chunks)])
    ours = hashed_rows(frame[FEATURES], clf.hashing_)
    assert converted.shape == ours.shape and ours.nnz > 3 * 600
    assert abs(converted - ours).max() == 0
    # predicting a frame applies the model's hashing; its columns must be there
    np.testing.assert_array_equal(clf.decision_function(frame[FEATURES]),
                                  clf.decision_function(hashed_rows(frame[FEATURES],
                                                                    clf.hashing_)))
    with pytest.raises(ValueError, match="lacks column 'dev'"):
        clf.predict(frame[["a", "b", "n", "city"]])


@pytest.mark.distributed
@pytest.mark.slow
def test_dask_frames_train_on_a_cluster_and_predict_alike(parquet_folder, process_cluster):
    """The issue's read_parquet -> select columns -> fit, and text and category columns
    (hashed) on a cluster of worker processes (the session's: no cluster started for this);
    a model trained from a Dask DataFrame predicts a Dask or a pandas DataFrame alike."""
    dd = pytest.importorskip("dask.dataframe")
    from distributed import Client

    ddf = dd.read_parquet(parquet_folder)
    with Client(process_cluster.address) as client:
        kw = dict(random_state=0, client=client, max_epochs=2, tol=None, n_streams=2)
        numeric = SVMClassifier(**kw).fit(ddf[["a", "b", "n"]], ddf["label"])
        assert list(numeric.feature_names_in_) == ["a", "b", "n"]
        assert numeric.score(ddf[["a", "b", "n"]], ddf["label"]) > 0.9
        hashed = SVMClassifier(**kw).fit(ddf[FEATURES], ddf["label"])
        assert hashed.n_features_in_ == 3 + 2**18
        assert hashed.hashing_["categorical"] == ["city", "dev"]
        frame = _frame()
        from_dask = hashed.decision_function(ddf[FEATURES]).compute().to_numpy()
        np.testing.assert_allclose(from_dask, hashed.decision_function(frame[FEATURES]))
        labels = hashed.predict(ddf[FEATURES]).compute().to_numpy()
        assert (labels == frame["label"]).mean() > 0.9
        # raw units beside the text columns: the fit scales, and its map over the 2^18 hashed
        # columns is large enough to be broadcast; the frame's graph went with it as
        # persisted futures that nothing held ("lost dependencies" in the first task)
        raw = ddf[FEATURES].assign(a=ddf["a"] * 1000)
        scaled = SVMClassifier(**kw).fit(raw, ddf["label"])
        assert scaled.scaling_ is not None
        assert scaled.score(raw, ddf["label"]) > 0.9


def test_sparse_dask_chunks_are_not_sized_as_dense_ones():
    """A hashed DataFrame's rows are CSR chunks of 2^18 columns: dask's nbytes counts them
    dense (2 MB a row), which capped every such fit's shuffle window at one chunk (a sorted
    frame trained as if unshuffled) and made the workers' memory check refuse it. Their size
    is not known before they are read: the window is the default one."""
    import math

    import dask.array as da
    import scipy.sparse as sp

    from dsvm.distributed.dask_source import DaskSource
    from dsvm.training.window import DEFAULT_WINDOW, window_for

    width = 2**18
    X = da.zeros((8000, width), chunks=(1000, -1)).map_blocks(
        sp.csr_matrix, meta=sp.csr_matrix((0, width)))  # (never computed here)
    sparse = DaskSource(X, da.ones(8000, chunks=1000))
    assert math.isnan(sparse.nbytes)
    assert window_for(None, sparse, n_streams=2).held == min(DEFAULT_WINDOW, 4)
    dense = DaskSource(da.zeros((8000, 64), chunks=(1000, -1)), da.ones(8000, chunks=1000))
    assert dense.nbytes == 8000 * 64 * 8


def test_the_first_pass_counts_each_chunks_classes_and_none_counts_them_again(parquet_folder,
                                                                               monkeypatch):
    """The frame's first pass (rows, values checked) counts each partition's classes too: the
    streams' count per chunk and the totals (``class_weight="balanced"``, the majority rate a
    fit's outcome is judged by) were two more reads of every partition."""
    dd = pytest.importorskip("dask.dataframe")
    import dsvm.distributed.client as client_module

    ddf = dd.read_parquet(parquet_folder)
    sources = [source_of(ddf[["a", "b"]], ddf["label"])[0],      # text labels: their codes
               source_of(ddf[["a", "b"]], ddf["a"] > 0.5)[0]]    # numbers
    monkeypatch.setattr(client_module, "compute_watched",
                        lambda *a, **k: pytest.fail("a pass of its own to count the classes"))
    for source in sources:
        ys = [source.read_chunk(i).y for i in range(source.n_chunks)]
        per_chunk = np.array([[np.sum(y == c) for c in (0.0, 1.0)] for y in ys])
        np.testing.assert_array_equal(source.chunk_class_counts(), per_chunk)
        labels, totals = source.label_counts()
        assert labels.tolist() == [0.0, 1.0] and totals.tolist() == per_chunk.sum(0).tolist()


def test_a_graph_of_reads_ships_to_the_workers_and_only_data_in_a_graph_is_persisted(
        parquet_folder, monkeypatch):
    """A DataFrame of many files has a large graph but holds no rows: persisting it (as
    arrays built from memory are) held the whole dataset in the workers' memory; its graph
    is broadcast instead and each task reads its own files."""
    dd = pytest.importorskip("dask.dataframe")
    from dsvm.distributed import engine

    monkeypatch.setattr(engine, "BROADCAST_ABOVE_BYTES", 10_000)  # (8 files make no MB)
    files = dd.read_parquet(parquet_folder)
    reads, _ = source_of(files[["a", "b"]], files["label"])
    in_graph, _ = source_of(dd.from_pandas(_frame()[["a", "b"]], npartitions=8),
                            dd.from_pandas(_frame()["label"], npartitions=8))
    assert engine._pickled_size(in_graph) > engine._pickled_size(reads) > 10_000
    assert not engine._holds_its_data(reads) and engine._holds_its_data(in_graph)
