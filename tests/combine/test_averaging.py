"""Parameter averaging: weights, associativity, empty streams."""

from __future__ import annotations

import numpy as np
import pytest

from dsvm.combine import ParameterAveraging
from dsvm.solvers.base import PassStats, SolverState


def _state(rng, dtype=np.float64, avg=True) -> SolverState:
    return SolverState(
        coef=rng.normal(size=(3, 5)).astype(dtype),
        intercept=rng.normal(size=3).astype(dtype),
        t=float(rng.integers(1, 1000)),
        avg_coef=rng.normal(size=(3, 5)).astype(dtype) if avg else None,
        avg_intercept=rng.normal(size=3).astype(dtype) if avg else None,
        n_avg=float(rng.integers(1, 100)) if avg else 0.0,
        eta0=0.5,
        extra={"aux": rng.normal(size=4)},
    )


def _stats(rng) -> PassStats:
    n = int(rng.integers(1, 500))
    return PassStats(loss_sum=float(rng.random() * n), n_rows=n, weight_sum=float(n))


def _stream_from(start: SolverState, rng, steps: int) -> SolverState:
    """What a stream returns: its own iterate, t advanced by its steps, its running average
    extended from the shared start by its own (weighted) iterates."""
    s = start.copy()
    s.coef = rng.normal(size=start.coef.shape)
    s.intercept = rng.normal(size=start.intercept.shape)
    s.extra = {"aux": rng.normal(size=4)}
    s.t = start.t + steps
    own_weight = float(rng.integers(1, 50))
    own_mean = rng.normal(size=start.avg_coef.shape)
    s.n_avg = start.n_avg + own_weight
    s.avg_coef = (start.n_avg * start.avg_coef + own_weight * own_mean) / s.n_avg
    s.avg_intercept = start.avg_intercept.copy()
    s._own = (own_weight, own_mean)  # what a single pooled stream would have added
    return s


def test_iterates_averaged_by_rows_steps_and_averages_pooled():
    rng = np.random.default_rng(1)
    comb = ParameterAveraging()
    start = _state(rng)
    states = [_stream_from(start, rng, steps=int(rng.integers(10, 100))) for _ in range(4)]
    stats = [_stats(rng) for _ in range(4)]
    new, total = comb.finalize(comb.combine([comb.chunk(s, t) for s, t in zip(states, stats)]),
                               start)
    rows = np.array([t.n_rows for t in stats], dtype=float)
    for field in ("coef", "intercept"):
        expect = sum(r * getattr(s, field) for r, s in zip(rows, states)) / rows.sum()
        np.testing.assert_allclose(getattr(new, field), expect, rtol=1e-12)
    np.testing.assert_allclose(new.extra["aux"],
                               sum(r * s.extra["aux"] for r, s in zip(rows, states)) / rows.sum())
    # every stream's steps count: t = t0 + sum of the increments
    assert new.t == pytest.approx(start.t + sum(s.t - start.t for s in states))
    # the running average is the union of the start's and every stream's own iterates
    weights = [s._own[0] for s in states]
    assert new.n_avg == pytest.approx(start.n_avg + sum(weights))
    pooled = (start.n_avg * start.avg_coef + sum(w * s._own[1] for w, s in zip(weights, states)))
    np.testing.assert_allclose(new.avg_coef, pooled / new.n_avg, rtol=1e-10)
    np.testing.assert_allclose(new.avg_intercept, start.avg_intercept, rtol=1e-10)
    assert total.n_rows == sum(t.n_rows for t in stats)
    assert total.loss_sum == pytest.approx(sum(t.loss_sum for t in stats))
    assert new.eta0 == 0.5


def test_one_stream_is_the_identity():
    rng = np.random.default_rng(5)
    comb = ParameterAveraging()
    start = _state(rng)
    s = _stream_from(start, rng, steps=50)
    new, _ = comb.finalize(comb.combine([comb.chunk(s, _stats(rng))]), start)
    for field in ("coef", "intercept", "avg_coef", "avg_intercept"):
        np.testing.assert_allclose(getattr(new, field), getattr(s, field), rtol=1e-12)
    assert new.t == s.t and new.n_avg == pytest.approx(s.n_avg)


@pytest.mark.parametrize("split_every", [2, 3, 7])
def test_tree_shape_does_not_change_result(split_every):
    rng = np.random.default_rng(2)
    comb = ParameterAveraging()
    start = _state(rng)
    parts = [comb.chunk(_stream_from(start, rng, 20), _stats(rng)) for _ in range(7)]
    flat, _ = comb.finalize(comb.combine(parts), start)
    level = parts
    while len(level) > 1:
        level = [comb.combine(level[i:i + split_every]) for i in range(0, len(level), split_every)]
    tree, _ = comb.finalize(level[0], start)
    np.testing.assert_allclose(tree.coef, flat.coef, rtol=1e-13)
    np.testing.assert_allclose(tree.avg_coef, flat.avg_coef, rtol=1e-12)
    assert tree.t == flat.t


def test_empty_streams_are_ignored_and_all_empty_keeps_state():
    rng = np.random.default_rng(3)
    comb = ParameterAveraging()
    s = _state(rng)
    assert comb.chunk(s, PassStats()) is None
    moved = _stream_from(s, rng, 10)
    one, _ = comb.finalize(comb.combine([None, comb.chunk(moved, _stats(rng)), None]), s)
    np.testing.assert_allclose(one.coef, moved.coef)
    assert one.t == moved.t
    same, stats = comb.finalize(comb.combine([None, None]), s)
    np.testing.assert_array_equal(same.coef, s.coef)
    assert stats.n_rows == 0


def test_float32_state_stays_float32():
    rng = np.random.default_rng(4)
    comb = ParameterAveraging()
    s = _state(rng, dtype=np.float32, avg=False)
    new, _ = comb.finalize(comb.combine([comb.chunk(s, _stats(rng))]), s)
    assert new.coef.dtype == np.float32 and new.avg_coef is None


def _numpy_path(comb: ParameterAveraging, parts: list) -> object:
    """The combine through NumPy float64 sums (the path of partials that are sums already)."""
    return comb.combine([None if p is None else comb._sums(p) for p in parts])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("start_avg", ["average", "none", "zero weight"])
@pytest.mark.parametrize("n_streams", [2, 3])
def test_one_pass_combine_gives_the_numpy_values_bit_for_bit(dtype, start_avg, n_streams):
    """aggregate (at the root) and combine of lone streams run in one pass per array
    (dsvm.kernels.combine): the same bits as the NumPy sums, products and divisions."""
    rng = np.random.default_rng(11)
    comb = ParameterAveraging()
    start = _state(rng)
    start.coef = start.coef.astype(dtype)
    start.intercept = start.intercept.astype(dtype)
    streams = []
    for _ in range(n_streams):
        s = _stream_from(start, rng, steps=int(rng.integers(10, 100)))
        s.coef, s.intercept = s.coef.astype(dtype), s.intercept.astype(dtype)
        streams.append(s)
    if start_avg == "none":  # the start had no average yet (the first averaged epoch)
        start.avg_coef = start.avg_intercept = None
        start.n_avg = 0.0
    elif start_avg == "zero weight":  # no stream has averaged yet: the average stays 0
        start.n_avg = 0.0
        for s in streams:
            s.n_avg = 0.0
    parts = [comb.chunk(s, _stats(rng)) for s in streams] + [None]
    fused, fused_stats = comb.aggregate(parts, start)
    plain, plain_stats = comb.finalize(_numpy_path(comb, parts), start)
    for field in ("coef", "intercept", "avg_coef", "avg_intercept"):
        got, want = getattr(fused, field), getattr(plain, field)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(fused.extra["aux"], plain.extra["aux"])
    assert (fused.t, fused.n_avg, fused.eta0) == (plain.t, plain.n_avg, plain.eta0)
    assert fused_stats == plain_stats
    pooled, numpy_sums = comb.combine(parts), _numpy_path(comb, parts)
    assert pooled.single is None and pooled.n_streams == n_streams
    for got, want in ((pooled.iterate, numpy_sums.iterate), (pooled.average, numpy_sums.average)):
        assert got.keys() == want.keys()
        for k in got:
            np.testing.assert_array_equal(got[k], want[k])
    assert (pooled.rows, pooled.t_sum, pooled.n_avg_sum) == (
        numpy_sums.rows, numpy_sums.t_sum, numpy_sums.n_avg_sum)
