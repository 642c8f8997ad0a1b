"""Feature layouts (dsvm.data.feature_layout): the map is a permutation by descending
frequency, the stored rows are the renumbered rows (sorted within each row), the columns'
statistics follow them, and a rewrite of the dataset keeps the map."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dsvm.data import open_dataset, shuffle_dataset, write_arrays
from dsvm.data.feature_layout import frequency_layout, relabel
from tests.data.conftest import collect


def zipf_csr(n: int = 1500, n_features: int = 400, per_row: int = 8, seed: int = 0):
    """Rows whose feature ids follow a Zipf law scattered over the ids (as hashing does)."""
    rng = np.random.default_rng(seed)
    scatter = rng.permutation(n_features)
    ids = scatter[(rng.zipf(1.3, size=n * per_row) - 1) % n_features]
    rows = np.repeat(np.arange(n), per_row)
    X = sp.csr_matrix((rng.random(n * per_row).astype(np.float32) + 0.1, (rows, ids)),
                      shape=(n, n_features))
    X.sum_duplicates()
    y = np.where(X @ rng.normal(size=n_features) > 0, 1.0, -1.0)
    return X, y


def test_frequency_layout_is_a_permutation_by_descending_count_ties_by_id():
    counts = np.array([3, 0, 7, 3, 7, 1])
    layout = frequency_layout(counts)
    assert layout.order.tolist() == [2, 4, 0, 3, 5, 1]  # ties (7, 7) and (3, 3) by id
    assert layout.counts.tolist() == [7, 7, 3, 3, 1, 0]
    assert np.array_equal(layout.rank[layout.order], np.arange(6))
    w = np.arange(6.0)[None, :] * 10
    assert np.array_equal(layout.to_user(layout.to_stored(w)), w)


def test_stored_rows_are_the_renumbered_rows(tmp_path):
    X, y = zipf_csr()
    ds = write_arrays(tmp_path / "d.zarr", X, y, chunk_rows=400, feature_order="frequency")
    layout = ds.feature_layout()
    assert ds.feature_order == "frequency" and layout is not None
    counts = np.bincount(X.indices, minlength=X.shape[1])
    # the stored counts are the data's, in stored order, non-increasing
    assert np.array_equal(layout.counts, counts[layout.order])
    assert np.all(np.diff(layout.counts) <= 0)
    assert sorted(layout.order.tolist()) == list(range(X.shape[1]))
    Xs, ys, _ = collect(ds)
    assert Xs.has_sorted_indices
    assert np.array_equal(ys, y)
    # stored column j is user column order[j]
    assert np.array_equal(Xs.toarray(), X.toarray()[:, layout.order])
    stats = ds.feature_stats()
    assert np.allclose(stats.max_abs, abs(X).max(axis=0).toarray().ravel()[layout.order])
    # a fit reads the order and the recorded count of used features, not the counts
    used = int(np.count_nonzero(layout.counts))
    light = open_dataset(ds.url).feature_layout(counts=False)
    assert light.counts is None and light.n_used == used == layout.n_used
    assert np.array_equal(light.order, layout.order) and light.compact().width == used
    import zarr  # a store written before the count was recorded: its counts are read

    del zarr.open_group(str(ds.url), mode="r+")["feature_layout"].attrs["n_used"]
    older = open_dataset(ds.url).feature_layout(counts=False)
    assert older.counts is not None and older.n_used == used
    # a fit of the used features reads their statistics only: the same values
    assert 0 < used < X.shape[1]
    narrow = ds.feature_stats(width=used)
    for name in ("max_abs", "stored_count", "stored_sum_sq", "stored_sum"):
        assert getattr(narrow, name).shape == (used,)
        assert np.array_equal(getattr(narrow, name), getattr(stats, name)[:used])
    assert narrow.sums.keys() == stats.sums.keys() and narrow.y_max_abs == stats.y_max_abs
    assert [v for v in narrow.sums[0] if np.ndim(v) == 0] == \
        [v for v in stats.sums[0] if np.ndim(v) == 0]  # (rows, the target's sums)
    info = open_dataset(ds.url).info()
    assert info["feature_order"].startswith("frequency")
    plain = write_arrays(tmp_path / "p.zarr", X, y, chunk_rows=400)
    assert plain.feature_layout() is None and plain.info()["feature_order"].startswith("given")


def test_shuffle_keeps_the_layout(tmp_path):
    X, y = zipf_csr(n=600)
    ds = write_arrays(tmp_path / "d.zarr", X, y, chunk_rows=200, feature_order="frequency")
    out = shuffle_dataset(ds, tmp_path / "s.zarr", seed=3)
    assert out.feature_layout() is not None and out.feature_layout().same_as(ds.feature_layout())
    Xs, ys, _ = collect(out)
    # the same rows in another order: every row's user-id content is one of the input's
    user_rows = {tuple(np.flatnonzero(r)) for r in X.toarray()}
    back = Xs.toarray()[:, ds.feature_layout().rank]
    assert all(tuple(np.flatnonzero(r)) in user_rows for r in back)


def test_relabel_between_layouts_round_trips(tmp_path):
    X, y = zipf_csr(n=300)
    ds = write_arrays(tmp_path / "d.zarr", X, y, chunk_rows=300, feature_order="frequency")
    block = ds.read_chunk(0)
    to_user = relabel(ds.feature_layout(), None)
    assert relabel(None, None) is None and relabel(ds.feature_layout(), ds.feature_layout()) is None
    user = to_user.transform_block(block)
    assert np.array_equal(sp.csr_matrix((user.data, user.indices, user.indptr),
                                        shape=X.shape).toarray(), X.toarray())
    back = relabel(None, ds.feature_layout()).transform_block(user)
    assert np.array_equal(back.indices, block.indices) and np.array_equal(back.data, block.data)


def test_bad_feature_order_and_dense_layout_are_refused(tmp_path):
    X, y = zipf_csr(n=100)
    with pytest.raises(ValueError, match="feature_order must be one of .* got 'by-count'"):
        write_arrays(tmp_path / "a.zarr", X, y, feature_order="by-count")
    with pytest.raises(ValueError, match="renumbers the features of sparse data"):
        write_arrays(tmp_path / "b.zarr", X.toarray(), y, feature_order="frequency")
    assert not (tmp_path / "b.zarr").exists()


def test_a_wide_stores_statistics_are_read_by_their_used_columns_only(tmp_path):
    """Per-column statistics are stored in chunks of COLUMN_CHUNK columns, so that a fit of a
    renumbered store's used features reads the chunks of that prefix only."""
    import zarr

    from dsvm.data.writer import COLUMN_CHUNK

    n_features = 2 * COLUMN_CHUNK + 5
    X, y = zipf_csr(n=300, n_features=n_features, per_row=5)
    ds = write_arrays(tmp_path / "w.zarr", X, y, chunk_rows=100, feature_order="frequency")
    group = zarr.open_group(str(ds.url), mode="r")
    per_column = [a for _, a in group["feature_stats"].arrays() if a.shape == (n_features,)]
    assert len(per_column) >= 4 and all(a.chunks == (COLUMN_CHUNK,) for a in per_column)
    used = int(np.count_nonzero(ds.feature_layout().counts))
    assert used < COLUMN_CHUNK
    whole, narrow = ds.feature_stats(), ds.feature_stats(width=used)
    assert np.array_equal(narrow.stored_sum_sq, whole.stored_sum_sq[:used])
    assert np.array_equal(narrow.max_abs, whole.max_abs[:used])
