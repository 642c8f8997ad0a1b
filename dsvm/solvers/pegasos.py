"""Pegasos: primal estimated sub-gradient solver for the linear SVM (mini-batch, projected).

Minimises, for each output k (one-vs-rest; a single output for two classes),

    lambda/2 ||w_k||^2 + (1/n) sum_i s_i loss(w_k . x_i + b_k, y_ik)

with lambda = ``alpha`` and s_i the sample weights (1 by default), by the Pegasos iteration
(Shalev-Shwartz, Singer & Srebro 2007; Menon's survey, Algorithm 2; Rupnik's slides): at step
t = 1, 2, ... over a mini-batch M of k rows,

    eta_t = 1 / (lambda t)
    g_i   = s_i * dloss(w_t . x_i + b_t, y_i)             for all i in M, at w_t
    w     <- (1 - eta_t lambda) w_t - (eta_t / k) sum_{i in M} g_i x_i
    w     <- min(1, R / ||w||) w                         (projection onto the ball of radius R)

Differences from the sources, on purpose:

* **Divide by k, not |M|.** Algorithm 2 of the survey divides the sum by the number of margin
  violators |M|; the original Pegasos paper and Rupnik's slides divide by the batch size k,
  which makes the step an unbiased estimate of the subgradient of the objective. We divide by
  k (by the actual row count of the last, shorter batch of a block).
* **Radius by loss.** For the hinge loss R = 1/sqrt(lambda) (Lemma 1, from strong duality).
  For the squared hinge and logistic losses Lemma 1 does not apply; we use the elementary
  bound P(w*) <= P(0) = loss(0), hence lambda/2 ||w*||^2 <= loss(0) and
  R = sqrt(2 loss(0) / lambda) (loss(0) = 1 and log 2). With sample weights whose mean exceeds
  1 both bounds grow by sqrt(mean weight); we scale R by sqrt(max(1, largest weight in the
  block)), which is conservative within a block (the exact bound needs the global mean). With
  weights above 1 the radius can therefore differ between blocks; with weights <= 1 (or none)
  a pass does not depend on how the rows are cut into blocks.
* **Intercept.** Unregularised, as in LIBLINEAR with a free bias, with the same subgradient
  step as w but a damped rate: b <- b - (eta_b,t / k) sum g_i with

      eta_b,t = 1 / (lambda t + 1) = eta_t * lambda t / (lambda t + 1),

  i.e. Pegasos' rate 1/(lambda t) once t >> 1/lambda, capped at 1 before. Undamped, the first
  steps move b by up to 1/lambda (3e4 for lambda = 3e-5); w is pulled back by the projection,
  but b has no such bound and, being unregularised, forgets that start only through later,
  ever smaller steps. Measured on 2,000 x 10 rows with features centred at 3 and
  lambda = 1e-3, after 100 epochs: b = -122 undamped, -37 damped, -25 at the optimum
  (objective 0.43 and 0.16 against 0.12). A step of 1 moves a hinge margin by at most 1,
  its natural unit. We tried ASSET's alternative, clipping |b| <= B with the valid bound
  B = 1 + R max_i ||x_i||, and dropped it: it depends on the block's largest row (so results
  would depend on how rows are cut into blocks) and helped less than the damping. Pegasos'
  convergence rate is not proven with a free bias (the objective is not strongly convex in b).

The returned model is the last iterate (Algorithm 2), not an average: ``state.avg_coef`` is
None. ``state.t`` counts steps (mini-batches) and keeps counting across calls, so a second
``run_block`` continues the 1/(lambda t) schedule: this is how epochs and ``partial_fit``
chain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dsvm.data.blocks import Block
from dsvm.kernels import hparams as H
from dsvm.kernels.losses import LOSS_AT_ZERO, loss_code
from dsvm.kernels.passes import pegasos_pass
from dsvm.solvers.base import PassStats, SolverState
from dsvm.solvers.objective import check_finite, kernel_inputs, validate_common, writable_weights

# Cap of the intercept's step size (see "Intercept" above): eta_b,t = 1 / (lambda t + 1).
INTERCEPT_ETA_MAX = 1.0


def ball_radius(loss: str, alpha: float, max_weight: float = 1.0) -> float:
    """Radius R of a ball that contains the optimal w of each output (see module notes)."""
    scale = max(1.0, max_weight)
    if loss == "hinge":
        return math.sqrt(scale / alpha)
    return math.sqrt(2.0 * LOSS_AT_ZERO[loss] * scale / alpha)


def init_linear_state(n_features: int, n_outputs: int, dtype: np.dtype | type) -> SolverState:
    """Zero weights of ``dtype`` (float32 or float64), t = 0, no average."""
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"dtype must be float32 or float64; got {dt}.")
    if n_features < 1 or n_outputs < 1:
        raise ValueError(
            f"n_features and n_outputs must be >= 1; got {n_features} and {n_outputs}."
        )
    return SolverState(
        coef=np.zeros((n_outputs, n_features), dtype=dt),
        intercept=np.zeros(n_outputs, dtype=dt),
    )


@dataclass(frozen=True)
class PegasosSolver:
    """Pegasos (projected stochastic subgradient, step 1/(alpha t)), mini-batch k.

    Parameters
    ----------
    loss : {"hinge", "squared_hinge", "logistic"}, default="hinge"
    alpha : float, default=1e-4
        L2 regularisation strength lambda. Values must be in the range (0.0, inf).
        ``alpha = 1 / (C * n_samples)`` for LIBLINEAR's C.
    fit_intercept : bool, default=True
        Learn an unregularised intercept (see the module notes for its update).
    batch_size : int, default=1
        Rows per step k. Values must be in the range [1, inf).
    """

    loss: str = "hinge"
    alpha: float = 1e-4
    fit_intercept: bool = True
    batch_size: int = 1

    name: ClassVar[str] = "pegasos"

    def __post_init__(self) -> None:
        validate_common(self)

    def init_state(self, n_features: int, n_outputs: int, dtype: np.dtype) -> SolverState:
        """Zero weights in ``dtype``, t = 0; Pegasos keeps no average."""
        return init_linear_state(n_features, n_outputs, dtype)

    def calibrate(self, state: SolverState, block: Block, codes: np.ndarray) -> SolverState:
        """Pegasos' step size needs no data-dependent constant: ``state`` unchanged."""
        return state

    def run_block(
        self, state: SolverState, block: Block, codes: np.ndarray, order: np.ndarray
    ) -> PassStats:
        """One pass over ``block`` rows in ``order``, mutating ``state`` (coef, intercept, t)."""
        who = "PegasosSolver"
        args = kernel_inputs(block, codes, order, state, who)
        n_rows = int(args.order.shape[0])
        if n_rows == 0:
            return PassStats()
        writable_weights(state)
        max_w = float(args.sample_weight.max()) if args.sample_weight.size else 1.0
        hp = H.make_hp(
            alpha=self.alpha,
            t=state.t,
            batch_size=self.batch_size,
            loss=loss_code(self.loss),
            fit_intercept=self.fit_intercept,
            dtype=state.coef.dtype,
            radius=ball_radius(self.loss, self.alpha, max_w),
            intercept_eta_max=INTERCEPT_ETA_MAX,
        )
        loss_sum = float(
            pegasos_pass(
                args.X, args.codes, args.sample_weight, args.order, state.coef, state.intercept, hp
            )
        )
        state.t = float(hp[H.T])
        check_finite(state, loss_sum, who, n_rows)
        return PassStats(loss_sum=loss_sum, n_rows=n_rows, weight_sum=args.weight_sum)
