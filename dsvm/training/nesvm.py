"""A NESVM fit: one exact gradient pass per iteration, Eq. 33-35 applied here.

NESVM is not a per-row stochastic pass: each iteration is one exact data pass
(:class:`dsvm.engine.tasks.GradientPass`, one task per group of chunks, the shares added in a
tree on the workers through the engine), and this process applies the paper's update
(:func:`dsvm.solvers.nesvm_run.nesvm_run`). The passes run in the one epoch loop
(:class:`NesvmPasses` in :func:`dsvm.training.driver.drive`), with the preparation and finish
every fit shares (:mod:`dsvm.training.prepare`, :mod:`dsvm.training.finish`); the checkpoint
after each pass is the loop's callback, written after the hooks.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from dsvm.combine.gradient import add_shares
from dsvm.data.sources import Source, map_source
from dsvm.engine.local import Engine, LocalEngine, spread
from dsvm.engine.tasks import GradientPass
from dsvm.exceptions import ConvergenceWarning, warn
from dsvm.solvers.base import SolverState, n_outputs_for
from dsvm.solvers.nesvm import GradientShare, NesvmProblem, NesvmSettings, Points
from dsvm.solvers.nesvm_run import NesvmResult, nesvm_run
from dsvm.training import outcome
from dsvm.training.callbacks import CheckpointEachEpoch, HooksEachEpoch
from dsvm.training.driver import EpochCallback, EpochStep, Loop, Scoring, drive
from dsvm.training.evaluation import check_validation_features, evaluate
from dsvm.training.finish import finish_fit
from dsvm.training.fitdata import FitData
from dsvm.training.inputs import validation_source
from dsvm.training.layout import in_space, to_space
from dsvm.training.loop import StoppingRule
from dsvm.training.prepare import prepare_fit
from dsvm.training.progress import EpochProgress
from dsvm.training.record import FittedModel, text_classes
from dsvm.training.scaling import fold_init
from dsvm.training.spec import FitSpec

# NESVM's best objective can stand still for several passes that are not convergence: after a
# step is taken back the step factor recovers by doubling, one pass each (ijcnn1: 9 passes at
# 0.4758, then 0.2203). The stopping rule waits at least this many passes without progress.
MIN_PATIENCE = 10


class GradientOracle:
    """``oracle(points, mu)`` -> the full :class:`GradientShare` of one pass over ``source``:
    ``n_tasks`` groups of chunks (the worker count by default; one group in this process)."""

    def __init__(self, engine: Engine, source: Source, problem: NesvmProblem, classes: np.ndarray,
                 *, n_tasks: int | None = None, class_weight: np.ndarray | None = None) -> None:
        self.engine = engine
        self.class_weight = class_weight
        self.source = source
        self.problem = problem
        self.classes = np.asarray(classes, dtype=np.float64)
        default = 1 if isinstance(engine, LocalEngine) else engine.n_workers
        self.groups = spread(source.n_chunks, int(n_tasks or default))
        self.passes = 0

    def __call__(self, points: Points, mu: float) -> GradientShare:
        self.passes += 1
        total = self.engine.reduce(GradientPass(points, self.problem, mu, self.classes,
                                                self.class_weight),
                                   self.source, self.groups, add_shares, name="nesvm-pass",
                                   combine_name="nesvm-add", what=f"NESVM pass {self.passes}")
        if total is None:
            raise ValueError(f"The training data ({self.source.describe()}) has no rows.")
        return total


def starting_point(init: Any, n_outputs: int, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """theta^0: the fitted model ``init`` (anything with ``coef_``/``intercept_``), else zeros
    (the paper's w^0 = 0)."""
    if init is None:
        return np.zeros((n_outputs, n_features)), np.zeros(n_outputs)
    coef = np.atleast_2d(np.asarray(getattr(init, "coef_", None), dtype=np.float64))
    intercept = np.atleast_1d(np.asarray(getattr(init, "intercept_", np.zeros(n_outputs)),
                                         dtype=np.float64))
    if coef.shape != (n_outputs, n_features) or intercept.shape != (n_outputs,):
        raise ValueError(
            f"The initial model has coef_ of shape {coef.shape} and intercept_ of shape "
            f"{intercept.shape}; this fit needs ({n_outputs}, {n_features}) and ({n_outputs},)."
        )
    return coef.copy(), intercept.copy()


def _settings(spec: FitSpec) -> NesvmSettings:
    # tol means the same for every solver (training.loop.StoppingRule, on the exact objective
    # of the best point so far): Algorithm 1's own test (absolute, on the paper's scale) is off,
    # and homotopy stages end on the smoothing-error rule (solvers.nesvm, "Homotopy").
    settings = NesvmSettings(mu=spec.mu, mu0=spec.mu0, tol=None, max_passes=spec.max_epochs)
    _warn_if_homotopy_cannot_finish(settings, spec.estimator)
    return settings


def preferred_classes(init: Any, warm: Any) -> Any:
    """The classes of the model a fit starts from (``init``, else the warm start's), or None."""
    if init is not None and hasattr(init, "classes_"):
        return np.asarray(init.classes_)
    previous = None if warm is None else getattr(warm, "classes_", None)
    return None if previous is None else np.asarray(previous)


def fit_nesvm(spec: FitSpec, data: FitData, *, validation: Any = None, init: Any = None,
              warm: Any = None, resume: bool = False) -> FittedModel:
    """Fit NESVM. ``init``: a fitted model to start from; ``warm``: the estimator's previous
    fit (``warm_start=True``), whose classes and model it continues (its text labels are
    ``data.text``: :func:`text_of`). ``resume``: go on from ``spec.checkpoint`` (written after
    every pass), with the passes the uninterrupted fit makes."""
    p = prepare_fit(spec, data, resume=resume, seeded=False,
                    preferred=preferred_classes(init, warm))
    spec, engine, source, ckpt = p.spec, p.engine, p.rows, p.ckpt
    assert p.classes is not None and p.values is not None  # (NESVM classifies)
    start_from = None if ckpt is not None else init if init is not None else warm
    coef0, intercept0 = starting_point(start_from, n_outputs_for(len(p.values)),
                                       source.n_features)
    if start_from is not None:  # a model in the user's ids (the scaling's are the fit's too)
        coef0 = to_space(data.layout, coef0)
    coef0, intercept0 = fold_init(data.scaling, coef0, intercept0)
    problem = NesvmProblem(loss=spec.loss_name, penalty=spec.penalty, alpha=spec.alpha,
                           fit_intercept=spec.fit_intercept)
    settings = _settings(spec)
    # a resumed fit sums its passes over the same groups of chunks: the same bits
    oracle = GradientOracle(engine, source, problem, p.values, class_weight=p.weights,
                            n_tasks=ckpt.n_streams if ckpt is not None else spec.n_streams)
    done = [] if ckpt is None else list(ckpt.history)
    history = list(done)  # every pass's record, those of a resumed fit first
    progress = EpochProgress(settings.max_passes - len(done), spec.verbose)
    if p.done:
        progress.close()
        result = NesvmResult(coef=ckpt.extra["best_w"].copy(),
                             intercept=ckpt.extra["best_b"].copy(), history=done,
                             converged=True, n_passes=len(done))
    else:
        run = nesvm_run(oracle, problem, settings, coef0, intercept0,
                        resume=None if ckpt is None else (ckpt.extra, done))
        passes = NesvmPasses(run, source.dtype)
        callbacks: list[EpochCallback] = [HooksEachEpoch(spec, copy_history=True)]
        if spec.checkpoint is not None:  # after the hooks (a hook that stops a pass: not kept)
            header = p.model_record(SolverState(coef0, intercept0),
                                    n_streams=len(oracle.groups))
            callbacks.append(CheckpointEachEpoch(spec, header, source, model=passes.saved))
        drive(passes, history=history, progress=progress,
              stopping=NesvmStopping(spec, settings.mu, history),
              callbacks=callbacks,
              scoring=Scoring(_validator(engine, spec, p.values, data, validation,
                                         source.n_features)))
        assert passes.result is not None  # (the run ends when its passes do)
        result = passes.result
    dtype = source.dtype
    state = SolverState(coef=result.coef.astype(dtype),
                        intercept=result.intercept.astype(dtype), t=float(result.n_passes))
    record = p.model_record(state, n_streams=len(oracle.groups), history=result.history,
                            converged=bool(result.converged))
    return finish_fit(spec, engine, record, p.source, reason=_stop_reason(spec, result),
                      not_converged=None if spec.tol is None else still_improving)


def still_improving(spec: FitSpec, record: FittedModel) -> str:
    return (f"{spec.estimator}(solver='nesvm') used max_epochs={spec.max_epochs} data passes "
            f"while its objective still improved by more than tol={spec.tol} (relative) within "
            f"{spec.n_iter_no_change} passes; consider more passes.")


def _stop_reason(spec: FitSpec, result: Any) -> str:
    if not result.converged:
        return outcome.max_epochs_reason(spec, "data passes")
    patience = max(spec.n_iter_no_change, MIN_PATIENCE)
    return (f"tol met: the exact objective of the best point did not improve on its best by "
            f"more than tol={spec.tol:g} (relative) for {patience} passes")


def text_of(warm: Any) -> np.ndarray | None:
    """The text labels of the estimator a warm start continues (None: numbers, or none)."""
    return text_classes(None if warm is None else getattr(warm, "classes_", None))


def _validator(engine: Engine, spec: FitSpec, values: np.ndarray, data: FitData,
               validation: Any, n_features: int) -> Any:
    """The accuracy on ``validation`` of the model the fit would return after a pass (the
    solver's best measured point); None without validation data."""
    if validation is None:
        return None
    val_source = validation_source(validation, classify=True, chunk_rows=spec.chunk_rows,
                                   text_classes=data.text)
    check_validation_features(val_source, n_features, data.feature_names)
    # the model is in the fit's feature ids and scaled units
    val_source = map_source(in_space(val_source, data.layout), data.scaling)
    return lambda state: evaluate(engine, state.coef, state.intercept, val_source, values,
                                  "hinge").accuracy


class NesvmStopping:
    """NESVM's stopping decision: :class:`StoppingRule` on the exact objective of the best
    point, waiting at least MIN_PATIENCE passes; homotopy's stages before the target mu end on
    their own rule, not on tol (their passes are not observed)."""

    def __init__(self, spec: FitSpec, target_mu: float, history: list[dict[str, Any]]) -> None:
        self.target_mu = target_mu
        self.rule = StoppingRule(spec.tol, max(spec.n_iter_no_change, MIN_PATIENCE), [])
        for record in history:  # a resumed fit's passes, replayed as they were observed
            if record["mu"] == target_mu:
                self.rule.observe(float(record["objective"]))

    def decide(self, step: EpochStep, loop: Loop) -> str:
        record = step.record
        stop = record["mu"] == self.target_mu and self.rule.observe(float(record["objective"]))
        return "tol met" if stop else ""

    def announce(self, epoch: int, reason: str) -> None:
        pass  # (the fit's stop reason says it: _stop_reason)


class NesvmPasses:
    """NESVM's :class:`~dsvm.training.driver.EpochStrategy`: the passes of
    :func:`~dsvm.solvers.nesvm_run.nesvm_run`, each told whether the loop stops there; the
    model of a step is the best measured point so far."""

    def __init__(self, run: Any, dtype: np.dtype) -> None:
        self.run, self.dtype = run, dtype
        self.result: NesvmResult | None = None

    def saved(self, step: EpochStep, loop: Loop) -> SolverState:
        """The checkpoint's model after ``step``: the best point in the data's dtype, and the
        run's whole state in float64 (``extra``), from which
        :func:`~dsvm.solvers.nesvm_run.nesvm_run` goes on exactly."""
        snapshot = self.run.snapshot_after(loop.converged)
        return SolverState(coef=snapshot["best_w"].astype(self.dtype),
                           intercept=snapshot["best_b"].astype(self.dtype),
                           t=float(snapshot["passes"]), extra=snapshot)

    def epochs(self, loop: Loop) -> Generator[EpochStep, None, None]:
        passes = self.run.iterate()
        try:
            record = next(passes)
            while True:
                record["val_accuracy"] = None  # (set by the loop's scoring, with validation)
                coef, intercept = self.run.best_model()
                state = SolverState(coef=coef, intercept=intercept,
                                    t=float(len(loop.history) + 1))
                yield EpochStep(int(record["epoch"]) - 1, record, state)
                record = passes.send(loop.converged)
        except StopIteration as end:
            self.result = end.value

    def adopt(self, held: Any) -> None:  # pragma: no cover (no NESVM callback replaces it)
        raise NotImplementedError("a NESVM fit goes on from its own iterates")


def _warn_if_homotopy_cannot_finish(settings: NesvmSettings, who: str) -> None:
    """Eq. 44's mu_t = mu0 / (t + 1) takes about mu0 / mu stages and each stage takes at least
    one pass: with fewer passes than stages the fit ends before it reaches the target mu."""
    stages = len(settings.schedule())
    if stages > settings.max_passes:
        warn(
            f"{who}(solver='nesvm', mu0={settings.mu0}, mu={settings.mu}): homotopy's schedule "
            f"mu0/(t+1) has {stages} stages of at least one pass each, more than "
            f"max_epochs={settings.max_passes}; the fit will stop before reaching mu. Use a "
            "smaller mu0 or more passes (with the default steps plain NESVM, mu0=None, "
            "measured as fast or faster; see dsvm/solvers/nesvm.py).",
            ConvergenceWarning)
