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

**What is returned.** Algorithm 2 returns the last iterate w_{T+1}. dsvm by default
(``average=True``) returns a weighted average of the iterates instead: ``state.coef`` and
``state.intercept`` still hold the last iterate, which the next pass continues from, and
``state.avg_coef``/``state.avg_intercept`` (float64, like SGD's) hold the average, which is
what :meth:`SolverState.model` predicts with. ``average=False`` is Algorithm 2 exactly (with
the differences above): no average is kept and ``avg_coef`` is None. ``state.t`` counts steps
(mini-batches) and keeps counting across calls, so a second ``run_block`` continues the
1/(lambda t) schedule (and the average): this is how epochs and ``partial_fit`` chain.

Averaging
---------
The guarantees of projected subgradient methods on strongly convex objectives are for averages
of the iterates: Pegasos' own analysis (Shalev-Shwartz et al. 2011) bounds the uniform average
(by O(log T / (lambda T))); Lacoste-Julien, Schmidt & Bach (2012) prove O(1 / (lambda T)) for
the t-weighted average sum_t t w_t / sum_t t, Shamir & Zhang (2013) for polynomial-decay
averages, which weigh w_t about as t^p, and Rakhlin, Shamir & Sridharan (2012) for suffix
averages. The last iterate is much noisier at small lambda. dsvm averages the iterates w_t
(after the projection; with the intercept b_t after its clip) with the weights

    a_t = t ** AVERAGE_POWER,   AVERAGE_POWER = 8,

abar_T = sum_t a_t w_t / sum_t a_t, kept online in O(nnz) per sparse row by the lazy sum of
:mod:`dsvm.kernels.averages` (shared with averaged SGD); ``state.n_avg`` is sum_t a_t.
Power 1 is the t-weighted average (abar_t = (1 - rho_t) abar_{t-1} + rho_t w_t with
rho_t = 2 / (t + 1)); power 0 the uniform one.

Measured on a9a (n = 32,561, lambda = 1/n, no intercept, batch 1, a fresh permutation per
epoch, float64; float32 gives the same digits), relative to LIBLINEAR's optimum 0.35115, and
the test accuracy on a9a.t after 10 epochs, for seeds 0 / 1 / 2:

===============================  ======================  ======================  ===================
weights                          objective, 10 epochs    objective, 20 epochs    accuracy, 10 epochs
===============================  ======================  ======================  ===================
none (last iterate, Alg. 2)      +16.4 / +62.8 / +79.7%  +15.0 / +13.8 / +17.3%  83.7 / 78.8 / 76.2%
uniform from the start           +81.4 / +80.1 / +80.5%  +39.0 / +38.3 / +38.5%  85.0 / 85.0 / 85.1%
uniform after epoch 1            +30.0 / +30.7 / +29.8%  +15.0 / +15.2 / +14.8%  84.9 / 85.0 / 85.1%
uniform after epoch 10 (suffix)  (last iterate)          +4.2 / +4.0 / +4.1%     (last iterate)
t-weighted (power 1)             +21.2 / +21.2 / +20.7%  +7.5 / +7.3 / +7.3%     85.0 / 84.9 / 85.1%
power 2                          +14.1 / +13.9 / +13.6%  +4.8 / +4.6 / +4.6%     84.9 / 84.9 / 85.0%
power 4                          +10.7 / +10.5 / +10.3%  +3.6 / +3.4 / +3.5%     84.9 / 84.9 / 85.0%
**power 8 (the default)**        +9.1 / +8.9 / +8.8%     +3.2 / +3.0 / +2.9%     84.9 / 84.9 / 85.0%
power 16                         +8.2 / +8.2 / +8.3%     +3.0 / +2.7 / +2.7%     84.9 / 85.0 / 84.9%
===============================  ======================  ======================  ===================

Power 8 was kept: on ijcnn1, w8a and phishing (lambda = 1/n and 10/n) it is also the best or
within 0.05 points of it, while power 32 gets worse again (w8a, ijcnn1). **None reaches 2% of
the optimum on a9a in 20 epochs** (power 16 stops at +2.7-3.0%, the suffix average at +4%):
lambda n = 1 there, so 20 epochs are only lambda T = 20. Our reading, not proven: with
eta_t = 1/(lambda t) every iterate still carries (1/t of) the first steps, which are huge
(eta_t = n / t, bounded only by the ball of radius sqrt(n)), and no average of the iterates
removes that; averaged SGD, whose steps never exceed eta0, gets +0.8%. With lambda = 10/n the
averaged Pegasos is within 0.1% of the optimum after 20 epochs on all four data sets.

**Extrapolation (the driver's, not this solver's).** When a fit runs through the epoch loop
(:func:`dsvm.training.loop.run_epochs`: ``fit``, ``partial_fit``, the CLI), the model
returned may be the Richardson extrapolation (t abar_t - t_r abar_r) / (t - t_r) of the average
with an earlier snapshot t_r <= t/2, which cancels an error of the average that decays like
1/t, the one described above. Each epoch measures both candidates' training objective on
every 8th row the streams read and keeps the lower (:mod:`dsvm.solvers.extrapolation`).
Measured in one process on a9a and w8a (lambda = 1/n, no intercept, one block; objective above
LIBLINEAR's optimum, and the test accuracy):

=========  ======  ==========================  ==========================
data       epochs  average                     returned model
=========  ======  ==========================  ==========================
a9a s0-2   10      +8.6-9.2%, 85.0%            +1.9-2.3%, 84.6-84.8%
a9a s0-2   20      +2.8-2.9%, 84.9-85.0%       +0.57-0.63%, 84.8-85.0%
a9a s0-2   40      +0.92-0.95%, 85.0%          +0.19-0.23%, 84.9-85.0%
w8a s0-1   10      +1.35-1.37%                 the average (probe kept it)
w8a s0-1   20      +0.65-0.67%                 the average (probe kept it)
=========  ======  ==========================  ==========================

The extrapolated model's objective is lower, its test accuracy after few epochs slightly
lower (a9a after 5 epochs: 83-84% against 85%, objective +10-16% against +25%): it is the
better approximation of the SVM being asked for, not of a better classifier. ``average=False``
(Algorithm 2's last iterate) has no average and is never extrapolated.

**Parallel streams.** Between epochs dsvm's combine (:mod:`dsvm.combine.averaging`) averages
the streams' last iterates (weighted by rows) and pools their steps and running averages:
t = t_0 + sum_j (t_j - t_0), n = n_0 + sum_j (n_j - n_0) and
abar = (n_0 abar_0 + sum_j (n_j abar_j - n_0 abar_0)) / n. All streams start the epoch from the
same broadcast state (t_0, n_0, abar_0), and the kernel keeps each stream's average as exactly
(n_0 abar_0 + sum of its own a_t w_t) / n_j with n_j = n_0 + sum of its own a_t, so the pooled
average is the weighted average of the iterates of all streams, whatever their lengths
(``n_avg`` is a sum of weights, not a count, for that reason). Within an epoch each stream
weighs its steps by its own counter t_0 + i; the next epoch's weights continue from the pooled
t, so later epochs weigh more, as in one stream (measured on a9a in 2,048-row chunks, 20
epochs: +2.9% with one stream, +3.0% with two of 8 + 8 or 9 + 7 chunks). The next epoch
continues from the combined last iterate ``coef``, not from the average.
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
from dsvm.solvers.extrapolation import RichardsonSelection
from dsvm.solvers.objective import (
    kernel_inputs,
    run_pass_kernel,
    validate_common,
    writable_weights,
)

# Cap of the intercept's step size (see "Intercept" above): eta_b,t = 1 / (lambda t + 1).
INTERCEPT_ETA_MAX = 1.0
# The averaging weights (see "Averaging" above): the iterate of step t weighs
# (t - AVERAGE_START) ** AVERAGE_POWER; power 1 from 0 is the t-weighted average, power 0 the
# uniform one.
AVERAGE_POWER = 8.0
AVERAGE_START = 0.0


def ball_radius(loss: str, alpha: float, max_weight: float = 1.0) -> float:
    """Radius R of a ball that contains the optimal w of each output (see module notes)."""
    scale = max(1.0, max_weight)
    if loss == "hinge":
        return math.sqrt(scale / alpha)
    if loss not in LOSS_AT_ZERO:  # regression losses: the bound needs the targets' range
        return math.inf
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
    average : bool, default=True
        Keep the weighted average of the iterates (weights t ** AVERAGE_POWER) in
        ``state.avg_coef``/``avg_intercept`` and predict with it; False returns the last
        iterate, as Algorithm 2 does (see the module notes, "Averaging").
    """

    loss: str = "hinge"
    alpha: float = 1e-4
    fit_intercept: bool = True
    batch_size: int = 1
    average: bool = True
    loss_param: float = 0.0

    name: ClassVar[str] = "pegasos"

    def __post_init__(self) -> None:
        validate_common(self)
        if not isinstance(self.average, (bool, np.bool_)):
            raise ValueError(
                "The 'average' parameter of PegasosSolver must be an instance of bool. "
                f"Got {self.average!r} instead."
            )

    @property
    def selection(self) -> RichardsonSelection | None:
        """With averaging, the training loop may return the Richardson extrapolation of the
        average (:mod:`dsvm.solvers.extrapolation`); without, there is nothing to choose."""
        return RichardsonSelection(float(self.alpha)) if self.average else None

    def init_state(self, n_features: int, n_outputs: int, dtype: np.dtype) -> SolverState:
        """Zero weights in ``dtype``, t = 0; float64 zero averages when averaging."""
        state = init_linear_state(n_features, n_outputs, dtype)
        if self.average:
            state.avg_coef = np.zeros((n_outputs, n_features), dtype=np.float64)
            state.avg_intercept = np.zeros(n_outputs, dtype=np.float64)
        return state

    def calibrate(self, state: SolverState, block: Block, codes: np.ndarray) -> SolverState:
        """Pegasos' step size needs no data-dependent constant: ``state`` unchanged."""
        return state

    def run_block(
        self, state: SolverState, block: Block, codes: np.ndarray, order: np.ndarray
    ) -> PassStats:
        """One pass over ``block`` rows in ``order``, mutating ``state``.

        Updates coef, intercept, t and, when averaging, avg_coef, avg_intercept and n_avg
        (a state without averages gets zero ones first).
        """
        who = "PegasosSolver"
        args = kernel_inputs(block, codes, order, state, who)
        n_rows = int(args.order.shape[0])
        if n_rows == 0:
            return PassStats()
        if self.average and state.avg_coef is None:
            state.avg_coef = np.zeros(state.coef.shape, dtype=np.float64)
            state.avg_intercept = np.zeros(state.intercept.shape, dtype=np.float64)
        writable_weights(state)
        max_w = float(args.sample_weight.max()) if args.sample_weight.size else 1.0
        # Regression targets: no ball is known without the targets' range, so no projection
        # (Pegasos converges without it; the projection only speeds it up).
        radius = math.inf if args.regression else ball_radius(self.loss, self.alpha, max_w)
        hp = H.make_hp(
            alpha=self.alpha,
            t=state.t,
            batch_size=self.batch_size,
            loss=loss_code(self.loss),
            fit_intercept=self.fit_intercept,
            dtype=state.coef.dtype,
            radius=radius,
            intercept_eta_max=INTERCEPT_ETA_MAX,
            average=self.average,
            avg_start=AVERAGE_START,
            avg_power=AVERAGE_POWER,
            n_avg=state.n_avg,
            loss_param=float(self.loss_param),
            regression=args.regression,
        )
        return run_pass_kernel(pegasos_pass, state, args, hp, average=self.average, who=who,
                               paired=True)
