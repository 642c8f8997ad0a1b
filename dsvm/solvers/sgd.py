"""Averaged stochastic gradient descent for linear SVMs (Bottou's SVM-SGD / ASGD).

Minimises, for each output k (one-vs-rest; one output for two classes),

    lambda/2 ||w_k||^2 + (1/n) sum_i s_i loss(w_k . x_i + b_k, y_ik)

with lambda = ``alpha``, by plain stochastic (sub)gradient steps over mini-batches of k rows
(k = 1 is Bottou's svmsgd), at step t = 0, 1, ... (the number of earlier steps):

    eta_t = eta0 / (1 + lambda eta0 t) ** p      p = 0.75 when averaging, 1 otherwise
    w     <- (1 - eta_t lambda) w - (eta_t / k) sum_{i in M} s_i dloss(p_i, y_i) x_i
    b     <- b - (eta_t / k) sum_{i in M} s_i dloss(p_i, y_i)      (unregularised)

and, with ``average=True``, the Polyak-Ruppert average of the iterates (Polyak & Juditsky 1992;
Bottou's svmasgd, Xu 2011), which is what :meth:`SolverState.model` returns:

    abar <- abar + mu_t (w - abar),   mu_t = 1 / (number of averaged iterates so far)

Notes
-----
* **Schedules.** p = 1 is Bottou's svmsgd rate 1/(lambda (t0 + t)) with t0 = 1/(lambda eta0).
  The averaged variant decays more slowly (p = 0.75, as svmasgd), which averaging needs.
* **eta0** is chosen once by :meth:`SGDSolver.calibrate` as in Bottou's ``determineEta0``:
  starting at eta = 1, a factor-2 search for the constant step whose single pass over the
  first <= 1000 rows of a block (from the current weights) gives the lowest regularised
  objective on those rows; like Bottou we keep the lower end of the final bracket when the
  walk went down (a slightly conservative step). Deterministic: same block and state, same
  eta0. A fixed ``eta0`` skips the search. If ``run_block`` meets a state without eta0, it
  calibrates on the block it was given.
* **Averaging start.** ``average_start = a`` averages the iterates of the steps s > a
  (s = 1, 2, ... counts steps): 0 averages from the start (every iterate counts), as the
  sums in Polyak-Juditsky; svmasgd starts after one epoch (a = n_rows / batch_size), which
  keeps the far-from-optimal first iterates out of the average. The estimator layer knows n
  and can set it. On a9a (lambda = 1/n, no intercept) both reach 0.3539 after 20 epochs
  (LIBLINEAR: 0.35115); starting at 0 is better during the first epochs (0.3555 against
  0.3876 after one).
* **O(nnz) averaging.** The kernel stores w = scale * u and abar = beta * v + gamma * u, so a
  sparse step touches only the row's non-zeros (Bottou's svmasgd bookkeeping); see
  :func:`dsvm.kernels.passes.sgd_pass`.
* **Penalties.** ``penalty="l1"``/``"elasticnet"`` (with ``l1_ratio``) run FOLOS
  (forward step on the loss and the L2 part, soft-threshold on the L1 part, applied lazily so
  a sparse row costs O(nnz)); see :mod:`dsvm.solvers.penalties` and
  :mod:`dsvm.kernels.prox`. They return the last iterate (no average: it would not be sparse)
  with the schedule's p = 1. The eta0 search still uses the plain L2 pass with the whole alpha.
* **Precision.** ``coef``/``intercept`` are in the data's dtype (float32 data trains float32
  weights, with float32 dots). The averages ``avg_coef``/``avg_intercept`` are always float64:
  a running mean over millions of steps adds increments ~1/n_avg smaller than itself, which
  float32 would round away. Cast them when exporting a float32 model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from dsvm.data.blocks import Block, CSRBlock
from dsvm.kernels import hparams as H
from dsvm.kernels.losses import loss_code
from dsvm.kernels.passes import sgd_pass
from dsvm.solvers.base import PassStats, SolverState
from dsvm.solvers.objective import (
    KernelInputs,
    kernel_inputs,
    run_pass_kernel,
    validate_common,
    writable_weights,
)
from dsvm.solvers.pegasos import init_linear_state
from dsvm.solvers.penalties import (
    l1_part,
    l2_part,
    penalty_value,
    run_prox_kernel,
    validate_penalty,
)
from dsvm.solvers.targets import LossSpec, output_targets, pointwise_losses

CALIBRATION_ROWS = 1000  # rows of a block that the eta0 search looks at (Bottou: 1000)
_ETA_FACTOR = 2.0
_ETA_MAX_TRIES = 60  # 2**60 either way from 1: far past any useful step size


def compact_sample(block: Block, codes: np.ndarray, state: SolverState,
                   m: int) -> tuple[tuple[Block, np.ndarray], SolverState]:
    """The first ``m`` rows of ``block`` (and their codes) with a state to search eta0 from:
    for sparse rows and all-zero weights (a fit's start), only the columns those rows use.

    A trial pass from zero weights changes only the columns its rows touch; the others stay 0
    under the L2 shrink and the L1 prox alike, and add nothing to the penalty or the margins.
    So the search on the used columns picks the same eta0, in O(nnz of the sample) instead of
    a dozen O(n_features) sweeps per trial (0.2 s of a 0.6 s epoch at 2^22 features).
    """
    if not isinstance(block, CSRBlock) or state.coef.any():
        return (block, codes), state
    lo, hi = int(block.indptr[0]), int(block.indptr[m])
    cols, inv = np.unique(block.indices[lo:hi], return_inverse=True)
    if 2 * len(cols) > block.n_features:
        return (block, codes), state
    sw = None if block.sample_weight is None else block.sample_weight[:m]
    small = CSRBlock(indptr=np.asarray(block.indptr[:m + 1], np.int64) - lo,
                     indices=inv.astype(np.int32).reshape(-1), data=block.data[lo:hi],
                     y=block.y[:m], n_features=max(1, len(cols)), sample_weight=sw)
    fresh = init_linear_state(small.n_features, state.n_outputs, state.coef.dtype)
    return (small, codes[:m]), replace(fresh, intercept=state.intercept.copy(), t=state.t,
                                       n_avg=state.n_avg)


@dataclass(frozen=True)
class SGDSolver:
    """Plain or averaged SGD with Bottou's step-size schedule and eta0 calibration.

    Parameters
    ----------
    loss : {"hinge", "squared_hinge", "logistic"}, default="hinge"
    alpha : float, default=1e-4
        L2 regularisation strength lambda. Values must be in the range (0.0, inf).
    fit_intercept : bool, default=True
        Learn an unregularised intercept with the same step as w.
    batch_size : int, default=1
        Rows per step. Values must be in the range [1, inf).
    average : bool, default=True
        Keep the Polyak-Ruppert average of the iterates and predict with it.
    eta0 : float or None, default=None
        Initial step; None calibrates it on the data. Values must be in the range (0.0, inf).
    average_start : int, default=0
        Average the iterates of the steps after this many. Values must be in the range
        [0, inf).
    """

    loss: str = "hinge"
    alpha: float = 1e-4
    fit_intercept: bool = True
    batch_size: int = 1
    average: bool = True
    eta0: float | None = None
    average_start: int = 0
    loss_param: float = 0.0
    penalty: str = "l2"
    l1_ratio: float = 0.15

    name: ClassVar[str] = "sgd"

    def __post_init__(self) -> None:
        validate_common(self)
        validate_penalty(self)
        if self.eta0 is not None and not (
            isinstance(self.eta0, (int, float, np.floating, np.integer))
            and not isinstance(self.eta0, bool)
            and 0.0 < float(self.eta0) < math.inf
        ):
            raise ValueError(
                "The 'eta0' parameter of SGDSolver must be None or a float in the range "
                f"(0.0, inf). Got {self.eta0!r} instead."
            )
        a = self.average_start
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or a < 0:
            raise ValueError(
                "The 'average_start' parameter of SGDSolver must be an int in the range "
                f"[0, inf). Got {a!r} instead."
            )

    def penalty_of(self, coef: np.ndarray) -> float:
        """The penalty at ``coef``: alpha/2 ||w||^2, or the L1 / elastic-net one."""
        return penalty_value(self, coef)

    @property
    def averaging(self) -> bool:
        """Whether a running average is kept: not with an L1 part (it would not be sparse)."""
        return bool(self.average) and self.penalty == "l2"

    @property
    def power(self) -> float:
        """Exponent p of the step schedule eta0 / (1 + lambda eta0 t) ** p."""
        return 0.75 if self.averaging else 1.0

    def init_state(self, n_features: int, n_outputs: int, dtype: np.dtype) -> SolverState:
        """Zero weights in ``dtype``; float64 zero averages when averaging; eta0 if fixed."""
        state = init_linear_state(n_features, n_outputs, dtype)
        if self.averaging:
            state.avg_coef = np.zeros((n_outputs, n_features), dtype=np.float64)
            state.avg_intercept = np.zeros(n_outputs, dtype=np.float64)
        state.eta0 = float(self.eta0) if self.eta0 is not None else math.nan
        return state

    def calibrate(self, state: SolverState, block: Block, codes: np.ndarray) -> SolverState:
        """A state with ``eta0`` set: the fixed ``eta0``, or Bottou's search on <= 1000 rows.

        ``state`` itself is not modified.
        """
        if self.eta0 is not None:
            return replace(state, eta0=float(self.eta0))
        m = min(block.n_samples, CALIBRATION_ROWS)
        if m == 0:
            raise ValueError("SGDSolver.calibrate: the block has no rows to calibrate eta0 on.")
        sample, sample_state = compact_sample(block, codes, state, m)
        args = kernel_inputs(sample[0], sample[1], np.arange(m, dtype=np.int64), sample_state,
                             "SGDSolver")
        return replace(state, eta0=self._search_eta0(sample_state, args))

    def _search_eta0(self, state: SolverState, args: KernelInputs) -> float:
        """Bottou's determineEta0: factor-2 walk from eta = 1 towards the lower cost."""

        def cost(eta: float) -> float:
            return self._trial_cost(state, args, eta)

        lo_eta, hi_eta = 1.0, _ETA_FACTOR
        lo_cost, hi_cost = cost(lo_eta), cost(hi_eta)
        # both diverged (e.g. the squared loss on unscaled rows): the step must come down
        if lo_cost < hi_cost or (math.isinf(lo_cost) and math.isinf(hi_cost)):
            for _ in range(_ETA_MAX_TRIES):
                hi_eta, hi_cost = lo_eta, lo_cost
                lo_eta = hi_eta / _ETA_FACTOR
                lo_cost = cost(lo_eta)
                if not lo_cost < hi_cost and math.isfinite(lo_cost):
                    break
        elif hi_cost < lo_cost:
            for _ in range(_ETA_MAX_TRIES):
                lo_eta, lo_cost = hi_eta, hi_cost
                hi_eta = lo_eta * _ETA_FACTOR
                hi_cost = cost(hi_eta)
                if not hi_cost < lo_cost:
                    break
        return lo_eta

    def _trial_cost(self, state: SolverState, args: KernelInputs, eta: float) -> float:
        """Objective on the sample after one constant-step pass over it from ``state``."""
        coef = np.array(state.coef, order="C")
        intercept = np.array(state.intercept, order="C")
        hp = self._hp(state, args, eta0=eta, power=0.0, average=False)
        # The trial keeps the intercept fixed: on imbalanced data one pass over 1,000 rows moving
        # only the bias (tiny steps) beats any step that starts learning w, which picked eta0 ~
        # 1e-3 and a model predicting the majority class (ijcnn1 through a Nystroem map: 90.5%).
        # The step is for w; the intercept follows the same schedule once training starts.
        hp[H.FIT_INTERCEPT] = 0.0
        empty_avg = np.zeros((coef.shape[0], 0))
        with np.errstate(all="ignore"):
            sgd_pass(args.X, args.codes, args.sample_weight, args.order, coef, intercept,
                     empty_avg, np.zeros(coef.shape[0]), hp, np.empty((0, 0, 2)))
            objective = self._sample_objective(coef, intercept, args)
        return objective if math.isfinite(objective) else math.inf

    def _sample_objective(
        self, coef: np.ndarray, intercept: np.ndarray, args: KernelInputs
    ) -> float:
        """alpha/2 ||W||^2 + weighted mean loss over the calibration rows (float64)."""
        c64 = coef.astype(np.float64)
        rows = args.order
        X = args.X
        if isinstance(X, tuple):
            indptr, indices, data = X
            Xm = sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, c64.shape[1]))
            P = np.asarray(Xm[rows] @ c64.T)
        else:
            P = np.asarray(X[rows], dtype=np.float64) @ c64.T
        P = P + intercept.astype(np.float64)
        Y = output_targets(args.codes[rows], c64.shape[0], regression=args.regression)
        per_row = pointwise_losses(LossSpec(self.loss, float(self.loss_param)), P, Y).sum(axis=1)
        sw = args.sample_weight[rows] if args.sample_weight.size else None
        mean = float(per_row.mean()) if sw is None else float(sw @ per_row) / len(rows)
        return penalty_value(self, c64) + mean

    def _hp(self, state: SolverState, args: KernelInputs, *, eta0: float, power: float,
            average: bool) -> np.ndarray:
        return H.make_hp(
            alpha=self.alpha,
            t=state.t,
            batch_size=self.batch_size,
            loss=loss_code(self.loss),
            fit_intercept=self.fit_intercept,
            dtype=state.coef.dtype,
            intercept_rate=self._intercept_rate(eta0),
            eta0=eta0,
            power=power,
            average=average,
            avg_start=float(self.average_start),
            n_avg=state.n_avg,
            loss_param=float(self.loss_param),
            l1=l1_part(self),
            l2=l2_part(self),
            regression=args.regression,
        )

    def _intercept_rate(self, eta0: float) -> float:
        """The intercept's step over w's: 1, but at most 1 / eta0 for a loss whose derivative
        grows with the residual (squared, squared hinge), whose intercept diverges with a
        step above 2 (its curvature is 1 on every row). eta0 is searched with the intercept
        fixed (:meth:`_trial_cost`) and fits w's curvature, ``||x||^2``: small rows (raw
        ``load_diabetes()``, ``||x||^2`` about 0.02) took eta0 to 32 and more, and the
        squared loss's fit ended in non-finite weights."""
        if self.loss in ("squared", "squared_hinge") and math.isfinite(eta0) and eta0 > 1.0:
            return 1.0 / eta0
        return 1.0

    def run_block(
        self, state: SolverState, block: Block, codes: np.ndarray, order: np.ndarray
    ) -> PassStats:
        """One pass over ``block`` rows in ``order``, mutating ``state``.

        Updates coef, intercept, t and, when averaging, avg_coef, avg_intercept and n_avg.
        A state without eta0 (never calibrated) is calibrated on this block first.
        """
        who = "SGDSolver"
        args = kernel_inputs(block, codes, order, state, who)
        n_rows = int(args.order.shape[0])
        if n_rows == 0:
            return PassStats()
        if not math.isfinite(state.eta0):
            state.eta0 = self.calibrate(state, block, codes).eta0
        if self.averaging and state.avg_coef is None:
            state.avg_coef = np.zeros(state.coef.shape, dtype=np.float64)
            state.avg_intercept = np.zeros(state.intercept.shape, dtype=np.float64)
        writable_weights(state)
        hp = self._hp(state, args, eta0=state.eta0, power=self.power, average=self.averaging)
        if self.penalty != "l2":
            return run_prox_kernel(state, args, hp, who=who)
        return run_pass_kernel(sgd_pass, state, args, hp, average=self.average, who=who,
                               paired=True)
