"""ASSET and ASSET*: robust stochastic approximation for linear SVMs (Lee & Wright, papers/000).

Minimises, for each output k (one-vs-rest; one output for two classes or for regression),

    f(w, b) = lambda/2 ||w||^2 + (1/n) sum_i s_i loss(w . x_i + b, y_i)

over the compact set X = {||w|| <= R} x {|b| <= B} by Algorithm 1 of the paper: at step
j = 1, 2, ..., N (one row, or a mini-batch of ``batch_size`` rows),

    eta_j = D_X / (D_G sqrt(j))
    (w, b) <- Pi_X((w, b) - eta_j G((w, b); xi_j))     G from Table 1: (lambda w - d x, -d)
    average the iterates j >= N-bar = rho N with weights eta_j  (step 9)

and returns the average. **ASSET*** (``solver="asset*"``) drops the intercept, steps with
eta_j = 1/(lambda j) and returns the last iterate (no averaging), as in the paper's Section 3.
Losses: the hinge and the epsilon-insensitive loss of Table 1; the other losses of
:mod:`dsvm.kernels.losses` work the same way (their subgradients in place of d).

The constants, as the paper states them and where dsvm has to choose:

* **R** = 1/sqrt(lambda) for the hinge (Shalev-Shwartz et al., Theorem 1); for the
  epsilon-insensitive loss sqrt(2 (||y||_inf - epsilon) / lambda) (Lee & Wright, Theorem 1);
  for the other losses sqrt(2 loss(0) / lambda) (f(w*) <= f(0)). ||y||_inf is a property of
  the whole training set, which a streaming fit does not know in advance: dsvm takes it from
  the calibration sample (below), doubled as a margin, and says so here.
* **B** "sufficiently large" (the paper does not say how): B = 1 + R max ||x|| for the margin
  losses (|b*| beyond it would put every row on one side of the margin) and
  ||y||_inf + R max ||x|| for regression, both over the calibration sample, doubled.
  Without an intercept B plays no part.
* **D_X** = sqrt(R^2 + B^2) (the radius of X), R without an intercept.
* **D_G** from M samples at the initial iterate (w, b) = (0, 0), as the paper:
  D_G^2 = (1/M) sum_l d_l^2 (||x_l||^2 + 1), d_l the loss's subgradient at p = 0 (the +1 is the
  intercept's coordinate; it is dropped without an intercept), averaged over the outputs of a
  one-vs-rest fit (each is its own problem). M = ``n_calibration`` rows of the
  first chunk (default 1000). :meth:`AssetSolver.calibrate` computes it once, at the start of a
  fit, and stores eta_1 = D_X / D_G as ``state.eta0``; R, B and D_G ride in
  ``state.extra["asset_constants"]`` so that they survive ``partial_fit``, the save of a state and
  the combine.
* **N and N-bar.** The paper averages from N-bar = rho N with N the total number of steps. A
  fit of ``max_epochs`` epochs knows N = max_epochs * ceil(n / batch_size) (the estimator sets
  ``n_steps``); ``partial_fit`` uses the same N, as if ``max_epochs`` calls were to come. Without
  ``n_steps`` the average starts at step 1.

**State across epochs, partial_fit and workers.** ``state.t`` is j, the step counter, so the
schedule eta_j continues across passes and calls; ``state.n_avg`` is eta~ = sum of eta_j over the
averaged steps and ``avg_coef``/``avg_intercept`` the average itself. The per-epoch combine of
parallel streams (:mod:`dsvm.combine.averaging`) pools them exactly as Algorithm 1 would have pooled
one stream's steps: t = t_0 + sum_s (t_s - t_0), eta~ = eta~_0 + sum_s (eta~_s - eta~_0) and x~ =
(eta~_0 x~_0 + sum_s (eta~_s x~_s - eta~_0 x~_0)) / eta~, which is the eta-weighted average of the
iterates of all streams, because each stream's average is (eta~_0 x~_0 + its own sum of eta_j x_j) /
eta~_s (the combine is indifferent to what the weights are). Within an epoch each stream numbers its
steps from its own t_0, so parallel streams take the steps t_0 + 1, t_0 + 2, ... side by side
(slightly larger steps than one stream would for the same rows); the next epoch continues from the
pooled t. The next epoch starts from the row-weighted mean of the streams' last iterates, which lies
in X because X is convex.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from dsvm.data.blocks import Block
from dsvm.kernels import hparams as H
from dsvm.kernels.losses import LOSS_AT_ZERO, REGRESSION_LOSSES, loss_code, regression_loss_at_zero
from dsvm.kernels.passes import asset_pass
from dsvm.solvers.base import PassStats, SolverState
from dsvm.solvers.objective import kernel_inputs, run_pass_kernel, validate_common, writable_weights
from dsvm.solvers.pegasos import init_linear_state
from dsvm.solvers.targets import output_targets

CALIBRATION_ROWS = 1000  # M, the rows of the first chunk that D_G and the bounds are taken from
# Safety factor on the bounds taken from the calibration sample (see the module notes).
SAMPLE_BOUND_MARGIN = 2.0
CONSTANTS_KEY = "asset_constants"  # state.extra entry: [R, B, D_G]


def _check_real(cls: str, name: str, value: Any, lo: float, hi: float, closed_lo: bool) -> None:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = (lo <= v if closed_lo else lo < v) and v < hi
    if not ok:
        left = "[" if closed_lo else "("
        raise ValueError(
            f"The '{name}' parameter of {cls} must be a float in the range {left}{lo}, {hi}). "
            f"Got {value!r} instead."
        )


@dataclass(frozen=True)
class AssetSolver:
    """ASSET: step D_X / (D_G sqrt(j)), projection onto X, eta-weighted averaging from rho N.

    Parameters
    ----------
    loss : str, default="hinge"
        "hinge" or "epsilon_insensitive" (Table 1), or any loss of :mod:`dsvm.kernels.losses`.
    alpha : float, default=1e-4
        lambda. Values must be in the range (0.0, inf).
    fit_intercept : bool, default=True
        Learn b (bounded by B, not regularised).
    batch_size : int, default=1
        Rows per step (the paper: 1). Values must be in the range [1, inf).
    average : bool, default=True
        Return the eta-weighted average of the iterates from N-bar on (Algorithm 1); False
        returns the last iterate.
    loss_param : float, default=0.0
        epsilon of the epsilon-insensitive loss, mu of the smoothed hinge.
    rho : float, default=0.5
        N-bar = rho N. Values must be in the range [0.0, 1.0).
    n_steps : int or None, default=None
        N, the total number of steps planned (the estimator sets it).
    n_calibration : int, default=1000
        M, rows used to estimate D_G. Values must be in the range [1, inf).
    """

    loss: str = "hinge"
    alpha: float = 1e-4
    fit_intercept: bool = True
    batch_size: int = 1
    average: bool = True
    loss_param: float = 0.0
    rho: float = 0.5
    n_steps: int | None = None
    n_calibration: int = CALIBRATION_ROWS

    name: ClassVar[str] = "asset"

    def __post_init__(self) -> None:
        cls = type(self).__name__
        validate_common(self)
        _check_real(cls, "loss_param", self.loss_param, 0.0, math.inf, True)
        _check_real(cls, "rho", self.rho, 0.0, 1.0, True)
        n = self.n_steps
        if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1):
            raise ValueError(f"The 'n_steps' parameter of {cls} must be None or an int in the "
                             f"range [1, inf). Got {n!r} instead.")
        m = self.n_calibration
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"The 'n_calibration' parameter of {cls} must be an int in the "
                             f"range [1, inf). Got {m!r} instead.")

    # -- the step schedule ---------------------------------------------------------------------
    @property
    def averaging(self) -> bool:
        return bool(self.average)

    @property
    def uses_intercept(self) -> bool:
        return bool(self.fit_intercept)

    def avg_start(self) -> float:
        """N-bar: the iterates of the steps j > N-bar are averaged (j >= rho N + 1)."""
        return 0.0 if self.n_steps is None else math.floor(self.rho * self.n_steps)

    def _eta_schedule(self, state: SolverState) -> tuple[float, float]:
        """(ETA0, POWER) of eta_j = ETA0 / j ** POWER."""
        return float(state.eta0), 0.5

    # -- the protocol ------------------------------------------------------------------------
    def init_state(self, n_features: int, n_outputs: int, dtype: np.dtype) -> SolverState:
        state = init_linear_state(n_features, n_outputs, dtype)
        if self.averaging:
            state.avg_coef = np.zeros((n_outputs, n_features), dtype=np.float64)
            state.avg_intercept = np.zeros(n_outputs, dtype=np.float64)
        return state

    def calibrate(self, state: SolverState, block: Block, codes: np.ndarray) -> SolverState:
        """A state with R, B, D_G (``extra``) and eta_1 = D_X / D_G (``eta0``) from M rows."""
        m = min(block.n_samples, int(self.n_calibration))
        if m == 0:
            raise ValueError(f"{type(self).__name__}.calibrate: the block has no rows.")
        X = block.to_matrix()[:m]
        sq = (np.asarray(X.multiply(X).sum(axis=1)).ravel() if hasattr(X, "multiply")
              else np.einsum("ij,ij->i", np.asarray(X, np.float64), np.asarray(X, np.float64)))
        codes = np.asarray(codes)[:m]
        Y = output_targets(codes, state.n_outputs)  # (m, K)
        x_max = float(np.sqrt(sq.max()))
        R, B = self._bounds(Y, x_max)
        d = self._subgradients_at_zero(Y)  # (m, K)
        extra_one = 1.0 if self.uses_intercept else 0.0
        # per output (one-vs-rest outputs are separate problems sharing the step size): the mean
        # over rows and outputs of d^2 (||x||^2 + 1)
        d_g = float(np.sqrt(np.mean((d * d).mean(axis=1) * (sq + extra_one))))
        d_x = math.hypot(R, B) if self.uses_intercept else R
        eta0 = d_x / d_g if d_g > 0.0 else d_x  # D_G = 0: no row has a subgradient yet
        extra = dict(state.extra)
        extra[CONSTANTS_KEY] = np.array([R, B, d_g], dtype=np.float64)
        return replace(state, eta0=float(eta0), extra=extra)

    def _bounds(self, Y: np.ndarray, x_max: float) -> tuple[float, float]:
        lam = float(self.alpha)
        if self.loss in REGRESSION_LOSSES:
            y_max = SAMPLE_BOUND_MARGIN * float(np.abs(Y).max())
            f0 = regression_loss_at_zero(self.loss, y_max, float(self.loss_param))
            R = math.sqrt(2.0 * max(f0, 1e-12) / lam)
            return R, SAMPLE_BOUND_MARGIN * (y_max + R * x_max)
        R = 1.0 / math.sqrt(lam) if self.loss == "hinge" else math.sqrt(
            2.0 * LOSS_AT_ZERO[self.loss] / lam)
        return R, SAMPLE_BOUND_MARGIN * (1.0 + R * x_max)

    def _subgradients_at_zero(self, Y: np.ndarray) -> np.ndarray:
        """|d loss / d p| at p = 0 for each row and output (Table 1's d_l at the first iterate)."""
        from dsvm.kernels.losses import LOSS_CODES, loss_deriv_p

        code = LOSS_CODES[self.loss]
        a = float(self.loss_param)
        return np.abs(np.vectorize(lambda y: loss_deriv_p(code, 0.0, float(y), a))(Y))

    def run_block(
        self, state: SolverState, block: Block, codes: np.ndarray, order: np.ndarray
    ) -> PassStats:
        """One pass over ``block`` rows in ``order``, mutating ``state`` (see the module notes)."""
        who = type(self).__name__
        if CONSTANTS_KEY not in state.extra or not math.isfinite(state.eta0):
            calibrated = self.calibrate(state, block, codes)
            state.eta0, state.extra = calibrated.eta0, calibrated.extra
        args = kernel_inputs(block, codes, order, state, who)
        if int(args.order.shape[0]) == 0:
            return PassStats()
        if self.averaging and state.avg_coef is None:
            state.avg_coef = np.zeros(state.coef.shape, dtype=np.float64)
            state.avg_intercept = np.zeros(state.intercept.shape, dtype=np.float64)
        writable_weights(state)
        R, B, _ = (float(v) for v in state.extra[CONSTANTS_KEY])
        eta0, power = self._eta_schedule(state)
        hp = H.make_hp(
            alpha=float(self.alpha), t=state.t, batch_size=int(self.batch_size),
            loss=loss_code(self.loss), fit_intercept=self.uses_intercept, dtype=state.coef.dtype,
            radius=R, bias_bound=B, eta0=eta0, power=power, average=self.averaging,
            avg_start=self.avg_start(), n_avg=state.n_avg, loss_param=float(self.loss_param),
            regression=args.regression,
        )
        return run_pass_kernel(asset_pass, state, args, hp, average=self.averaging, who=who,
                               paired=True)


@dataclass(frozen=True)
class AssetStarSolver(AssetSolver):
    """ASSET*: no intercept, step 1/(lambda j), projection onto ||w|| <= R, the last iterate.

    The paper's variant for the strongly convex problem without intercept (Section 3). The
    ``fit_intercept`` and ``average`` parameters are accepted for a uniform interface and
    ignored (documented: ASSET* has neither); ``rho`` plays no part.
    """

    name: ClassVar[str] = "asset*"

    @property
    def averaging(self) -> bool:
        return False

    @property
    def uses_intercept(self) -> bool:
        return False

    def init_state(self, n_features: int, n_outputs: int, dtype: np.dtype) -> SolverState:
        return init_linear_state(n_features, n_outputs, dtype)

    def _eta_schedule(self, state: SolverState) -> tuple[float, float]:
        return 1.0 / float(self.alpha), 1.0
