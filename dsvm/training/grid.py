"""Choosing ``alpha`` in one read of the data per epoch: a grid of candidates trained side by
side, scored on rows held out of every chunk, the best published without refitting (#27).
The grid may also have ``l1_ratios``, ``losses`` and ``class_weights`` axes: the candidates
are the product, all in the same pass (:mod:`dsvm.training.grid_axes` says which combinations
can share one, and why every candidate is scored on plain accuracy or R^2).

``fit_grid`` is ``fit`` for :class:`~dsvm.SVMClassifierCV` / :class:`~dsvm.SVMRegressorCV`.
It goes through the stages every fit shares (engine, source, scaling: see
:func:`dsvm.training.trainer.fit`), then:

1. **Held-out rows.** A share (``cv_fraction``) of the rows of *every* chunk, chosen by a
   hash of (the fit's seed, chunk, row) (:class:`dsvm.data.fold.RowFold`), is never trained
   on. Not whole chunks: a fold of chunks inherits the storage order, and on a label- or
   time-sorted store (w8a as distributed: every positive in one 4096-row chunk) it held one
   class only, every candidate scored 100% on it, and the choice was 0.43 points below the
   best of 8 (benchmarks/RESULTS.md, #27). No row moves: the held rows are left out of the
   row order of the pass that reads their chunk, the same rows on any cluster, for any
   number of streams or windows. ``cv=k`` instead cuts the rows into k folds by the same
   hash and trains k + 1 stacks of the K candidates in the same pass, stack 0 on every row
   (the published models) and stack f + 1 without fold f, scored on it; a candidate's score
   is the mean of its k (:mod:`dsvm.training.grid_folds`). It costs (k + 1) x K models of
   arithmetic and memory for one read per epoch: a 10% share is the default because on data
   larger than memory it already holds many rows, but on a few thousand rows its score
   spreads by more than the candidates differ (benchmarks/RESULTS.md, #27).
2. **One pass, K models.** :class:`dsvm.solvers.grid.CandidateGrid` stacks the K candidates'
   states: every chunk is read once per epoch and every candidate steps on it, through the
   epoch loop of every stochastic fit (:func:`dsvm.training.loop.run_epochs`), its streams,
   combines and cluster placement unchanged.
3. **Scores, in the training pass.** The stream task that reads a chunk also scores its held
   rows with the models the epoch *started* from (:mod:`dsvm.solvers.held_out`, one product
   of the held rows with all candidates' weights): accuracy (R^2 for regressors) and the
   held-out objective (each candidate's own penalty plus its mean loss). The sums ride in
   the pass statistics through the combine tree, so validation costs no read of its own:
   the score of the models after epoch e arrives with epoch e+1's summary, one epoch late,
   and one scoring pass after the last epoch scores the final models (the only read a grid
   adds to a fit's). The K models never come to the client between epochs
   (:class:`GridTracker` takes the held outcome to freeze candidates where it is held).
4. **Per-candidate stopping.** A candidate whose held-out objective has not improved (by
   ``tol``, relative) for ``n_iter_no_change`` epochs is frozen: its rows of the state no
   longer change and it costs no compute. The scores being one epoch late, it is frozen
   after the epoch it trained meanwhile (that model is the one published and scored). The
   fit stops when all are frozen, or after ``max_epochs``.
5. **The best** candidate (highest held-out score after its last epoch, the mean over the
   folds with ``cv=k``; ties: the larger alpha, then the first: :meth:`GridReport.ranking`)
   is published as a normal fit of that alpha (its state, its model folded back into raw
   units, its outcome measured): nothing is trained again. With a held-out share it trained
   on the other rows; with k folds, on every row.

``alphas="auto"``: ``n_alphas`` values log-spaced over 1e-3 .. 1e3 times 1/n_samples. 1/n is
the stochastic solvers' natural scale (LIBLINEAR's C = 1: alpha = 1/(C n)); six decades around
it cover C from 1e-3 to 1e3, the range scikit-learn's and LIBLINEAR's users search.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, cast

import numpy as np

from dsvm.combine import combiner_for
from dsvm.data.order import draw_seed
from dsvm.data.sources import Source, input_features, map_source
from dsvm.engine.local import Engine, LocalEngine
from dsvm.engine.tasks import Calibrate, first
from dsvm.exceptions import warn
from dsvm.solvers.base import LocalSolver, SolverState, n_outputs_for
from dsvm.solvers.evaluation import GridCounts
from dsvm.solvers.grid import ACTIVE, CandidateGrid, candidate_view, grid_solvers
from dsvm.solvers.held_out import HeldOutRows
from dsvm.training import grid_checkpoints as checkpoints
from dsvm.training import kernel_maps
from dsvm.training.class_weights import class_weight_vector
from dsvm.training.engines import engine_for
from dsvm.training.epoch import Outcome
from dsvm.training.grid_axes import (
    AXES,
    GridAxes,
    SomeSupportsIntersected,
    candidate_spec,
    resolve_axes,
)
from dsvm.training.grid_folds import StackAveraging, held_out_for, n_stacks_for
from dsvm.training.holdout import score_held_rows
from dsvm.training.inputs import source_of
from dsvm.training.layout import in_space, space_for, to_user_ids
from dsvm.training.loop import EpochDecision, FitPlan, StoppingRule, run_epochs
from dsvm.training.memory import FEWER, STATE_COPIES, check_worker_memory, memory_window
from dsvm.training.prepare import check_memory_up_front, class_values, resolve_gamma, training_map
from dsvm.training.progress import format_grid
from dsvm.training.record import FittedModel
from dsvm.training.scaling import scale_stage, unfold_record
from dsvm.training.spec import FitSpec
from dsvm.training.stochastic import finish
from dsvm.training.streams import stream_stage

logger = logging.getLogger(__name__)

AUTO_SPAN = 1e3  # "auto": from 1/(AUTO_SPAN n) to AUTO_SPAN/n
# (STATE_COPIES, the copies of the stacked state a worker holds at once: training.memory)


def auto_alphas(n_samples: int, n_alphas: int) -> np.ndarray:
    """``n_alphas`` log-spaced values from 1e-3/n to 1e3/n (see the module notes)."""
    centre = math.log10(1.0 / max(int(n_samples), 1))
    span = math.log10(AUTO_SPAN)
    return np.logspace(centre - span, centre + span, int(n_alphas))


def resolve_alphas(alphas: Any, n_alphas: int, n_samples: int) -> np.ndarray:
    """The grid's alphas: ``"auto"`` (:func:`auto_alphas`) or the values given, checked."""
    if isinstance(alphas, str):
        if alphas != "auto":
            raise ValueError(f"alphas must be 'auto' or a list of positive floats; got "
                             f"{alphas!r}.")
        return auto_alphas(n_samples, n_alphas)
    values = np.asarray(alphas, dtype=np.float64).ravel()
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"alphas must be positive finite floats; got {list(alphas)!r}.")
    return values


def grid_spec(spec: FitSpec) -> FitSpec:
    """``spec`` for a grid: ``solver="auto"`` resolves to SGD; what cannot be stacked, or is
    not built for grids yet, is refused with the reason."""
    if spec.solver == "auto":
        # averaged SGD: the best of the stacked solvers (training.auto_solver's measures)
        spec = replace(spec, solver="sgd", params={**spec.params, "solver": "sgd"})
    if spec.solver == "cocoa":
        raise ValueError("solver='cocoa' trains its grid of alphas with K dual vectors "
                         "(dsvm.training.cocoa_grid.fit_cocoa_grid), not stacked SGD states.")
    if spec.solver not in ("sgd", "pegasos"):
        raise ValueError(f"solver={spec.solver!r} cannot train a grid of alphas in one pass "
                         "(NESVM and BSGD keep other models, ASSET constants per alpha); use "
                         "solver='sgd', 'pegasos', 'cocoa' or 'auto'.")
    if spec.early_stopping:
        raise ValueError("early_stopping=True: the grid holds out its own rows "
                         "(cv_fraction) and stops each candidate on them already.")
    return spec


def check_cv(cv: Any) -> int | None:
    """``cv``: None (a held-out share of every chunk) or the number of folds, an int >= 2."""
    if cv is None:
        return None
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2:
        raise ValueError(f"cv must be an int >= 2 (the number of folds) or None (a held-out "
                         f"share, cv_fraction); got {cv!r}.")
    return int(cv)


@dataclass
class GridReport:
    """What the grid measured: per epoch the held-out score and objective of every candidate
    (a frozen candidate repeats its last), the epochs each trained, the best one.
    ``alphas``: each candidate's alpha (repeated over the other axes, ``axes``)."""

    alphas: np.ndarray
    score_name: str  # "accuracy" or "r2"
    cv_fraction: float  # the expected share of every chunk's rows held out (data.fold)
    n_splits: int = 1  # k folds (cv=k), or 1: the held-out share
    scores: list[np.ndarray] = field(default_factory=list)
    objectives: list[np.ndarray] = field(default_factory=list)
    epochs_run: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    state: SolverState | None = None  # the stacked state at the end (the fit's scaled units)
    # a frozen candidate's own step counter and averaging weight (t, n_avg) when it froze:
    # the stacked state's go on counting for the others
    counters: dict[int, tuple[float, float]] = field(default_factory=dict)
    # the final models' score on each fold, (n_splits, K) (one row: the held-out share)
    split_scores: np.ndarray | None = None
    axes: GridAxes | None = None  # None: a grid of these alphas alone

    def __post_init__(self) -> None:
        if self.axes is None:
            self.axes = GridAxes(np.asarray(self.alphas, np.float64))

    @property
    def the_axes(self) -> GridAxes:
        assert self.axes is not None  # (__post_init__)
        return self.axes

    def describe(self, k: int) -> str:
        """Candidate ``k`` in words, for the log."""
        return self.the_axes.describe(k)

    @property
    def n_stacks(self) -> int:
        return 1 if self.n_splits == 1 else self.n_splits + 1

    def candidate_state(self, k: int) -> SolverState:
        """Candidate ``k``'s final state on its own (a copy; scaled units, as trained)."""
        assert self.state is not None, "the grid has not run yet"
        own = candidate_view(self.state, k, len(self.alphas) * self.n_stacks).copy()
        own.extra = {}
        own.t, own.n_avg = self.counters.get(k, (own.t, own.n_avg))
        return own

    @property
    def final_scores(self) -> np.ndarray:
        return self.scores[-1] if self.scores else np.full(len(self.alphas), np.nan)

    @property
    def best_index(self) -> int:
        return int(self.ranking()[0])

    def ranking(self) -> np.ndarray:
        """The candidates, best first: by held-out score, equal scores by the larger alpha,
        then in the order given. A small held-out share scores in coarse steps (57 rows of
        breast cancer: accuracy 1.0 for alphas 1e-5 to 1e-2), and where the held-out rows
        cannot tell the candidates apart the most regularised is the simplest model (as
        scikit-learn's LogisticRegressionCV picks among equal scores, its Cs ascending); the
        first, the least regularised, was picked."""
        final = np.where(np.isnan(self.final_scores), -np.inf, self.final_scores)
        alphas = np.asarray(self.alphas, np.float64)
        return np.lexsort((np.arange(len(final)), -alphas, -final))

    @property
    def final_splits(self) -> np.ndarray:
        """The final models' score on each fold, (n_splits, K)."""
        if self.split_scores is not None:
            return self.split_scores
        return self.final_scores[None, :]

    def cv_results(self) -> dict[str, np.ndarray]:
        """scikit-learn's layout: ``split{f}_test_score`` per fold (one held-out share: one
        split), their mean and standard deviation, the rank of the mean."""
        final = self.final_scores
        rank = np.empty(len(final), np.int64)
        rank[self.ranking()] = np.arange(1, len(final) + 1)
        splits = self.final_splits
        return {**self.the_axes.columns(), "params": self.the_axes.candidates(),
                "mean_test_score": final.copy(),
                **{f"split{f}_test_score": splits[f].copy() for f in range(len(splits))},
                "std_test_score": splits.std(axis=0),
                "rank_test_score": rank,
                "test_score_by_epoch": np.array(self.scores).T.copy(),
                "test_objective_by_epoch": np.array(self.objectives).T.copy(),
                "n_epochs": self.epochs_run.copy()}

    def table(self) -> list[dict[str, Any]]:
        """One row per candidate: what the log and a model file's metadata show."""
        final = self.final_scores
        best = self.best_index
        folds = self.final_splits.T if self.n_splits > 1 else [None] * len(final)
        params = self.the_axes.candidates()
        return [{**params[k], f"held_out_{self.score_name}": float(s),
                 **({} if f is None else {"folds": [float(v) for v in f]}),
                 "epochs": int(e), "best": k == best}
                for k, (s, f, e) in enumerate(zip(final, folds, self.epochs_run))]


class Stacked(Protocol):
    """What :class:`GridTracker` reads of a grid: a CandidateGrid, or CoCoA+'s candidates."""

    @property
    def n_candidates(self) -> int: ...

    @property
    def n_stacks(self) -> int: ...


@dataclass(frozen=True)
class Freeze:
    """Where the state is held: the outcome with candidates ``which`` frozen, and the step
    counter and averaging weight they froze at (what their own fit would have)."""

    which: tuple[int, ...]

    def __call__(self, outcome: Outcome) -> Outcome:
        state = replace(outcome.state, extra=dict(outcome.state.extra))
        state.extra[ACTIVE] = state.extra[ACTIVE].copy()
        state.extra[ACTIVE][list(self.which)] = 0.0
        return replace(outcome, state=state)


def counters_of(outcome: Outcome) -> tuple[float, float]:
    return float(outcome.state.t), float(outcome.state.n_avg)


class GridTracker:
    """The grid's ``on_epoch``: records the candidates' held-out scores in the history and
    the report, freezes those that stopped improving.

    The scores come with the epoch's summary (``held_out``: the sums of the epoch's streams
    over the held rows of every chunk, :mod:`dsvm.solvers.held_out`), measured on the models
    the epoch *started* from: epoch e's callback learns the scores of the models after epoch
    e-1, and records them in that epoch's history record. A candidate whose held-out
    objective stopped improving is frozen at once, after the epoch it has trained meanwhile
    (its model after that epoch is scored with the next epoch, or by :meth:`finish`). The
    freeze is applied where the state is held (``takes_held``): the K models never come here
    between epochs. :meth:`finish` scores the final models: one pass over the held rows."""

    takes_held = True  # (training.loop.run_epochs)
    takes_held_out = True  # (the held-out sums of the epoch's start models, run_epochs)

    def __init__(self, grid: Stacked, engine: Engine, held_out: HeldOutRows,
                 spec: FitSpec, report: GridReport) -> None:
        self.grid, self.engine, self.held_out, self.spec = grid, engine, held_out, spec
        self.report = report
        tol = spec.tol or 0.0  # (as early stopping: tol=None stops on no gain at all)
        self.rules = [StoppingRule(tol, spec.n_iter_no_change, [], key="held_out")
                      for _ in range(grid.n_candidates)]
        report.epochs_run = np.zeros(grid.n_candidates, np.int64)
        self.active = np.ones(grid.n_candidates, bool)
        self.checked = False  # (a class missing from the held rows: warned once)
        # with checkpoint=: saver(state, history, converged) after every epoch
        # (dsvm.training.grid_checkpoints)
        self.saver: Any = None

    def __call__(self, outcome: Any, history: list[dict[str, Any]], converged: bool, *,
                 held_out: GridCounts | None = None) -> EpochDecision | None:
        decision = self.decide(outcome, history, held_out)
        if self.saver is not None:  # the state the next epoch starts from, freezes applied
            held = decision.held if decision is not None else outcome
            state = self.engine.fetch(held, what=f"the grid after epoch {len(history)}").state
            self.saver(state, history, converged or bool(decision and decision.stop))
        return decision

    def decide(self, outcome: Any, history: list[dict[str, Any]],
               held_out: GridCounts | None) -> EpochDecision | None:
        """Record the epoch's scores (of the models before it), freeze what stopped."""
        frozen = self.observe(history, held_out)
        if not frozen:
            return None
        counters = self.engine.fetch(self.engine.apply(counters_of, outcome, name="counters"),
                                     what="the step counters")
        self.report.counters.update({k: counters for k in frozen})
        history[-1].update({"grid_frozen": frozen, "grid_counters": list(counters)})
        self.active[frozen] = False
        in_stacks = tuple(s * self.grid.n_candidates + k for s in range(self.grid.n_stacks)
                          for k in frozen)  # (a candidate freezes in every stack)
        logger.info("epoch %d: %s stopped improving on the held-out rows (frozen)",
                    len(history), "; ".join(self.report.describe(k) for k in frozen))
        stop = "" if self.active.any() else (
            "every candidate's held-out objective stopped improving (by more than "
            f"tol={self.spec.tol}, relative, for {self.spec.n_iter_no_change} epochs)")
        return EpochDecision(held=self.engine.apply(Freeze(in_stacks), outcome,
                                                    name="freeze"), stop=stop)

    def observe(self, history: list[dict[str, Any]], held_out: GridCounts | None) -> list[int]:
        """Count the epoch just run, record the scores its pass measured (of the models before
        it) in the history; returns the active candidates whose rule says stop (the caller
        freezes them: CoCoA+'s grid, :mod:`dsvm.training.cocoa_grid`, freezes its own way)."""
        counts = checked_counts(held_out, None if self.checked else self.held_out.classes)
        self.checked = True
        self.report.epochs_run[self.active] += 1  # (the epoch just run)
        if len(history) < 2:  # the first epoch scored the calibrated start: not a fit's model
            return []
        frozen = [k for k in self.record(counts, history[-2]) if self.active[k]]
        history[-1]["grid_active"] = int(self.active.sum()) - len(frozen)
        return frozen

    def record(self, counts: GridCounts, record: dict[str, Any]) -> list[int]:
        """Record the scores and objectives of the models after the epoch of ``record``
        (every candidate's: a frozen one's model is the one it froze with, so it repeats its
        last; with k folds, the mean of its folds'); returns the candidates (still active)
        whose rule says stop."""
        assert counts.penalties is not None
        shape = (self.report.n_splits, self.grid.n_candidates)
        splits = np.array([c.accuracy if self.spec.classifies else c.r2
                           for c in counts.candidates]).reshape(shape)
        objectives = (np.asarray(counts.penalties, np.float64) + np.array(
            [c.mean_loss for c in counts.candidates])).reshape(shape).mean(axis=0)
        scores = splits.mean(axis=0)
        self.report.scores.append(scores)
        self.report.objectives.append(objectives)
        self.report.split_scores = splits
        record.update({"grid_scores": scores.tolist(), "grid_objectives": objectives.tolist()})
        if self.report.n_splits > 1:
            record["grid_split_scores"] = splits.tolist()
        record.setdefault("grid_active", int(self.active.sum()))
        return [int(k) for k in np.flatnonzero(self.active)
                if self.rules[k].observe(float(objectives[k]))]

    def finish(self, state: SolverState, history: list[dict[str, Any]],
               source: Source) -> None:
        """Score the final models on the held rows (the one read a grid adds to a fit's)."""
        if not history:
            return
        counts = score_held_rows(self.engine, self.held_out, source, state)
        self.record(checked_counts(counts, None), history[-1])


def checked_counts(counts: GridCounts | None, classes: np.ndarray | None) -> GridCounts:
    """The held-out sums, refused when no row was held out, with a warning when a class has
    none (:func:`check_fold`)."""
    if counts is None or not counts.candidates or min(c.n_rows for c in counts.candidates) == 0:
        raise ValueError("The held-out rows are empty: no row of the data was held out to "
                         "score the alphas on; raise cv_fraction or pass more rows.")
    check_fold(counts.class_rows, classes)
    return counts


def check_fold(class_rows: np.ndarray, classes: np.ndarray | None) -> None:
    """Warn when the held-out rows miss a class: it has too few rows for the held-out share
    (the row fold samples every chunk, so the storage order is not the cause), and the
    held-out scores cannot rank the candidates on it."""
    if classes is None or len(class_rows) == 0 or class_rows.min() > 0:
        return
    missing = [float(c) for c, n in zip(classes, class_rows) if n == 0]
    warn(
        f"The rows held out to score the alphas have no rows of class(es) {missing}: too "
        "few rows of them for the held-out share, and the held-out scores cannot rank the "
        "candidates on those classes. Raise cv_fraction.", UserWarning)


def grid_rows(spec: FitSpec, X: Any, y: Any, sample_weight: Any, alphas: Any,
              n_alphas: int) -> tuple[Any, Any, np.ndarray]:
    """(source, text labels, the alphas) of a grid's input, in the engine's block: every
    grid needs 2 rows or more (one to train on, one held out to score the alphas)."""
    source, text = source_of(X, y, sample_weight, classify=spec.classifies,
                             chunk_rows=spec.chunk_rows)
    if source.n_samples < 2:
        raise ValueError(f"n_samples={source.n_samples}: a grid of alphas needs at least 2 "
                         "rows (one to train on, one held out to score the alphas).")
    return source, text, resolve_alphas(alphas, n_alphas, source.n_samples)


def fit_grid(spec: FitSpec, X: Any, y: Any = None, *, sample_weight: Any = None,
             alphas: Any = "auto", n_alphas: int = 8, cv_fraction: float = 0.1,
             cv: int | None = None, resume: bool = False,
             axes: Mapping[str, Any] | None = None) -> tuple[FittedModel, GridReport]:
    """Train the grid of ``alphas`` (x the other ``axes``: ``{"l1_ratios": [...], "losses":
    [...], "class_weights": [...]}``, those given, :mod:`dsvm.training.grid_axes`) in one
    read per epoch; returns the best candidate's fit (as ``fit`` returns one) and the
    :class:`GridReport` of them all. ``cv``: None scores on a ``cv_fraction`` share of every
    chunk's rows, k on k folds (see the module notes)."""
    spec = grid_spec(spec)
    cv = check_cv(cv)
    others = dict(axes or {})
    resolve_axes(spec, np.ones(1), **others)  # (refused before any work: the alphas later)
    with engine_for(X, spec.client, spec.n_workers) as engine:
        source, text, values = grid_rows(spec, X, y, sample_weight, alphas, n_alphas)
        grid_axes = resolve_axes(spec, values, **others)
        spec = stream_stage(spec, engine, source)  # (fewer for a store sorted by label)
        space = space_for(spec, source)  # a renumbered store's ids (training.layout)
        source = in_space(source, space)
        n_stacks = n_stacks_for(cv)
        check_memory_up_front(spec, engine, source, n_states=grid_axes.n_candidates * n_stacks,
                              fewer=grid_fewer(n_stacks))
        spec, source, scaling = scale_stage(spec, engine, source)
        # (a kernel map's scaling and columns, kept in the map: a linear fit's scaling is in
        # ``source`` already)
        stage = kernel_maps.input_stage(spec, engine, source)
        spec = resolve_gamma(spec, engine, source, None, stage)
        ckpt = checkpoints.resumed(spec, source, grid_axes, cv_fraction, cv) if resume else None
        seed = ckpt.seed if ckpt is not None else draw_seed(spec.random_state)
        # a kernel map: one map (fitted on the rows, unsupervised), K linear models on it
        fmap = training_map(spec, engine, source, seed, stage)
        mapped = map_source(source, fmap)
        record, grid = start_grid(spec, engine, mapped, text, seed, grid_axes, n_stacks)
        record.feature_map = fmap
        if ckpt is not None:
            checkpoints.restore(record, ckpt)
        held_out = held_out_for(cv, cv_fraction, seed, mapped, grid.solvers,
                                record.class_values, held_out_loss(spec, grid_axes))
        report = GridReport(grid_axes.columns()["param_alpha"],
                            "accuracy" if spec.classifies else "r2", cv_fraction,
                            n_splits=cv or 1, axes=grid_axes)
        tracker = GridTracker(grid, engine, held_out, spec, report)
        checkpoints.replay(tracker, record.history)
        if spec.checkpoint is not None:
            tracker.saver = checkpoint_saver(
                checkpoints.grid_params(spec, grid_axes, cv_fraction, cv), record, mapped)
        done = len(record.history)
        window = memory_window(spec.shuffle_window, mapped, engine,
                               state_bytes=record.state.nbytes, n_streams=record.n_streams)
        plan = FitPlan(seed=seed, n_streams=record.n_streams, tol=None,
                       n_iter_no_change=spec.n_iter_no_change, verbose=spec.verbose,
                       shuffle_window=window.chunks, window_note=window.describe(),
                       held_out=held_out)
        result = run_epochs(
            engine=engine, solver=as_solver(grid), combiner=grid_combiner(grid), source=mapped,
            classes=record.class_values, class_weight=pass_class_weight(record, grid),
            state=record.state, plan=plan, first_epoch=done, history=record.history,
            n_epochs=0 if record.converged else max(0, spec.max_epochs - done),
            on_epoch=tracker)
        tracker.finish(result.state, result.history, mapped)
        report.state = result.state
        best = report.best_index
        chosen = candidate_spec(spec, grid_axes.candidates()[best])
        if grid.class_weights:
            record.class_weight = grid.class_weights[best]
        record = best_record(record, report, best)
        record.history, record.converged = result.history, result.converged
        record.stop_reason = result.stop_reason
        record.scaling, record.layout = scaling, space
        record.feature_names = source.feature_names
        record.solver = spec.solver
        record.resolved = {k: spec.params[k] for k in ("gamma",) if k in spec.params}
        logger.info("grid of %d candidates, held-out %s:\n%s", grid_axes.n_candidates,
                    report.score_name, format_grid(report.table()))
        record = finish(chosen, engine, record, source, warn=False)
    return to_user_ids(unfold_record(record)), report


def grid_combiner(grid: CandidateGrid) -> Any:
    """How the grid's streams combine: as a fit of its solver's (each candidate's, when some
    have an L1 part and others not: :class:`SomeSupportsIntersected`), stack by stack with k
    folds (:class:`~dsvm.training.grid_folds.StackAveraging`)."""
    kinds = {type(combiner_for(s)).__name__ + repr(vars(combiner_for(s)))
             for s in grid.solvers}
    inner = combiner_for(grid)
    if len(kinds) > 1:
        inner = SomeSupportsIntersected(
            [bool(getattr(combiner_for(s), "intersect_support", False)) for s in grid.solvers])
    return inner if grid.n_stacks == 1 else StackAveraging(inner, grid)


def held_out_loss(spec: FitSpec, axes: GridAxes) -> Any:
    """The loss of each candidate's held-out objective: the fit's, or with a grid of losses
    a tuple of each candidate's own (with its parameter: mu, epsilon)."""
    if axes.losses is None:
        return spec.loss
    return tuple(candidate_spec(spec, c).loss for c in axes.candidates())


def pass_class_weight(record: FittedModel, grid: CandidateGrid) -> np.ndarray | None:
    """The class weight the epoch's pass multiplies into every row: the fit's, or with a
    grid of class weights ones (the rows weighted, each candidate's own weights multiplied
    in by the grid: :mod:`dsvm.solvers.grid`, "Class weights per candidate")."""
    if not grid.class_weights:
        return record.class_weight
    assert record.class_values is not None  # (class_weights: a classifier's)
    return np.ones(len(record.class_values))


def checkpoint_saver(spec: FitSpec, record: FittedModel, source: Source) -> Any:
    """What writes the grid's checkpoint after each epoch (``spec`` records the grid)."""
    def saver(state: SolverState, history: list[dict[str, Any]], converged: bool) -> None:
        checkpoints.save(spec, state, history, converged, record, source)

    return saver


def as_solver(grid: CandidateGrid) -> LocalSolver:
    """The grid where a :class:`LocalSolver` goes (its name, loss and alpha are read-only
    properties, which the protocol's plain attributes do not admit for mypy)."""
    return cast(LocalSolver, grid)


def start_grid(spec: FitSpec, engine: Engine, source: Source, text: np.ndarray | None,
               seed: int, axes: GridAxes | np.ndarray, n_stacks: int = 1
               ) -> tuple[FittedModel, CandidateGrid]:
    """The grid's first state (every candidate calibrated on the first training chunk), after
    checking that ``n_stacks`` x K states fit in a worker's memory (``axes``: the grid, or
    its alphas alone)."""
    if not isinstance(axes, GridAxes):
        axes = GridAxes(np.asarray(axes, np.float64))
    shown, values = class_values(spec, source, None, text)
    weights = class_weight_vector(spec.class_weight, shown, values, source)
    candidates = [candidate_spec(spec, c) for c in axes.candidates()]
    own_weights: list[np.ndarray | None] = []
    if axes.class_weights is not None:  # each candidate's own, the pass weighs by ones
        made = {repr(w): class_weight_vector(w, shown, values, source)
                for w in axes.class_weights}
        own_weights = [made[repr(c.class_weight)] for c in candidates]
        weights = None
    grid = grid_solvers(lambda c: c.make_solver(source.n_samples), candidates, n_stacks,
                        class_weights=own_weights, regression=values is None)
    n_outputs = 1 if values is None else n_outputs_for(len(values))
    one = grid.solvers[0].init_state(source.n_features, n_outputs, source.dtype)
    check_memory(engine, one.nbytes, axes, n_stacks)
    check_worker_memory(source, engine, state_bytes=one.nbytes * axes.n_candidates * n_stacks,
                        n_streams=spec.n_streams,
                        fewer=grid_fewer(n_stacks))
    state = grid.init_state(source.n_features, n_outputs, source.dtype)
    # Calibrated on the first rows of chunk 0, held rows included, as a fit of that alpha
    # alone calibrates: it only picks SGD's step size, and that choice is sensitive to the
    # sample (leaving the held rows out moved w8a's chosen model from 98.25% to 97.25% and
    # ijcnn1's from 91.49% to 92.42%, the same alphas chosen), which would make the grid's
    # candidates differ from the fits they stand for.
    state = engine.reduce(Calibrate(state, as_solver(grid), values, weights), source, [[0]], first,
                          name="calibrate", what="calibration")
    record = FittedModel(
        coef=state.coef, intercept=state.intercept, state=state, classes=shown,
        class_values=values, n_features_in=input_features(source), n_samples=source.n_samples,
        seed=int(seed), n_streams=int(spec.n_streams or engine.n_workers), class_weight=weights)
    return record, grid


def grid_fewer(n_stacks: int) -> str:
    """What a smaller grid has fewer of, for the memory refusal's advice."""
    return FEWER if n_stacks == 1 else "features, alphas, folds or classes"


def check_memory(engine: Engine, state_bytes: int, axes: GridAxes | np.ndarray,
                 n_stacks: int = 1, row_bytes: int = 0) -> None:
    """Refuse a grid whose ``n_stacks`` x K states (k folds: k + 1 stacks; K: every candidate
    of the product of the axes) and ``row_bytes`` of state per row (CoCoA+'s K dual vectors
    kept in this process) would not fit in the memory available to this process (in
    process; on a cluster the workers' limit is checked with their windows and process,
    :func:`dsvm.training.memory.check_worker_memory`)."""
    if not isinstance(axes, GridAxes):
        axes = GridAxes(np.asarray(axes, np.float64))
    alphas = axes.alphas
    n_states = axes.n_candidates * int(n_stacks)
    need = int(state_bytes) * n_states * STATE_COPIES + int(row_bytes)
    limit = worker_memory(engine)
    if limit is not None and need > limit:
        folds = "" if n_stacks == 1 else (f" x {n_stacks} stacks (cv={n_stacks - 1}: every "
                                          "fold's models and the models on all rows)")
        others = "".join(f" x {len(getattr(axes, many))} {many}" for many in AXES
                         if getattr(axes, many) is not None)
        duals = f", and {int(row_bytes):,} bytes of dual variables" if row_bytes else ""
        fewer = "pass fewer alphas" + (" or values of the other axes" if others else "") + (
            "" if n_stacks == 1 else " or folds")
        raise ValueError(
            f"alphas={[float(f'{a:.3g}') for a in alphas]}{others}{folds}: {n_states} candidate "
            f"states of {state_bytes:,} bytes each need about {need:,} bytes per worker "
            f"({STATE_COPIES} copies at once{duals}), more than the {limit:,} bytes available; "
            f"{fewer}.")


def worker_memory(engine: Engine) -> int | None:
    """The memory available in this process for a fit in it (None on a cluster)."""
    if not isinstance(engine, LocalEngine):
        return None
    try:
        import psutil
    except ImportError:  # pragma: no cover (psutil comes with distributed)
        return None
    return int(psutil.virtual_memory().available)


def best_record(record: FittedModel, report: GridReport, best: int) -> FittedModel:
    """``record`` as the fit of candidate ``best`` alone: its state (its rows of the stacked
    arrays, copied; the shared counters; its eta0) and the model it predicts with."""
    own = report.candidate_state(best)
    coef, intercept = own.model()
    dtype = own.coef.dtype
    record.state = own
    record.coef, record.intercept = np.array(coef, dtype=dtype), np.array(intercept, dtype=dtype)
    return record
