"""Targets and losses on the NumPy side: class codes or real targets, every loss of a prediction.

Classification has int class codes (:func:`dsvm.solvers.base.encode_labels`), regression the
float64 targets themselves, in the same ``codes`` argument; on this side the dtype tells the two
apart. The stochastic pass kernels get both as float64
(:func:`dsvm.solvers.objective.kernel_inputs`) and the difference as a run-time flag,
``hp[REGRESSION]`` (see :func:`dsvm.kernels.weights.code_target`): a dtype per meaning compiled
each of them twice. Everything that reads a block's labels goes through :func:`targets_for`,
where ``classes=None`` means regression.

:class:`LossSpec` carries a loss with its parameter (mu of the smoothed hinge, epsilon of the
epsilon-insensitive loss) wherever a loss name alone used to travel (evaluation, validation);
:func:`pointwise_losses` is the vectorised float64 counterpart of :mod:`dsvm.kernels.losses`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dsvm.exceptions import DataFormatError
from dsvm.kernels.losses import LOSS_CODES
from dsvm.solvers.base import encode_labels


@dataclass(frozen=True)
class LossSpec:
    """A loss name and its parameter (0 for losses without one)."""

    name: str
    param: float = 0.0


def as_loss_spec(loss: Any) -> LossSpec:
    """A :class:`LossSpec` from a spec or a bare loss name (parameter 0)."""
    if isinstance(loss, LossSpec):
        return loss
    if loss not in LOSS_CODES:
        raise ValueError(f"Got loss {loss!r}; expected one of {sorted(LOSS_CODES)}.")
    return LossSpec(str(loss))


def pointwise_losses(loss: Any, P: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """loss(p, y) elementwise for predictions ``P`` and targets ``Y`` (same shape), float64.

    ``Y`` holds +-1 for the margin losses and the real targets for the regression ones.
    """
    spec = as_loss_spec(loss)
    P = np.asarray(P, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    name, a = spec.name, spec.param
    if name == "epsilon_insensitive":
        return np.maximum(0.0, np.abs(Y - P) - a)
    if name == "squared":
        return (Y - P) ** 2
    gap = 1.0 - Y * P  # 1 - margin
    if name == "hinge":
        return np.maximum(0.0, gap)
    if name == "squared_hinge":
        return np.maximum(0.0, gap) ** 2
    if name == "logistic":
        return np.logaddexp(0.0, -(Y * P))
    # smoothed hinge (Huber form): quadratic within mu of the margin, linear beyond
    if a <= 0.0:
        return np.maximum(0.0, gap)
    g = np.maximum(0.0, gap)
    return np.where(g < a, g * g / (2.0 * a), g - 0.5 * a)


def targets_for(y: np.ndarray, classes: np.ndarray | None, where: str) -> np.ndarray:
    """A block's ``codes``: int32 class codes, or (``classes`` None) the float64 targets y.

    Real targets must be finite: a NaN target would silently poison the weights.
    """
    if classes is not None:
        return encode_labels(y, classes, where=where)
    t = np.ascontiguousarray(y, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise DataFormatError(f"{where}: row {int(bad[0])} has target {float(t[bad[0]])!r}; "
                              "regression targets must be finite.")
    return t


def output_targets(
    codes: np.ndarray, n_outputs: int, *, regression: bool | None = None
) -> np.ndarray:
    """(n_rows, n_outputs) float64 targets: +-1 from class codes, or real targets as a column.

    ``regression`` None: float ``codes`` are real targets, others class codes. The kernels'
    float64 codes (:class:`dsvm.solvers.objective.KernelInputs`) say which they are instead.
    """
    codes = np.asarray(codes)
    real = codes.dtype.kind == "f" if regression is None else regression
    if real:
        return codes.astype(np.float64)[:, None]
    if n_outputs == 1:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(n_outputs)[None, :], 1.0, -1.0)


def initial_intercept(y: np.ndarray, sample_weight: np.ndarray | None, loss: str) -> float:
    """Where a regression's intercept starts: the minimiser of the loss over constants on a
    sample of the targets (the weighted median for the absolute-type epsilon-insensitive loss,
    the weighted mean for the squared loss).

    Why: the stochastic steps move the intercept by about eta per row, so from 0 it would take
    thousands of epochs to reach targets centred far from 0 (scikit-learn's diabetes: mean 152;
    after 10 epochs it was at 3, and R^2 -4.5).
    """
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:
        return 0.0
    w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, np.float64)
    if loss == "squared":
        return float(np.average(y, weights=w)) if w.sum() > 0 else 0.0
    order = np.argsort(y, kind="stable")
    cum = np.cumsum(w[order])
    if cum[-1] <= 0:
        return 0.0
    return float(y[order][np.searchsorted(cum, 0.5 * cum[-1])])

