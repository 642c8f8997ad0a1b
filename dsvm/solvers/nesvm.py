"""NESVM: Nesterov's optimal gradient method on smoothed SVM objectives (Zhou, Tao & Wu).

The problem, per output k (one-vs-rest outputs are independent problems solved together), in
dsvm's normalisation (the estimator's ``alpha`` is the papers' lambda):

    F(w, b) = R(w) + (1 / S) sum_i s_i loss(y_i (x_i . w + b)),     S = sum_i s_i

with ``R = alpha/2 ||w||^2`` (C-SVM, LS-SVM) or ``alpha ||w||_1`` (LP-SVM). The paper writes
``R(w) + C sum_i loss``; dividing by ``alpha n`` shows that its ``C`` is ``1 / (alpha n)``, and
Nesterov's iterates are the same for both scalings (L scales with F). The bias is appended to w
with a constant feature (Eq. 37) and not penalised.

Smoothing (Section II-A/B): the hinge becomes ``h_mu`` (Eq. 10, dual variable u of Eq. 6) and
the L1 norm becomes the Huber function ``l_mu`` (Eq. 28, u = median{w/mu, -1, 1}, Eq. 24);
LS-SVM's squared loss is smooth already. Both smoothings use the same ``mu`` (the paper's mu
and nu, which it moves together in homotopy).

Iteration k (Eq. 33-35), with theta = (W, b), step 1/L_mu and prox centre theta* = theta^0:

    y^k = theta^k - grad F_mu(theta^k) / L_mu
    z^k = theta* - (1 / L_mu) sum_{i<=k} (i + 1)/2 grad F_mu(theta^i)
    theta^{k+1} = 2/(k + 3) z^k + (k + 1)/(k + 3) y^k

One data pass per iteration computes the gradient and objectives at theta^k and, in the same
sweep, the objectives at y^{k-1} (Theorem 3 bounds F_mu(y^k), so y is the sequence whose
objective the paper guarantees; evaluating it costs one extra dot product per row, no pass).

Lipschitz constant. The paper bounds the loss part by ``n max_i ||x_i||^2 / ||x_i||_inf / mu``
(Eq. 21, 48, 52) after the step ``sum_i L_i <= n max_i L_i``; we stop one step earlier and use
the sum (a valid and never larger bound), collected during the first pass:

    hinge:   L_loss = (1 / (mu S)) sum_i s_i ||x~_i||^2 / ||x~_i||_inf
    squared: L_loss = (2 / S) sum_i s_i ||x~_i||^2

The squared case differs from the paper's Eq. 56 (``1 + 2C max_i ||X_i||^2``), which lacks the
factor n that Eq. 48 has and is then not a Lipschitz constant of the sum; steps of 1/L with it
can diverge. The regulariser adds ``alpha`` (L2) or ``alpha / mu`` (smoothed L1, Eq. 32).

Homotopy (Algorithm 2): stages t = 0, 1, ... with ``mu_t = mu0 / (t + 1)`` (Eq. 44), the last
stage at the target ``mu``. As the paper states it (``continuation=False``), each stage
restarts Eq. 33-35 from the previous stage's result (warm start, theta* = theta^0 = that
result) with L_mu recomputed from the first pass's sums, and ends on Algorithm 1's test.

Stopping (Algorithm 1): a stage ends when |F_mu(theta^{k+1}) - F_mu(theta^k)| < tol (summed
over outputs, in the normalisation above; the estimator passes its ``tol`` times alpha, which
is the paper's epsilon on the paper's scale), or when the pass budget is spent.

Three accelerations, on by default, not in the paper (``NesvmSettings(precondition=False,
lipschitz_start=1.0, continuation=False, step="doubling")`` is the paper's method exactly):

* **Diagonal metric.** Nesterov's method allows any strongly convex prox-function d2; the
  paper picks the Euclidean one. We use ``d2(z) = 1/2 sum_j D_j (z_j - w*_j)^2`` with D_j the
  absolute row sums of a bound on the Hessian (:func:`scaling`), for which 1 is a valid
  Lipschitz constant (Gershgorin): the theorems hold unchanged in the D-norm, and each
  feature gets its own step. The column sums come from the first pass, like L_mu.
* **Adaptive step.** L_mu (in either metric) is a worst-case bound; on a9a the curvature seen
  by the iterates is ~30x smaller. The step starts at 1/(L_mu * lipschitz_start) and the
  factor doubles (up to 1, the bound) whenever a measured point fails the gradient step's
  descent test ``F_mu(y) <= F_mu(theta) - ||grad||^2_{D^-1} / (2 L)``, which holds for every
  step at the bound. The test costs nothing: F_mu(y^{k-1}) is measured in pass k anyway.
  With ``step="doubling"`` L never decreases within a stage, as Nesterov's estimate-sequence
  argument needs (the secant step below relaxes this). A step
  that went uphill (F_mu(y) > F_mu(theta)) has also put a bad gradient, with a large weight,
  into Eq. 34's sum; then that step is taken back and redone from theta^{k-1} with the
  doubled factor (backtracking, ``restart=True``; theta^{k-1}'s gradient is known, so it costs
  no pass, and the momentum of the earlier steps is kept). An earlier version restarted
  Eq. 33-35 from the best point instead; that point can be a long overshoot whose true
  objective happens to be lower (w8a at mu = 0.3: 137% above the optimum after 20 passes,
  against 27% when going back to theta^{k-1}), and plain NESVM on a9a gains a pass.

  *Secant step* (``step="secant"``, the default). A factor that only doubles is set by the
  worst descent test met so far. On w8a (mu = 0.01) it doubled from 0.0039 to 0.125 over
  passes 42-87 while the curvature along the iterates, ||grad^k - grad^k-1||_{D^-1} /
  ||theta^k - theta^k-1||_D, stayed near 0.002: steps 60x shorter than needed. So after every
  pass (that did not go uphill) the factor is set to that secant estimate, which can go down
  as well as up (at most 1, the bound). The gradient-step descent test is then no longer a
  guarantee, only the trigger of the backtracking above, which stays the safeguard: keeping
  the doubled factor whenever the test failed (it fails often with secant steps) lost most
  of the gain (w8a 0.23% -> 0.41%). L changing within a stage departs from Nesterov's
  estimate-sequence argument, which needs L non-decreasing; so the Eq. 43 rate is not claimed
  for this rule (the paper's steps still satisfy it, tested). The hinge's gradient is bounded,
  so a long step meets a small secant, which lengthens the next step: with the estimate scaled
  by 0.7 this ran away on all five data sets tried (a9a, w8a, phishing, ijcnn1, skin_nonskin;
  stuck 1.6-19% above the optimum); a guard (:class:`_Stall`) doubles a floor under the factor
  after 10 passes without a new lowest F_mu(y), which stopped every such run away (they then
  ended 0.04-0.8% above) and left the unscaled estimate's results unchanged except ijcnn1 at
  mu = 0.01 (0.007% -> 0.051%) and skin_nonskin (0.002% -> 0.001%, 0.031% -> 0.007%). Tried
  and dropped (mu = 0.03, 100 passes, a9a / w8a, against 0.055% / 0.23%): the Rayleigh
  quotient <s, dg>/||s||_D^2 (0.056% / 0.25%), O'Donoghue & Candes' function restart (0.11%
  / 2.0%; their gradient restart fired at most once a run and changed little), Eq. 34-35's
  weights from the recurrence alpha^2 L = B + alpha, which allows any L sequence (0.073% /
  0.23%).
* **Continuation** (homotopy only, ``continuation=True``). With the adaptive step, Algorithm 2
  as stated was far worse than plain NESVM (a9a 1.8% vs 0.089% above the optimum after 100
  passes, w8a 14.5% vs 1.7%; mu0 = 1, 34 stages). Measured why: every stage re-learnt the step
  from lipschitz_start (5-7 uphill restarts per stage on a9a), lost the momentum of Eq. 34,
  and ran until |dF_mu| < tol (w8a: the whole budget in the mu = 1 stage). Homotopy is
  instead one continued run of Eq. 33-35 whose mu follows Eq. 44:

  - *Momentum kept.* At a stage change, Eq. 34's weighted gradient sum is re-expressed in the
    new metric (:meth:`_Stage.change_metric`) and k is not reset. This is valid: F_mu grows as
    mu shrinks, so the linear lower models of F_mu_t collected so far stay lower models of
    F_mu_t+1. (Without it, all else as below: a9a 0.44%, w8a 4.1% after 100 passes.)
  - *Learned step carried.* L_mu grows as 1/mu but the curvature the iterates meet does not
    (a9a: factor 0.5 at mu = 1, 0.0156 at mu = 0.03), so the factor carries over times
    mu_t+1/mu_t, and the first stage starts at lipschitz_start * mu0/mu, the step plain NESVM
    would start with at mu. (Starting every stage afresh at lipschitz_start * mu_t/mu: a9a
    15%, w8a 9.6%; starting stage 0 at lipschitz_start: a9a 0.30%, w8a 1.8%.)
  - *Tests across a stage change.* F_mu is convex in mu (h_mu and the Huber function are maxima
    of functions affine in mu) and F_0 = F, so F_mu' <= F_mu + (1 - mu'/mu)(F - F_mu); the
    descent and stopping tests of the first pass of a stage compare against this bound at
    theta^{k-1}, whose F_mu' was not measured.
  - *Stage rule.* Solving stage t much more precisely than its smoothing error is wasted
    work: a stage other than the last ends when a pass gains less than ``stage_gap`` (0.3)
    times F - F_mu at the current point (measured in the same pass), or on ``tol``. (With
    tol 1e-4 alone: a9a 0.13%, w8a 0.69% after 100 passes, but the last stage stops early.)
    Most stages then last one pass: mu decreases with the iteration count, as in variable
    smoothing; Eq. 44's schedule is kept.

Measured (lambda = 1/n, mu = 0.03, no intercept, 100 passes; benchmarks/RESULTS.md, where the
figures of the last run are): plain NESVM is 0.055% above LIBLINEAR's optimum on a9a, within
0.1% from pass 64 (0.088% and pass 89 with the doubling step, 4.9% with the diagonal metric
alone, 28% with the paper's fixed Euclidean step) and 0.23% on w8a (1.7% with doubling). w8a
cannot get within 0.1% at mu = 0.03: the minimiser of F_0.03 is itself 0.16% above the
optimum (0.053% for mu = 0.01, 0.02% for 0.005). At mu = 0.005 plain NESVM ends at 0.12%
after 100 passes; from 30 Pegasos epochs (0.43% above) 70 NESVM passes end at 0.058% (within
0.1% after 68-71 passes in all; Pegasos for 20-50 epochs: 61-78). With the doubling step the
same warm start ended at 0.25%.

Homotopy with the secant step: a tie on a9a (mu0 = 1: 0.053% vs plain 0.055%, reaching
plain's final objective at pass 100; mu0 = 0.3, 0.09, 0.06: 0.054-0.057%, so the dependence on
mu0 described below is gone there) and worse than plain NESVM on w8a (mu0 = 1: 0.31% vs
0.23%; mu0 = 0.3, 0.09, 0.06: 0.27-0.28%), though far better than homotopy with the doubling
step (1.6%). The secant step finds the curvature that the large-mu stages were a way around.
At mu = 0.01 from mu0 = 1, Eq. 44 needs 100 stages, so the last stage is not reached within
100 passes (w8a 3.2%).

The rest of this docstring was measured with the doubling step, the default before the
secant step. Homotopy from mu0 = 1: a9a 0.089% (a tie with plain NESVM, first within
0.1% at pass 90 vs 89: the large-mu stages do not help there, where the adaptive step already
finds the curvature, and homotopy does not reach plain's final objective within the 100
passes), w8a 1.6%, reaching plain NESVM's final objective at pass 86. A short homotopy,
mu0 = 2 mu: a9a 0.088% (the same curve as plain to 3 digits, not reached either), w8a 1.5%,
reached at pass 82. Before the continuation (restart per stage, stage tol 1e-4, with the
backtracking above): a9a 1.3%, w8a 5.6%. With the paper's fixed steps homotopy wins by far
(a9a: plain's final objective at pass 28 of 100), because its step 1/L_mu is the worst case
at mu; the adaptive step takes most of that gain for plain NESVM too.

Limitation (doubling step), measured with other mu0 (same setting, 100 passes; before the
continuation, stage tol 1e-4, in brackets): a9a mu0 = 0.3 and 0.09: 0.149% (0.50%, 0.51%); w8a mu0 =
0.3: 1.84% (9.5%), mu0 = 0.09: 1.01% (4.8%). So homotopy is never far off plain NESVM now, but not
always at or below it. The cause is the step factor's power-of-2 grid: a doubling at a borderline
descent test in an early stage (a9a, mu0 = 0.3: 0.156 -> 0.312 where ~0.15 was needed) is carried to
the last stage, whose steps are then half as long as plain NESVM's. Letting the factor come down at
a stage change (halving it, or setting it from the measured secant curvature) made the continued
momentum unstable in our runs (a9a up to 4.6%). The secant step, set from the curvature after every
pass of every stage, does not show this (above).

Returned model: of all points whose objective was measured (theta^k and y^{k-1}), the one with
the lowest true objective (hinge / L1 unsmoothed) per output. The paper returns theta^{k+1},
whose objective nobody measured; returning a measured point costs nothing and can only be
better. Within a stage, the warm start handed to the next stage is the same best point.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dsvm.data.block_ops import kernel_rows
from dsvm.data.blocks import Block
from dsvm.kernels.nesvm import (
    N_STATS,
    NESVM_LOSS_CODES,
    STAT_RATIO,
    STAT_ROWS,
    STAT_SQNORM,
    STAT_WEIGHT,
    NesvmLoss,
    NesvmShares,
    nesvm_pass,
)

NESVM_LOSSES = tuple(NESVM_LOSS_CODES)
NESVM_PENALTIES = ("l2", "l1")
STEP_RULES = ("secant", "doubling")
STALL_PASSES = 10  # passes without a new lowest F_mu(y) before the secant step's floor doubles


@dataclass(frozen=True)
class NesvmProblem:
    """What is minimised: loss ("hinge" or "squared"), penalty ("l2" or "l1"), alpha, bias."""

    loss: str = "hinge"
    penalty: str = "l2"
    alpha: float = 1e-4
    fit_intercept: bool = True

    def __post_init__(self) -> None:
        if self.loss not in NESVM_LOSSES:
            raise ValueError(
                f"solver='nesvm' supports loss in {list(NESVM_LOSSES)} (C-SVM / LP-SVM with the "
                f"smoothed hinge, LS-SVM with 'squared'); got loss={self.loss!r}."
            )
        if self.penalty not in NESVM_PENALTIES:
            raise ValueError(
                f"solver='nesvm' supports penalty in {list(NESVM_PENALTIES)}; got "
                f"penalty={self.penalty!r}."
            )
        if not (self.alpha > 0 and math.isfinite(self.alpha)):
            raise ValueError(f"alpha must be a finite float > 0; got {self.alpha!r}.")


@dataclass
class GradientShare:
    """Sums over some rows at the points of one pass (added across blocks, associative).

    grad : (K, n_features) float64, grad_b : (K,): sum_i -s_i y_ik u_ik x~_i at the first point.
    sums : (n_points * K, 2) float64: [sum s h_mu, sum s true loss] per point and output.
    stats : (N_STATS,) float64: weight sum, rows, Lipschitz sums (see dsvm.kernels.nesvm).
    """

    grad: np.ndarray
    grad_b: np.ndarray
    sums: np.ndarray
    stats: np.ndarray
    colstats: np.ndarray  # (2, n_features + 1) diagonal-scaling sums, or (2, 0) when not asked

    @classmethod
    def zeros(cls, n_outputs: int, n_features: int, n_points: int,
              collect_scaling: bool = False) -> GradientShare:
        return cls(
            grad=np.zeros((n_outputs, n_features)),
            grad_b=np.zeros(n_outputs),
            sums=np.zeros((n_points * n_outputs, 2)),
            stats=np.zeros(N_STATS),
            colstats=np.zeros((2, n_features + 1 if collect_scaling else 0)),
        )

    def __add__(self, other: GradientShare) -> GradientShare:
        return GradientShare(
            self.grad + other.grad,
            self.grad_b + other.grad_b,
            self.sums + other.sums,
            self.stats + other.stats,
            self.colstats + other.colstats,
        )

    def __sizeof__(self) -> int:
        return 64 + sum(a.nbytes for a in (self.grad, self.grad_b, self.sums, self.stats,
                                           self.colstats))


@dataclass(frozen=True)
class Points:
    """The points a pass evaluates: ``coef`` (n_points * K, n_features), ``intercept``
    (n_points * K,), float64. The first K rows are where the gradient is taken."""

    coef: np.ndarray
    intercept: np.ndarray
    n_outputs: int
    collect_scaling: bool = False  # also sum the diagonal scaling's column sums (first pass)

    @property
    def n_points(self) -> int:
        return self.coef.shape[0] // self.n_outputs

    def __sizeof__(self) -> int:
        return 64 + self.coef.nbytes + self.intercept.nbytes


def block_share(
    block: Block, codes: np.ndarray, points: Points, loss: str, mu: float, fit_intercept: bool
) -> GradientShare:
    """One block's :class:`GradientShare` (the numba pass; float64 sums)."""
    share = GradientShare.zeros(points.n_outputs, points.coef.shape[1], points.n_points,
                                points.collect_scaling)
    if block.n_samples == 0:
        return share
    sw = (np.zeros(0) if block.sample_weight is None
          else np.ascontiguousarray(block.sample_weight, dtype=np.float64))
    nesvm_pass(kernel_rows(block), codes, sw, points.coef, points.intercept,
               NesvmLoss(NESVM_LOSS_CODES[loss], float(mu), 1.0 if fit_intercept else 0.0),
               NesvmShares(share.grad, share.grad_b, share.sums, share.stats, share.colstats))
    return share


# -- the client-side mathematics -----------------------------------------------------------------
def regulariser(W: np.ndarray, problem: NesvmProblem, mu: float) -> tuple[np.ndarray, np.ndarray,
                                                                          np.ndarray]:
    """(smoothed value per output, true value per output, gradient) of R at W (K, p)."""
    a = problem.alpha
    if problem.penalty == "l2":
        val = 0.5 * a * np.einsum("kj,kj->k", W, W)
        return val, val, a * W
    # Huber smoothing of |w| (Eq. 24, 28, 30)
    absw = np.abs(W)
    huber = np.where(absw > mu, absw - 0.5 * mu, W * W / (2.0 * mu))
    return a * huber.sum(axis=1), a * absw.sum(axis=1), a * np.clip(W / mu, -1.0, 1.0)


def lipschitz(problem: NesvmProblem, stats: np.ndarray, mu: float) -> float:
    """L_mu of the smoothed objective (module docstring: Eq. 48/52/56, sum form)."""
    S = max(stats[STAT_WEIGHT], 1e-300)
    if problem.loss == "hinge":
        loss_part = stats[STAT_RATIO] / (mu * S)
    else:
        loss_part = 2.0 * stats[STAT_SQNORM] / S
    reg_part = problem.alpha if problem.penalty == "l2" else problem.alpha / mu
    return float(reg_part + loss_part)


@dataclass
class PassResult:
    """What the client reads off one summed pass."""

    grad: np.ndarray  # (K, p) gradient of F_mu at the first point
    grad_b: np.ndarray  # (K,)
    smoothed: np.ndarray  # (n_points, K) F_mu at each point
    true: np.ndarray  # (n_points, K) F at each point
    stats: np.ndarray
    loss: np.ndarray  # (K,) mean true loss (no regulariser) at the first point


def read_pass(
    share: GradientShare, points: Points, problem: NesvmProblem, mu: float
) -> PassResult:
    """Objectives and the full gradient from the summed shares of one pass."""
    K = points.n_outputs
    S = share.stats[STAT_WEIGHT]
    if S <= 0:
        raise ValueError(
            f"The training data has no rows with positive weight (weight sum {S!r}, "
            f"{int(share.stats[STAT_ROWS])} rows); nothing to fit."
        )
    smoothed = np.empty((points.n_points, K))
    true = np.empty((points.n_points, K))
    for p in range(points.n_points):
        Wp = points.coef[p * K:(p + 1) * K]
        r_s, r_t, _ = regulariser(Wp, problem, mu)
        smoothed[p] = r_s + share.sums[p * K:(p + 1) * K, 0] / S
        true[p] = r_t + share.sums[p * K:(p + 1) * K, 1] / S
    _, _, reg_grad = regulariser(points.coef[:K], problem, mu)
    grad = reg_grad + share.grad / S
    grad_b = share.grad_b / S if problem.fit_intercept else np.zeros(K)
    return PassResult(grad, grad_b, smoothed, true, share.stats, share.sums[:K, 1] / S)


def scaling(problem: NesvmProblem, stats: np.ndarray, colstats: np.ndarray, mu: float,
            precondition: bool) -> tuple[np.ndarray, float]:
    """The metric D (per feature, and for the bias) of the prox-function d2 = 1/2 ||z - w*||_D^2.

    Without preconditioning D = L_mu everywhere (the paper's Euclidean d2, step 1/L_mu). With
    it, D_j = r_j + c_j where r_j is the regulariser's curvature bound (alpha, alpha/mu, 0 for
    the bias) and c_j the absolute row sum j of the loss part's curvature bound,
    ``(1/(mu S)) sum_i s_i |x~_ij| ||x~_i||_1 / ||x~_i||_inf`` (hinge) or
    ``(2/S) sum_i s_i |x~_ij| ||x~_i||_1`` (squared). By Gershgorin, D^-1 H has spectral radius
    at most 1 for every Hessian H of F_mu, so 1 is a Lipschitz constant of the gradient in
    the D-norm: the same guarantee (Eq. 43, with d2 in the D-norm) with a per-feature step.
    """
    p = colstats.shape[1] - 1 if colstats.shape[1] else None
    if not precondition or p is None:
        L = lipschitz(problem, stats, mu)
        return np.full(0, L), L
    S = max(stats[STAT_WEIGHT], 1e-300)
    if problem.loss == "hinge":
        c = colstats[0] / (mu * S)
    else:
        c = 2.0 * colstats[1] / S
    reg = problem.alpha if problem.penalty == "l2" else problem.alpha / mu
    d_w = reg + c[:p]
    d_b = float(c[p]) if c[p] > 0 else 1.0
    return d_w, d_b


Oracle = Callable[[Points, float], GradientShare]
"""``oracle(points, mu)``: one data pass, the shares of every row summed."""


@dataclass
class NesvmSettings:
    """How to run.

    mu : target smoothing. mu0 : homotopy start (None: no homotopy).
    tol : Algorithm 1's epsilon (None: every stage runs to the budget). max_passes : budget.

    precondition : use the diagonal metric of :func:`scaling` instead of the Euclidean one.
    lipschitz_start : the step starts at 1 / (lipschitz_start * L) (L the bound, in the chosen
        metric) and the factor doubles, up to 1, whenever a measured point fails the descent
        test of the gradient step (with ``step="secant"`` it is then also set from the measured
        curvature after every pass); 1.0 with ``step="doubling"`` is the paper's fixed step
        1/L_mu.
    restart : when a gradient step went uphill, take it back and redo it from the point it
        started at with the doubled factor (backtracking; the momentum of Eq. 34 is kept).
    continuation : homotopy as one continued run of Eq. 33-35 (module docstring, "Homotopy"):
        the sequence, the learned step and the descent test carry over from stage to stage, and
        a stage other than the last also ends when its progress per pass falls below
        ``stage_gap`` times its smoothing error. False: Algorithm 2 as the paper states it
        (each stage restarts Eq. 33-35 from the previous result; only ``tol`` ends a stage).
    stage_gap : see ``continuation``.
    step : "secant" (default): after every pass the factor is set from the curvature measured
        along the last step (module docstring, "Adaptive step"), so it can go down as well as
        up; the backtracking and a stall guard are the safeguards. "doubling": the factor only
        doubles on a failed descent test (the previous rule).

    None of these is in the paper; see the module docstring for why and what they measured.
    ``precondition=False, lipschitz_start=1.0, continuation=False, step="doubling"`` is the
    paper's method exactly (at the bound the descent test always holds, so nothing doubles or
    backtracks).
    """

    mu: float = 0.03
    mu0: float | None = None
    tol: float | None = 1e-6
    max_passes: int = 100
    precondition: bool = True
    lipschitz_start: float = 2.0 ** -9
    restart: bool = True
    continuation: bool = True
    stage_gap: float = 0.3
    step: str = "secant"

    def __post_init__(self) -> None:
        if self.step not in STEP_RULES:
            raise ValueError(f"step must be one of {list(STEP_RULES)}; got step={self.step!r}.")

    def schedule(self) -> list[float]:
        """mu_t = mu0 / (t + 1) while above mu, then mu (Algorithm 2, Eq. 44)."""
        if self.mu0 is None or self.mu0 <= self.mu:
            return [self.mu]
        mus = []
        t = 0
        while self.mu0 / (t + 1) > self.mu:
            mus.append(self.mu0 / (t + 1))
            t += 1
        return [*mus, self.mu]
