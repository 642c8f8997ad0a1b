"""The losses with a parameter (smoothed hinge, epsilon-insensitive) and the squared loss:
hand tables, the NumPy reference, finite differences, NaN propagation, the NumPy twin."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dsvm.kernels.losses import LOSS_CODES, loss_deriv, loss_deriv_p, loss_value, loss_value_p
from dsvm.solvers.targets import LossSpec, pointwise_losses
from tests.reference import dloss_ref, loss_ref

NEW = ("smoothed_hinge", "epsilon_insensitive", "squared")

# (p, y, a, loss, dloss) by hand.
TABLES = {
    "smoothed_hinge": [
        (2.0, 1.0, 0.5, 0.0, 0.0),  # beyond the margin
        (1.0, 1.0, 0.5, 0.0, 0.0),  # at the margin
        (0.75, 1.0, 0.5, 0.0625, -0.5),  # 1 - z = 0.25 < mu: 0.25^2 / (2 * 0.5), -y * 0.25 / 0.5
        (0.0, 1.0, 0.5, 0.75, -1.0),  # linear part: 1 - mu / 2
        (-1.0, 1.0, 0.5, 1.75, -1.0),
        (0.25, -1.0, 0.5, 1.0, 1.0),  # 1 - z = 1.25: 1.25 - 0.25
        (0.0, 1.0, 0.0, 1.0, -1.0),  # mu = 0: the hinge
    ],
    "epsilon_insensitive": [
        (0.0, 1.0, 0.5, 0.5, -1.0),
        (1.0, 0.0, 0.5, 0.5, 1.0),
        (0.9, 1.0, 0.5, 0.0, 0.0),  # inside the tube
        (1.5, 1.0, 0.5, 0.0, 0.0),  # on the tube's edge: subgradient 0 (ASSET's Table 1)
        (-3.0, 2.0, 0.0, 5.0, -1.0),
    ],
    "squared": [
        (0.0, 1.0, 0.0, 1.0, -2.0),
        (3.0, 1.0, 0.0, 4.0, 4.0),
        (-0.5, -1.0, 0.0, 0.25, 1.0),
        (2.5, 2.5, 0.0, 0.0, 0.0),
    ],
}


@pytest.mark.parametrize("name", NEW)
def test_tables(name):
    code = LOSS_CODES[name]
    for p, y, a, expected, dexpected in TABLES[name]:
        assert loss_value_p(code, p, y, a) == pytest.approx(expected, rel=1e-12, abs=1e-15)
        assert loss_deriv_p(code, p, y, a) == pytest.approx(dexpected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("a", [0.0, 0.3, 2.0])
def test_matches_reference_and_numpy_twin(name, a):
    rng = np.random.default_rng(0)
    code = LOSS_CODES[name]
    p = rng.normal(scale=3.0, size=500)
    y = rng.choice([-1.0, 1.0], size=500) if name == "smoothed_hinge" else rng.normal(size=500)
    got = np.array([loss_value_p(code, pi, yi, a) for pi, yi in zip(p, y)])
    dgot = np.array([loss_deriv_p(code, pi, yi, a) for pi, yi in zip(p, y)])
    np.testing.assert_allclose(got, loss_ref(name, p, y, a), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(dgot, dloss_ref(name, p, y, a), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(
        pointwise_losses(LossSpec(name, a), p, y), loss_ref(name, p, y, a), rtol=1e-13, atol=1e-15
    )


def test_old_losses_through_the_numpy_twin():
    rng = np.random.default_rng(3)
    p, y = rng.normal(size=200), rng.choice([-1.0, 1.0], size=200)
    for name in ("hinge", "squared_hinge", "logistic"):
        np.testing.assert_allclose(pointwise_losses(name, p, y), loss_ref(name, p, y), rtol=1e-13)


@pytest.mark.parametrize("name", NEW)
def test_finite_difference_gradient(name):
    rng = np.random.default_rng(1)
    code = LOSS_CODES[name]
    a = 0.4
    p = rng.uniform(-4.0, 4.0, size=2000)
    y = rng.choice([-1.0, 1.0], size=2000) if name == "smoothed_hinge" else rng.normal(size=2000)
    if name == "epsilon_insensitive":
        keep = np.abs(np.abs(y - p) - a) > 1e-3  # kinks at |y - p| = epsilon
    else:
        keep = np.abs(1.0 - y * p) > 1e-3  # the smoothed hinge's kink-free; this only trims
    p, y = p[keep], y[keep]
    h = 1e-6
    fd = np.array([(loss_value_p(code, pi + h, yi, a) - loss_value_p(code, pi - h, yi, a)) / (2 * h)
                   for pi, yi in zip(p, y)])
    an = np.array([loss_deriv_p(code, pi, yi, a) for pi, yi in zip(p, y)])
    assert np.abs(fd - an).max() < 1e-5


def test_smoothed_hinge_is_continuously_differentiable_and_below_the_hinge():
    code = LOSS_CODES["smoothed_hinge"]
    mu = 0.5
    for z in np.linspace(-2.0, 2.0, 401):
        v = loss_value_p(code, z, 1.0, mu)
        assert max(0.0, 1.0 - z) - mu / 2 - 1e-12 <= v <= max(0.0, 1.0 - z) + 1e-12
    # derivative continuous at both joints (1 - z = 0 and 1 - z = mu)
    for joint in (1.0, 1.0 - mu):
        left = loss_deriv_p(code, joint - 1e-9, 1.0, mu)
        right = loss_deriv_p(code, joint + 1e-9, 1.0, mu)
        assert abs(left - right) < 1e-6


@pytest.mark.parametrize("name", NEW)
def test_nan_propagates(name):
    code = LOSS_CODES[name]
    assert math.isnan(loss_value_p(code, math.nan, 1.0, 0.3))
    assert loss_deriv_p(code, math.nan, 1.0, 0.3) != 0.0


def test_three_argument_forms_use_parameter_zero():
    for name in NEW:
        code = LOSS_CODES[name]
        assert loss_value(code, 0.3, 1.0) == loss_value_p(code, 0.3, 1.0, 0.0)
        assert loss_deriv(code, 0.3, 1.0) == loss_deriv_p(code, 0.3, 1.0, 0.0)
