"""The row fold (dsvm.data.fold): which rows of every chunk are held out of training."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm.data.fold import RowFold, fold_for, splitmix64
from dsvm.data.sources import ArraySource


def test_splitmix64_matches_its_reference_values():
    """The finaliser of Java's SplittableRandom / Vigna's splitmix64.c: seeded with 0, its
    first outputs are mix(0 + k * golden) for k = 1, 2, 3."""
    golden = 0x9E3779B97F4A7C15
    state = np.array([(k * golden) % 2 ** 64 for k in (1, 2, 3)], dtype=np.uint64)
    assert [int(v) for v in splitmix64(state)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


@pytest.mark.parametrize("fraction", [0.05, 0.1, 0.3])
def test_the_fraction_is_honoured_over_chunks_and_within_each(fraction):
    fold = RowFold(seed=12345, fraction=fraction)
    counts = [fold.held_mask(c, 4096).sum() for c in range(50)]
    n = 50 * 4096
    # binomial(n, fraction): 5 standard deviations
    assert abs(sum(counts) - fraction * n) < 5 * np.sqrt(n * fraction * (1 - fraction))
    sd = np.sqrt(4096 * fraction * (1 - fraction))
    assert all(abs(k - fraction * 4096) < 6 * sd for k in counts)


def test_the_held_rows_do_not_depend_on_grouping_and_change_with_the_seed():
    """A chunk's held rows are the same alone, in a window with others in any order, and
    asked for again; another seed or chunk draws others."""
    fold = RowFold(seed=7, fraction=0.2)
    sizes = {0: 300, 1: 250, 2: 280, 3: 301}
    alone = {c: fold.held_mask(c, n) for c, n in sizes.items()}
    for chunks in ([0, 1, 2, 3], [3, 1], [2, 0, 3]):
        window = fold.window_mask(chunks, [sizes[c] for c in chunks])
        np.testing.assert_array_equal(window, np.concatenate([alone[c] for c in chunks]))
    np.testing.assert_array_equal(RowFold(seed=7, fraction=0.2).held_mask(2, 280), alone[2])
    np.testing.assert_array_equal(fold.held_rows(1, 250), np.flatnonzero(alone[1]))
    # the first rows of a longer chunk: the same decisions (a row's own hash)
    np.testing.assert_array_equal(fold.held_mask(1, 500)[:250], alone[1])
    assert not np.array_equal(RowFold(seed=8, fraction=0.2).held_mask(0, 300), alone[0])
    assert not np.array_equal(fold.held_mask(4, 300), alone[0])


def test_a_larger_fraction_holds_out_a_superset():
    small = RowFold(seed=1, fraction=0.1).held_mask(0, 5000)
    large = RowFold(seed=1, fraction=0.2).held_mask(0, 5000)
    assert np.all(large[small]) and large.sum() > small.sum()


def test_a_fraction_outside_the_open_unit_interval_is_refused():
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=f"fraction.*{bad!r}"):
            RowFold(seed=0, fraction=bad)


@pytest.mark.parametrize("n_rows", [2, 10, 27, 1000])
def test_small_data_holds_out_exactly_its_share_and_leaves_a_row_to_train(n_rows):
    """Below EXACT_BELOW rows the fold holds out max(1, round(0.1 n)) rows, at most n - 1: by
    the hash alone, 10-30 rows often held out none (scikit-learn's checks failed)."""
    X, y = np.zeros((n_rows, 2)), np.arange(n_rows) % 2
    for chunk_rows in (3, n_rows):
        source = ArraySource(X, y, None, chunk_rows=chunk_rows)
        fold = fold_for(7, 0.1, source)
        held = sum(len(fold.held_rows(c, source.chunk_n_rows(c))) for c in range(source.n_chunks))
        assert held == min(n_rows - 1, max(1, round(0.1 * n_rows)))
    # a row's fate still depends on (seed, chunk, row) only: the same cutoff decides every chunk
    whole = fold_for(7, 0.1, ArraySource(X, y, None, chunk_rows=n_rows))
    assert whole.held_mask(0, n_rows).sum() == min(n_rows - 1, max(1, round(0.1 * n_rows)))
