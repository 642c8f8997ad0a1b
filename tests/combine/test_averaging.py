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


def test_weighted_mean_of_every_field():
    rng = np.random.default_rng(1)
    comb = ParameterAveraging()
    states = [_state(rng) for _ in range(4)]
    stats = [_stats(rng) for _ in range(4)]
    new, total = comb.finalize(comb.combine([comb.chunk(s, t) for s, t in zip(states, stats)]),
                               states[0])
    wts = np.array([t.n_rows for t in stats], dtype=float)
    for field in ("coef", "intercept", "avg_coef", "avg_intercept"):
        expect = sum(wt * getattr(s, field) for wt, s in zip(wts, states)) / wts.sum()
        np.testing.assert_allclose(getattr(new, field), expect, rtol=1e-12)
    np.testing.assert_allclose(new.t, np.dot(wts, [s.t for s in states]) / wts.sum())
    np.testing.assert_allclose(new.extra["aux"],
                               sum(wt * s.extra["aux"] for wt, s in zip(wts, states)) / wts.sum())
    assert total.n_rows == sum(t.n_rows for t in stats)
    assert total.loss_sum == pytest.approx(sum(t.loss_sum for t in stats))
    assert new.eta0 == 0.5


@pytest.mark.parametrize("split_every", [2, 3, 7])
def test_tree_shape_does_not_change_result(split_every):
    rng = np.random.default_rng(2)
    comb = ParameterAveraging()
    parts = [comb.chunk(_state(rng), _stats(rng)) for _ in range(7)]
    flat, _ = comb.finalize(comb.combine(parts), _state(rng))
    level = parts
    while len(level) > 1:
        level = [comb.combine(level[i:i + split_every]) for i in range(0, len(level), split_every)]
    tree, _ = comb.finalize(level[0], _state(rng))
    np.testing.assert_allclose(tree.coef, flat.coef, rtol=1e-13)
    np.testing.assert_allclose(tree.avg_coef, flat.avg_coef, rtol=1e-13)


def test_empty_streams_are_ignored_and_all_empty_keeps_state():
    rng = np.random.default_rng(3)
    comb = ParameterAveraging()
    s = _state(rng)
    assert comb.chunk(s, PassStats()) is None
    one, _ = comb.finalize(comb.combine([None, comb.chunk(s, _stats(rng)), None]), s)
    np.testing.assert_allclose(one.coef, s.coef)
    same, stats = comb.finalize(comb.combine([None, None]), s)
    np.testing.assert_array_equal(same.coef, s.coef)
    assert stats.n_rows == 0


def test_float32_state_stays_float32():
    rng = np.random.default_rng(4)
    comb = ParameterAveraging()
    s = _state(rng, dtype=np.float32, avg=False)
    new, _ = comb.finalize(comb.combine([comb.chunk(s, _stats(rng))]), s)
    assert new.coef.dtype == np.float32 and new.avg_coef is None
