"""NESVM's iterations: Algorithm 1 (Eq. 33-35) inside Algorithm 2 (homotopy), one data pass each.

The problem, the smoothing, the gradient shares and the metric are in :mod:`dsvm.solvers.nesvm`
(whose docstring explains the method and where dsvm's steps differ from the paper's); this
module runs the iterations on the summed pass results an ``oracle`` returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dsvm.kernels.nesvm import STAT_ROWS
from dsvm.solvers.nesvm import (
    STALL_PASSES,
    GradientShare,
    NesvmProblem,
    NesvmSettings,
    Oracle,
    PassResult,
    Points,
    read_pass,
    scaling,
)


@dataclass
class NesvmResult:
    coef: np.ndarray  # (K, p) float64, best measured point per output
    intercept: np.ndarray  # (K,)
    history: list[dict[str, Any]] = field(default_factory=list)
    converged: bool = False
    n_passes: int = 0


@dataclass
class _Best:
    """The measured point with the lowest true objective, per output."""

    coef: np.ndarray
    intercept: np.ndarray
    true: np.ndarray

    def offer(self, coef: np.ndarray, intercept: np.ndarray, true: np.ndarray) -> None:
        better = true < self.true
        self.coef[better] = coef[better]
        self.intercept[better] = intercept[better]
        self.true[better] = true[better]


@dataclass
class _Stage:
    """Eq. 33-35 for one value of mu, from a warm start (the prox centre)."""

    centre_w: np.ndarray
    centre_b: np.ndarray
    d_w: np.ndarray  # metric per feature (empty: Euclidean, use d_b)
    d_b: float
    fit_intercept: bool
    k: int = 0

    def __post_init__(self) -> None:
        self.gsum_w = np.zeros_like(self.centre_w)
        self.gsum_b = np.zeros_like(self.centre_b)
        self.last_w = np.zeros_like(self.centre_w)
        self.last_b = np.zeros_like(self.centre_b)

    def _inv(self, g_w: np.ndarray, g_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """D^-1 g."""
        inv_w = g_w / (self.d_w if self.d_w.size else self.d_b)
        inv_b = g_b / self.d_b if self.fit_intercept else np.zeros_like(g_b)
        return inv_w, inv_b

    def dual_norm_sq(self, g_w: np.ndarray, g_b: np.ndarray) -> np.ndarray:
        """||g||_{D^-1}^2 per output."""
        inv_w, inv_b = self._inv(g_w, g_b)
        return np.einsum("kj,kj->k", g_w, inv_w) + g_b * inv_b

    def step(self, w: np.ndarray, b: np.ndarray, g_w: np.ndarray, g_b: np.ndarray,
             factor: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(y^k, theta^k+1) from theta^k = (w, b) and its gradient; ``factor`` scales L."""
        k = self.k
        inv_w, inv_b = self._inv(g_w, g_b)
        # y^k = theta^k - D^-1 grad / L                                         (Eq. 33)
        y_w, y_b = w - inv_w / factor, b - inv_b / factor
        # z^k = theta* - D^-1 sum_i (i+1)/2 grad_i / L                          (Eq. 34)
        self.last_w = 0.5 * (k + 1) / factor * inv_w
        self.last_b = 0.5 * (k + 1) / factor * inv_b
        self.gsum_w += self.last_w
        self.gsum_b += self.last_b
        z_w, z_b = self.centre_w - self.gsum_w, self.centre_b - self.gsum_b
        # theta^k+1 = 2/(k+3) z^k + (k+1)/(k+3) y^k                              (Eq. 35)
        a, c = 2.0 / (k + 3), (k + 1) / (k + 3)
        self.k += 1
        return y_w, y_b, a * z_w + c * y_w, a * z_b + c * y_b

    def undo(self) -> None:
        """Undo the last :meth:`step` (its term of Eq. 34's sum), to redo it with a larger L."""
        self.k -= 1
        self.gsum_w -= self.last_w
        self.gsum_b -= self.last_b

    def change_metric(self, d_w: np.ndarray, d_b: float, old_factor: float,
                      factor: float) -> None:
        """Continue with the metric and step factor of a smaller mu: the stored sum of Eq. 34 is
        D^-1 sum_i a_i grad_i / factor; it is re-expressed with the new D and factor, so that
        z^k stays the minimiser of L d2(z) + sum_i a_i <grad_i, z> with the current L."""
        old_w = self.d_w if self.d_w.size else self.d_b
        new_w = d_w if d_w.size else d_b
        scale_w = old_w * old_factor / (new_w * factor)
        scale_b = self.d_b * old_factor / (d_b * factor)
        for name, scale in (("gsum_w", scale_w), ("last_w", scale_w), ("gsum_b", scale_b),
                            ("last_b", scale_b)):
            setattr(self, name, getattr(self, name) * scale)
        self.d_w, self.d_b = d_w, d_b


@dataclass
class _Previous:
    """theta^k-1 and what was measured there: the descent test of y^k-1 and the stopping test
    compare against it, and a failed step is redone from it."""

    w: np.ndarray
    b: np.ndarray
    grad_w: np.ndarray
    grad_b: np.ndarray
    smoothed: np.ndarray  # F_mu per output
    true: np.ndarray  # F per output
    gnorm: np.ndarray  # ||grad||^2_{D^-1} per output
    factor: float

    def at_smaller_mu(self, ratio: float) -> None:
        """Replace F_mu by an upper bound of F_mu' (mu' = ratio mu < mu): h_mu and the Huber
        function are maxima of functions affine in mu, so F_mu is convex in mu, and F_0 = F:
        F_mu' <= F_mu + (1 - ratio) (F - F_mu)."""
        self.smoothed = self.smoothed + (1.0 - ratio) * (self.true - self.smoothed)


class _Run:
    """One run of Algorithm 1 inside Algorithm 2: the iterate, the stage, what was measured."""

    def __init__(self, oracle: Oracle, problem: NesvmProblem, settings: NesvmSettings,
                 coef0: np.ndarray, intercept0: np.ndarray,
                 on_pass: Callable[[dict[str, Any], np.ndarray, np.ndarray], Any] | None,
                 clock: Callable[[], float]) -> None:
        K = coef0.shape[0]
        self.oracle, self.problem, self.settings = oracle, problem, settings
        self.on_pass, self.clock = on_pass, clock
        self.theta_w = np.array(coef0, dtype=np.float64)
        self.theta_b = (np.array(intercept0, dtype=np.float64) if problem.fit_intercept
                        else np.zeros(K))
        self.best = _Best(self.theta_w.copy(), self.theta_b.copy(), np.full(K, np.inf))
        self.result = NesvmResult(coef=self.best.coef, intercept=self.best.intercept)
        self.first: GradientShare | None = None
        self.passes = 0
        self.stages = settings.schedule()
        self.stage: _Stage | None = None
        self.prev: _Previous | None = None  # theta^k-1, for the tests on y^k-1 and theta^k
        self.prev_y: tuple[np.ndarray, np.ndarray] | None = None  # y^k-1, measured next pass
        self.factor = 1.0
        self.stopped = False
        self.stall = _Stall()
        self.stage_no, self.stage_done = 0, False
        self.on_snapshot: Callable[[dict[str, np.ndarray], bool], None] | None = None
        self.pass_solved = False  # whether the pass just yielded solved its stage

    def begin_stage(self, stage_no: int, mu: float, start: float) -> None:
        settings = self.settings
        if settings.continuation and self.stage is not None and self.first is not None:
            # Continue Eq. 33-35 at the smaller mu (module docstring, "Homotopy"): the learned
            # curvature carries over (the factor is relative to L_mu, which grows as 1/mu).
            ratio = mu / self.stages[stage_no - 1]
            new_factor = min(1.0, max(start, self.factor * ratio))
            d_w, d_b = scaling(self.problem, self.first.stats, self.first.colstats, mu,
                               settings.precondition)
            self.stage.change_metric(d_w, d_b, self.factor, new_factor)
            self.factor = new_factor
            if self.prev is not None:
                self.prev.at_smaller_mu(ratio)
        else:
            # Algorithm 2, step 1: Eq. 33-35 afresh from the warm start; L_mu re-estimated.
            self.stage, self.prev, self.prev_y, self.factor = None, None, None, start

    def measure(self, mu: float) -> PassResult:
        """One data pass: the gradient at theta^k and the objectives at theta^k and y^k-1."""
        points = _points(self.theta_w, self.theta_b, self.prev_y, collect=self.first is None)
        share = self.oracle(points, mu)
        self.passes += 1
        if self.first is None:
            self.first = share
        res = read_pass(share, points, self.problem, mu)
        _check_finite(res, self.passes)
        if self.stage is None:
            # L_mu (and the metric) for this mu from the first pass's sums (Algorithm 2,
            # step 2); Eq. 33-35 restart from the warm start theta^0 = prox centre.
            d_w, d_b = scaling(self.problem, self.first.stats, self.first.colstats, mu,
                               self.settings.precondition)
            self.stage = _Stage(self.theta_w.copy(), self.theta_b.copy(), d_w, d_b,
                                self.problem.fit_intercept)
        self.best.offer(self.theta_w, self.theta_b, res.true[0])
        if self.prev_y is not None:
            self.best.offer(self.prev_y[0], self.prev_y[1], res.true[1])
        return res

    def descent_test(self, res: PassResult, stall: _Stall) -> bool:
        """Descent test of the gradient step y^k-1 = theta^k-1 - D^-1 g / (factor L):
        F(y) <= F(theta) - ||g||^2_{D^-1} / (2 factor L) holds for factor = 1 (L is a
        Lipschitz bound); when it fails the factor was too small: double it. Returns whether
        the step went uphill and is to be taken back (settings.restart)."""
        if self.prev_y is not None:
            stall.observe(res.smoothed[1], self.factor)
        prev = self.prev
        if self.prev_y is None or prev is None:
            return False
        slack = 1e-12 * np.abs(prev.smoothed)
        if np.any(res.smoothed[1] > prev.smoothed - prev.gnorm / (2 * prev.factor) + slack):
            self.factor = min(1.0, 2.0 * self.factor)
            return self.settings.restart and bool(np.any(res.smoothed[1]
                                                         > prev.smoothed + slack))
        return False

    def record(self, res: PassResult, stage_no: int, mu: float, uphill: bool) -> dict[str, Any]:
        return {
            "epoch": self.passes,
            "stage": stage_no,
            "mu": mu,
            "smoothed_objective": float(res.smoothed[0].sum()),
            "iterate_objective": float(res.true[0].sum()),
            "smoothed_objective_y": (float(res.smoothed[1].sum()) if self.prev_y is not None
                                     else None),
            "objective": float(self.best.true.sum()),
            "train_loss": float(res.loss.sum()),
            "lipschitz_factor": self.factor,
            "n_rows": int(res.stats[STAT_ROWS]),
            "restart": uphill,
        }

    def backtrack(self) -> None:
        """The step from theta^k-1 polluted Eq. 34's weighted sum with a large weight and led
        uphill; take it back and redo it with the doubled factor from theta^k-1, whose
        gradient is known (no pass). theta^k is dropped."""
        stage, prev = self.stage, self.prev
        assert stage is not None and prev is not None
        stage.undo()
        prev.gnorm = stage.dual_norm_sq(prev.grad_w, prev.grad_b)
        prev.factor = self.factor
        y_w, y_b, self.theta_w, self.theta_b = stage.step(prev.w, prev.b, prev.grad_w,
                                                          prev.grad_b, self.factor)
        self.prev_y = (y_w, y_b)

    def stage_solved(self, res: PassResult, last: bool) -> bool:
        """Algorithm 1's test on consecutive iterates; with continuation, also whether a pass
        gained less than a share of the stage's own smoothing error F - F_mu."""
        if self.prev is None:
            return False
        f_mu = float(res.smoothed[0].sum())
        change = abs(f_mu - float(self.prev.smoothed.sum()))
        done = self.settings.tol is not None and change < self.settings.tol
        smoothing_error = float((res.true[0] - res.smoothed[0]).sum())
        return done or (self.settings.continuation and not last
                        and change < self.settings.stage_gap * smoothing_error)

    def advance(self, res: PassResult, stall: _Stall, start: float,
                record: dict[str, Any]) -> None:
        """theta^k+1 from theta^k (Eq. 33-35), with the secant step's new factor."""
        stage = self.stage
        assert stage is not None
        if self.settings.step == "secant" and self.prev is not None:
            # The curvature met along theta^k-1 -> theta^k sets the step (module
            # docstring, "Adaptive step"); it may lower the factor.
            self.factor = max(stall.floor, secant_factor(stage, self.prev, self.theta_w,
                                                         self.theta_b, res, floor=start * 1e-3))
            record["lipschitz_factor"] = self.factor
        self.prev = _Previous(self.theta_w.copy(), self.theta_b.copy(), res.grad.copy(),
                              res.grad_b.copy(), res.smoothed[0].copy(), res.true[0].copy(),
                              stage.dual_norm_sq(res.grad, res.grad_b), self.factor)
        y_w, y_b, self.theta_w, self.theta_b = stage.step(self.theta_w, self.theta_b, res.grad,
                                                          res.grad_b, self.factor)
        self.prev_y = (y_w, y_b)

    def run_stage(self, stage_no: int, mu: float) -> Generator[dict[str, Any], Any, bool]:
        """Passes at ``mu`` until the stage is solved or the budget is spent; whether solved.
        Yields each pass's record and is sent whether the caller stops there."""
        last = stage_no == len(self.stages) - 1
        start = _start_factor(self.settings, mu)
        if (stage_no, False) != (self.stage_no, self.stage_done) or self.passes == 0:
            self.begin_stage(stage_no, mu, start)  # (not when resuming inside this stage)
            self.stall = _Stall()
        self.stage_no, self.stage_done = stage_no, False
        stall = self.stall
        while self.passes < self.settings.max_passes:
            tic = self.clock()
            res = self.measure(mu)
            uphill = self.descent_test(res, stall)
            record = self.record(res, stage_no, mu, uphill)
            done = False
            if uphill:
                self.backtrack()
            else:
                done = self.stage_solved(res, last)
                self.advance(res, stall, start, record)
            record["seconds"] = self.clock() - tic
            record["rows_per_s"] = record["n_rows"] / max(record["seconds"], 1e-12)
            self.result.history.append(record)
            self.pass_solved = done
            stop = bool((yield record))
            self.stage_done = done or stop
            if self.on_snapshot is not None:
                self.on_snapshot(self.snapshot(), stop)
            if stop:
                self.stopped = True  # the caller's stopping rule
                return True
            if done:
                return True
        return False

    def best_model(self) -> tuple[np.ndarray, np.ndarray]:
        """The best measured point so far (coef, intercept): what the run returns if it stops
        now (the arrays it keeps updating)."""
        return self.best.coef, self.best.intercept

    def snapshot(self) -> dict[str, np.ndarray]:
        """Everything the run needs to go on exactly as it would have after this pass (named
        float64 arrays; scalars as 0-d arrays): a checkpoint's ``extra``."""
        out: dict[str, Any] = {
            "theta_w": self.theta_w, "theta_b": self.theta_b, "best_w": self.best.coef,
            "best_b": self.best.intercept, "best_true": self.best.true, "factor": self.factor,
            "passes": self.passes, "stage_no": self.stage_no, "stage_done": self.stage_done,
            "stall_floor": self.stall.floor, "stall_misses": self.stall.misses,
        }
        if self.stall.lowest is not None:
            out["stall_lowest"] = self.stall.lowest
        if self.first is not None:
            out["first_stats"], out["first_colstats"] = self.first.stats, self.first.colstats
        if self.prev_y is not None:
            out["y_w"], out["y_b"] = self.prev_y
        stage, prev = self.stage, self.prev
        if stage is not None:
            out.update({f"stage_{k}": getattr(stage, k) for k in _STAGE_FIELDS})
        if prev is not None:
            out.update({f"prev_{k}": getattr(prev, k) for k in _PREVIOUS_FIELDS})
        return {k: np.array(v, dtype=np.float64) for k, v in out.items()}

    def snapshot_after(self, stop: bool) -> dict[str, np.ndarray]:
        """The :meth:`snapshot` of the pass just yielded as it is once the run is sent ``stop``
        (its stage ends there if the pass solved it or the caller stops): the training layer's
        checkpoint, written before the run goes on."""
        out = self.snapshot()
        out["stage_done"] = np.array(self.pass_solved or stop, dtype=np.float64)
        return out

    def restore(self, saved: dict[str, np.ndarray], history: list[dict[str, Any]]) -> None:
        """Go on from a :meth:`snapshot` (and the history of its passes)."""
        self.theta_w, self.theta_b = saved["theta_w"].copy(), saved["theta_b"].copy()
        # (in place: the result holds the best point's arrays)
        self.best.coef[...], self.best.intercept[...] = saved["best_w"], saved["best_b"]
        self.best.true[...] = saved["best_true"]
        self.factor, self.passes = float(saved["factor"]), int(saved["passes"])
        self.stage_no, self.stage_done = int(saved["stage_no"]), bool(saved["stage_done"])
        self.stall = _Stall(float(saved["stall_floor"]), saved.get("stall_lowest"),
                            int(saved["stall_misses"]))
        if "first_stats" in saved:
            self.first = GradientShare(np.zeros((0, 0)), np.zeros(0), np.zeros((0, 2)),
                                       saved["first_stats"].copy(),
                                       saved["first_colstats"].copy())
        if "y_w" in saved:
            self.prev_y = (saved["y_w"].copy(), saved["y_b"].copy())
        if "stage_k" in saved:
            self.stage = _Stage(saved["stage_centre_w"].copy(), saved["stage_centre_b"].copy(),
                                saved["stage_d_w"].copy(), float(saved["stage_d_b"]),
                                self.problem.fit_intercept, int(saved["stage_k"]))
            for name in ("gsum_w", "gsum_b", "last_w", "last_b"):
                setattr(self.stage, name, saved[f"stage_{name}"].copy())
        if "prev_factor" in saved:
            arrays = {k: saved[f"prev_{k}"].copy() for k in _PREVIOUS_FIELDS[:-1]}
            self.prev = _Previous(**arrays, factor=float(saved["prev_factor"]))
        self.result.history = list(history)

    def run(self) -> NesvmResult:
        """Every pass, each record given to ``on_pass``, which says whether to stop."""
        passes = self.iterate()
        try:
            record = next(passes)
            while True:
                stop = self.on_pass is not None and bool(self.on_pass(record, self.best.coef,
                                                                      self.best.intercept))
                record = passes.send(stop)
        except StopIteration as end:
            return end.value  # type: ignore[no-any-return]

    def iterate(self) -> Generator[dict[str, Any], Any, NesvmResult]:
        """The run as a generator: yields each pass's record (the best measured point so far
        is ``self.best``) and is sent whether to stop there; returns the result."""
        for stage_no, mu in enumerate(self.stages):
            if stage_no < self.stage_no:
                continue  # (resumed: done before the checkpoint)
            if stage_no == self.stage_no and self.stage_done and self.passes:
                solved = True  # resumed after the pass that solved this stage
            else:
                solved = yield from self.run_stage(stage_no, mu)
            if stage_no == len(self.stages) - 1 or self.stopped:
                self.result.converged = solved
            if self.stopped:
                break
            if self.passes >= self.settings.max_passes and not solved:
                break
            if not self.settings.continuation:
                # Warm start of the next stage: the best measured point (see module docstring).
                # The true objective does not depend on mu, so ``best`` stays comparable.
                self.theta_w, self.theta_b = self.best.coef.copy(), self.best.intercept.copy()
        self.result.n_passes = self.passes
        return self.result


def nesvm_minimize(
    oracle: Oracle,
    problem: NesvmProblem,
    settings: NesvmSettings,
    coef0: np.ndarray,
    intercept0: np.ndarray,
    on_pass: Callable[[dict[str, Any], np.ndarray, np.ndarray], Any] | None = None,
    clock: Callable[[], float] | None = None,
    checkpoints: Callable[[dict[str, np.ndarray], bool], None] | None = None,
    resume: tuple[dict[str, np.ndarray], list[dict[str, Any]]] | None = None,
) -> NesvmResult:
    """Algorithm 1 inside Algorithm 2, one ``oracle`` call (data pass) per iteration.

    ``on_pass(record, coef, intercept)`` is called after every pass with the history record and
    the best measured model so far (what would be returned if the fit stopped there); when it
    returns True the run stops there, converged (the estimators' stopping rule).
    ``checkpoints(snapshot, stopped)`` is then given the run's state after the pass, and
    ``resume=(snapshot, history)`` goes on from one: the passes after it are those the
    uninterrupted run makes (the same oracle sums give the same bits).
    """
    run = nesvm_run(oracle, problem, settings, coef0, intercept0, clock=clock,
                    checkpoints=checkpoints, resume=resume)
    run.on_pass = on_pass
    return run.run()


def nesvm_run(
    oracle: Oracle,
    problem: NesvmProblem,
    settings: NesvmSettings,
    coef0: np.ndarray,
    intercept0: np.ndarray,
    *,
    clock: Callable[[], float] | None = None,
    checkpoints: Callable[[dict[str, np.ndarray], bool], None] | None = None,
    resume: tuple[dict[str, np.ndarray], list[dict[str, Any]]] | None = None,
) -> _Run:
    """The run :func:`nesvm_minimize` makes, for a caller that drives its passes itself:
    ``run.iterate()`` yields each pass's record and is sent whether to stop there (the training
    layer's loop, :mod:`dsvm.training.nesvm`); ``run.best_model()`` is the model so far."""
    import time

    run = _Run(oracle, problem, settings, coef0, intercept0, None, clock or time.perf_counter)
    run.on_snapshot = checkpoints
    if resume is not None:
        run.restore(*resume)
    return run


# What a checkpoint keeps of a stage (Eq. 33-35's running sums) and of theta^k-1
_STAGE_FIELDS = ("centre_w", "centre_b", "d_w", "d_b", "k", "gsum_w", "gsum_b", "last_w",
                 "last_b")
_PREVIOUS_FIELDS = ("w", "b", "grad_w", "grad_b", "smoothed", "true", "gnorm", "factor")


def secant_factor(stage: _Stage, prev: _Previous, w: np.ndarray, b: np.ndarray,
                  res: PassResult, floor: float) -> float:
    """The step factor from the curvature along the last step s = theta^k - theta^k-1: the
    local Lipschitz estimate ||grad^k - grad^k-1||_{D^-1} / ||s||_D in the metric D, where the
    bound is 1 (so the factor is at most 1; ``floor`` keeps it positive when the gradient did
    not change)."""
    s_w, s_b = w - prev.w, b - prev.b
    d = stage.d_w if stage.d_w.size else stage.d_b
    s_norm = float(np.sum(d * s_w * s_w))
    if stage.fit_intercept:
        s_norm += stage.d_b * float(np.sum(s_b * s_b))
    if s_norm <= 0.0:
        return prev.factor
    g_norm = float(stage.dual_norm_sq(res.grad - prev.grad_w, res.grad_b - prev.grad_b).sum())
    return float(min(1.0, max(floor, math.sqrt(g_norm / s_norm))))


@dataclass
class _Stall:
    """Safeguard of the secant step. The hinge's gradient is bounded, so a long step meets a
    small secant curvature, which lengthens the next step; with the estimate scaled by 0.7 this
    ran away on a9a, w8a, phishing, ijcnn1 and skin_nonskin (the objective stuck at 1.6-19% above
    the optimum). When STALL_PASSES passes in a row bring no new lowest F_mu(y^k), the factor's
    floor doubles (from the factor then in use)."""

    floor: float = 0.0
    lowest: np.ndarray | None = None
    misses: int = 0

    def observe(self, smoothed_y: np.ndarray, factor: float) -> None:
        if self.lowest is not None and np.any(smoothed_y > self.lowest):
            self.misses += 1
            if self.misses >= STALL_PASSES:
                self.floor = min(1.0, 2.0 * max(factor, self.floor))
                self.misses = 0
            return
        self.lowest = np.array(smoothed_y, dtype=np.float64)
        self.misses = 0


def _start_factor(settings: NesvmSettings, mu: float) -> float:
    """The step factor a stage starts from. Plain NESVM and Algorithm 2 as stated: lipschitz_start
    (relative to the stage's L_mu). Continuation: lipschitz_start relative to L at the target
    mu, i.e. the same first step length whatever mu0 is (L_mu grows as 1/mu, the curvature the
    iterates meet does not; a9a: factor 0.5 at mu = 1 and 0.0156 at mu = 0.03)."""
    start = float(settings.lipschitz_start)
    if settings.continuation:
        start *= mu / settings.mu
    return min(1.0, start)


def _points(theta_w: np.ndarray, theta_b: np.ndarray,
            prev_y: tuple[np.ndarray, np.ndarray] | None, collect: bool) -> Points:
    K = theta_w.shape[0]
    if prev_y is None:
        return Points(np.ascontiguousarray(theta_w), np.ascontiguousarray(theta_b), K, collect)
    return Points(
        np.ascontiguousarray(np.vstack([theta_w, prev_y[0]])),
        np.concatenate([theta_b, prev_y[1]]),
        K,
        collect,
    )


def _check_finite(res: PassResult, passes: int) -> None:
    if not (np.all(np.isfinite(res.grad)) and np.all(np.isfinite(res.smoothed))):
        raise FloatingPointError(
            f"NESVM produced a non-finite gradient or objective at pass {passes}; the data "
            "may hold inf/NaN or huge values (scaling the features might help)."
        )
