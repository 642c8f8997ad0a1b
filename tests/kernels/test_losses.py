"""Losses: value/derivative tables, finite differences, the code table, reference agreement."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dsvm.kernels.losses import (
    LOSS_AT_ZERO,
    LOSS_CODES,
    hinge_dloss,
    hinge_loss,
    logistic_dloss,
    logistic_loss,
    loss_code,
    loss_deriv,
    loss_value,
    squared_hinge_dloss,
    squared_hinge_loss,
)
from tests.reference import dloss_ref, loss_ref

LOG2 = math.log(2.0)

# (p, y, loss, dloss) rows, computed by hand from the definitions.
TABLES = {
    "hinge": [
        (0.0, 1.0, 1.0, -1.0),
        (0.0, -1.0, 1.0, 1.0),
        (0.5, 1.0, 0.5, -1.0),
        (1.0, 1.0, 0.0, 0.0),  # at the kink: Pegasos' convention (only 1 - z > 0 counts)
        (2.0, 1.0, 0.0, 0.0),
        (-2.0, 1.0, 3.0, -1.0),
        (0.5, -1.0, 1.5, 1.0),
        (-1.5, -1.0, 0.0, 0.0),
    ],
    "squared_hinge": [
        (0.0, 1.0, 1.0, -2.0),
        (0.5, 1.0, 0.25, -1.0),
        (1.0, 1.0, 0.0, 0.0),
        (-1.0, 1.0, 4.0, -4.0),
        (0.5, -1.0, 2.25, 3.0),
        (-3.0, -1.0, 0.0, 0.0),
    ],
    "logistic": [
        (0.0, 1.0, LOG2, -0.5),
        (0.0, -1.0, LOG2, 0.5),
        (1.0, 1.0, math.log1p(math.exp(-1.0)), -1.0 / (1.0 + math.e)),
        (-1.0, 1.0, math.log1p(math.e), -math.e / (1.0 + math.e)),
        (800.0, 1.0, 0.0, 0.0),  # far on the right side: no overflow
        (-800.0, 1.0, 800.0, -1.0),  # far on the wrong side: log(1 + e^800) = 800
    ],
}
SCALAR = {
    "hinge": (hinge_loss, hinge_dloss),
    "squared_hinge": (squared_hinge_loss, squared_hinge_dloss),
    "logistic": (logistic_loss, logistic_dloss),
}


def test_code_table_is_stable():
    assert LOSS_CODES == {
        "hinge": 0, "squared_hinge": 1, "logistic": 2,
        "smoothed_hinge": 3, "epsilon_insensitive": 4, "squared": 5,
    }
    assert LOSS_AT_ZERO == {
        "hinge": 1.0, "squared_hinge": 1.0, "logistic": LOG2, "smoothed_hinge": 1.0,
        "squared": 1.0,
    }


@pytest.mark.parametrize("name", sorted(TABLES))
def test_loss_tables(name):
    f, df = SCALAR[name]
    code = LOSS_CODES[name]
    for p, y, expected, dexpected in TABLES[name]:
        assert f(p, y) == pytest.approx(expected, rel=1e-12, abs=1e-300)
        assert df(p, y) == pytest.approx(dexpected, rel=1e-12, abs=1e-300)
        assert loss_value(code, p, y) == f(p, y)
        assert loss_deriv(code, p, y) == df(p, y)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_matches_reference(name):
    rng = np.random.default_rng(0)
    code = LOSS_CODES[name]
    p = rng.normal(scale=3.0, size=500)
    y = rng.choice([-1.0, 1.0], size=500)
    got = np.array([loss_value(code, pi, yi) for pi, yi in zip(p, y)])
    dgot = np.array([loss_deriv(code, pi, yi) for pi, yi in zip(p, y)])
    np.testing.assert_allclose(got, loss_ref(name, p, y), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(dgot, dloss_ref(name, p, y), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_finite_difference_gradient(name):
    """dloss agrees with central differences of loss away from the hinge kinks."""
    rng = np.random.default_rng(1)
    code = LOSS_CODES[name]
    p = rng.uniform(-4.0, 4.0, size=2000)
    y = rng.choice([-1.0, 1.0], size=2000)
    keep = np.abs(1.0 - y * p) > 1e-3  # the kink at y p = 1 has no derivative
    p, y = p[keep], y[keep]
    h = 1e-6
    fd = np.array(
        [
            (loss_value(code, pi + h, yi) - loss_value(code, pi - h, yi)) / (2 * h)
            for pi, yi in zip(p, y)
        ]
    )
    an = np.array([loss_deriv(code, pi, yi) for pi, yi in zip(p, y)])
    err = np.abs(fd - an)
    assert err.max() < 1e-6
    assert err.mean() < 1e-8


@pytest.mark.parametrize("name", sorted(TABLES))
def test_nan_margin_propagates(name):
    """A NaN margin must not look like a row with zero loss: NaN loss, non-zero derivative."""
    code = LOSS_CODES[name]
    for y in (-1.0, 1.0):
        assert math.isnan(loss_value(code, math.nan, y))
        assert loss_deriv(code, math.nan, y) != 0.0


def test_hinge_subgradient_is_in_the_subdifferential_at_the_kink():
    # d/dp max(0, 1 - y p) at y p = 1 is the interval between -y and 0; 0 is a valid choice.
    for y in (-1.0, 1.0):
        g = hinge_dloss(y * 1.0, y)
        assert min(-y, 0.0) <= g <= max(-y, 0.0)


def test_loss_code_rejects_unknown_names():
    assert loss_code("logistic") == 2
    expected = r"Got loss 'huber'; expected one of \['epsilon_insensitive', 'hinge', "
    with pytest.raises(ValueError, match=expected):
        loss_code("huber")
