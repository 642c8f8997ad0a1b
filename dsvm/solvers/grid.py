"""K candidate models trained in one pass: a grid of ``alpha`` values (and, optionally, of
``l1_ratio``, loss and class weight) for model selection.

Choosing the regularisation usually costs K full trainings (``GridSearchCV``,
dask-ml's ``IncrementalSearchCV``: every candidate reads the data again). For data read from
storage a pass costs the same whether it trains one model or eight, so :class:`CandidateGrid`
trains them side by side: each row block is read once and every candidate takes its steps on
it, as one-vs-rest multiclass already trains C outputs in one pass.

**Stacked states.** The grid's :class:`~dsvm.solvers.base.SolverState` stacks the K
candidates' states along the outputs axis: ``coef`` is (K*m, d), ``intercept`` (K*m,), the
averages likewise, where m is the inner model's outputs (1 for binary and regression, C for
multiclass: K alphas x C classes in one pass). Candidate k owns rows k*m .. (k+1)*m, and its
inner solver runs on row-slice *views* of the stacked arrays: contiguous, so numba reuses the
kernels it compiled for one model (no new kernels), and nothing is copied. Everything that
handles a state without knowing what it holds works unchanged: the combine
(:mod:`dsvm.combine.averaging`) averages stacked arrays element-wise, so the streams of a
cluster, its tree reduction and the held state between epochs need no change.

**Shared counters.** The step counter ``t`` and the averaging weight ``n_avg`` depend only on
the rows visited and the schedule's length (Pegasos: one step per mini-batch, weights
t ** p; SGD: the same, from ``average_start``), never on alpha: every candidate has the same,
kept once. Axis by axis (#27): the loss and the class weights change each step's gradient,
never whether a step is taken or how its iterate weighs in the average (a row of weight 0
still counts a step), so they share the counters too; ``l1_ratio`` shares them among
``penalty="elasticnet"`` candidates (all run the FOLOS pass, one step per mini-batch, no
average), but not with ``penalty="l2"`` ones, which keep a running average (p = 0.75 instead
of 1): a grid mixing the two is refused (:func:`counter_config`), as are candidates of other
kinds, batch sizes or averaging starts. :meth:`CandidateGrid.run_stack` also checks after every
pass that every candidate took the same steps. What differs per candidate is in
``state.extra`` as (K,) arrays, which the combine averages by row weight (a per-candidate
constant stays constant): SGD's calibrated ``eta0`` (``grid_eta0``) and which candidates still
train (``grid_active``, 0.0 or 1.0: exact under the averaging). A frozen candidate is skipped
by :meth:`CandidateGrid.run_block` (it costs no compute) and its arrays stay what they were:
averaging identical copies gives them back.

**Class weights per candidate.** With ``class_weights`` the pass hands the grid rows weighted
by ones (so that a window's rows outside it weigh 0, as they do in a weighted fit,
:func:`dsvm.solvers.passes.span_of_views`) and each candidate's pass multiplies its own class
weights in (once per distinct weighting and block, not per candidate): the products are those
a fit of that class weight alone makes, and 1.0 times a weight is that weight, so a candidate
with none trains as an unweighted fit. The calibration sample is weighted per candidate too.

**Stacks: k folds.** With ``n_stacks = S > 1`` (``cv=k``: S = k + 1) the state holds S
stacks of the K candidates: stack 0 trains on every row (the models published), stack f + 1
on the rows outside fold f (:class:`dsvm.data.fold.KFold`, scored on fold f). Candidate j of
stack s owns rows (s K + j) m .. (s K + j + 1) m. The stacks take different steps, so each
keeps its own counters in ``extra`` (``grid_t``, ``grid_n_avg``, (S,)) with the rows it
trained on in the current epoch (``grid_rows``), and the combine pools them stack by stack
(:class:`dsvm.training.grid_folds.StackAveraging`); ``state.t`` and ``state.n_avg`` are
stack 0's. A pass gives :meth:`CandidateGrid.run_folds` its one row order and the fold of
each step's row: every stack runs the kernels over that order with the steps of its own
fold removed, so each stack's order is the order a fit on its rows alone would take (the
rows keep their relative order, as a held-out share leaves them, :mod:`dsvm.solvers.passes`),
the chunk is read once for all of them, and no kernel changes: a stack is K views, as the
grid of one stack is. Copying each stack's rows into a block of its own instead would cost
k copies of every block per epoch; S orders of int64 cost S x 8 bytes a row.

**Windows in a row** (CSR rows with an average, the 2^22-feature case of #27). A pass over
CSR rows pairs each candidate's W with its average in a scratch (:mod:`dsvm.kernels.pairs`):
copying them in and out, and folding the scale and the average's sum at the end, are O(d)
per candidate and pass. On 4,096-row chunks in windows of 8 that was half of the grid's
pass (400,000 x 2^22 x 40 nonzeros, 8 candidates: 169 ms of O(d) work and 188 ms of steps
per window of 32,768 rows). So a stream holds several windows (up to one candidate's state
in bytes, :meth:`CandidateGrid.window_budget`: the memory of one more state, about 4
windows at 2^22) and :meth:`CandidateGrid.run_windows` runs each candidate over all of
them in a row, its W kept paired between the passes
(:func:`dsvm.solvers.objective.pairs_kept`): the O(d) work is paid once per candidate and
group of windows. SGD's kept passes also carry their scale and average (one pass over the
group's rows; rounding apart, the steps of a fit of its own); Pegasos' fold per pass, bit
for bit as before. Candidate-major order needs no more memory than the grid has: one
candidate's scratch at a time, and each candidate takes the same steps on the same rows in
the same order. What was not done: fusing the candidates into one pass with their weights
side by side ((d, K) layout, 2 cache lines per nonzero for 8 candidates instead of 8):
measured in the one body on (d, K) views, the steps cost 140 ms against 188 ms for 8
sequential passes, but it needs all K candidates paired at once (8 x 64 MB of scratch at
2^22 features, the K states again) and its O(d) folds sweep all K per candidate.

**What it does not do.** Averaged Pegasos' Richardson extrapolation (the solver's
``selection``) needs each model's sampled objective; inside the grid the plain average is
returned (``selection`` is None). The grid is never probed (``probed = False``: the probes
of :mod:`dsvm.training.probes` would read the K*m outputs as one model) and has its own
``penalty_of``. ASSET (constants per alpha in ``extra``), CoCoA+ (duals per row), NESVM and
BSGD are not stacked: :func:`grid_solvers` refuses them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np

from dsvm.data.blocks import Block, CSRBlock
from dsvm.solvers.base import LocalSolver, PassStats, SolverState
from dsvm.solvers.objective import pairs_kept
from dsvm.solvers.passes import WindowRows, with_class_weight
from dsvm.solvers.targets import initial_intercept

ACTIVE = "grid_active"
ETA0 = "grid_eta0"
# with stacks (k folds): each stack's step counter, averaging weight and rows this epoch
STACK_T = "grid_t"
STACK_N_AVG = "grid_n_avg"
STACK_ROWS = "grid_rows"

# The inner solvers whose counters do not depend on alpha (see "Shared counters").
STACKABLE = ("pegasos", "sgd")

_ARRAYS = ("coef", "intercept", "avg_coef", "avg_intercept")


class AlphaCandidates:
    """What the training layer reads of any grid of K candidate solvers (``solvers``): the
    stochastic grid here, CoCoA+'s (:class:`dsvm.solvers.cocoa_grid.CocoaCandidates`)."""

    solvers: tuple[Any, ...]

    @property
    def n_candidates(self) -> int:
        return len(self.solvers)

    @property
    def alphas(self) -> np.ndarray:
        return np.array([float(s.alpha) for s in self.solvers])


@dataclass(frozen=True)
class CandidateGrid(AlphaCandidates):
    """K solvers of one kind that differ in ``alpha`` (and maybe loss, ``l1_ratio``, class
    weights), trained on the same rows in one pass.

    Parameters
    ----------
    solvers : sequence of LocalSolver
        The candidates, all of the same kind (``pegasos`` or ``sgd``) and step schedule
        (:func:`counter_config`).
    n_stacks : int, default=1
        Copies of the K candidates trained on different rows (see "Stacks: k folds").
    class_weights : tuple of (array or None), default=()
        Each candidate's weight per class code, multiplied into the rows' weights by its pass
        (see "Class weights per candidate"); empty: the pass's own class weight for all.
    regression : bool, default=False
        A regression: a candidate whose loss differs from the first's starts its intercept at
        its own loss's centre of the targets (:func:`dsvm.solvers.targets.initial_intercept`).
    """

    solvers: tuple[LocalSolver, ...]
    n_stacks: int = 1
    class_weights: tuple[np.ndarray | None, ...] = ()
    regression: bool = False

    name: ClassVar[str] = "grid"
    probed: ClassVar[bool] = False  # (training.probes: never probe the stacked outputs)

    def __post_init__(self) -> None:
        if not self.solvers:
            raise ValueError("CandidateGrid needs at least one candidate solver.")
        kinds = {s.name for s in self.solvers}
        if len(kinds) != 1 or not kinds <= set(STACKABLE):
            raise ValueError(f"CandidateGrid stacks solvers of one kind among {STACKABLE}; got "
                             f"{sorted(kinds)}.")
        first = counter_config(self.solvers[0])
        for k, solver in enumerate(self.solvers[1:], 1):
            if counter_config(solver) != first:
                raise ValueError(
                    f"CandidateGrid: candidates 0 and {k} take different steps "
                    f"({first} against {counter_config(solver)}: kind, batch size, whether "
                    "a running average is kept, the schedule's power, the average's start), "
                    "so they cannot share the step counters of one pass.")
        if self.class_weights and len(self.class_weights) != len(self.solvers):
            raise ValueError(f"CandidateGrid: {len(self.class_weights)} class weightings for "
                             f"{len(self.solvers)} candidates.")

    # -- what the training layer reads of a solver -------------------------------------------------
    @property
    def alpha(self) -> float:
        return float(self.solvers[0].alpha)

    @property
    def loss(self) -> str:
        return str(self.solvers[0].loss)

    @property
    def loss_param(self) -> float:
        return float(getattr(self.solvers[0], "loss_param", 0.0))

    @property
    def fit_intercept(self) -> bool:
        return bool(getattr(self.solvers[0], "fit_intercept", True))

    @property
    def penalty(self) -> str:
        return str(getattr(self.solvers[0], "penalty", "l2"))

    @property
    def l1_ratio(self) -> float:
        return float(getattr(self.solvers[0], "l1_ratio", 0.0))

    @property
    def selection(self) -> None:
        """No extrapolation inside the grid: each candidate returns its plain average."""
        return None

    def penalty_of(self, coef: np.ndarray) -> float:
        """The mean over candidates of each one's penalty at its rows of ``coef`` (so that
        the epoch's objective is the candidates' mean objective; with stacks, stack 0's)."""
        m = coef.shape[0] // (self.n_candidates * self.n_stacks)
        return float(np.mean([candidate_penalty(s, coef[k * m:(k + 1) * m])
                              for k, s in enumerate(self.solvers)]))

    # -- the protocol --------------------------------------------------------------------------
    def init_state(self, n_features: int, n_outputs: int, dtype: np.dtype) -> SolverState:
        """The K fresh states stacked, ``n_stacks`` times (``n_outputs``: one candidate's
        outputs)."""
        parts = [s.init_state(n_features, n_outputs, dtype) for s in self.solvers]
        parts = parts * self.n_stacks
        first = parts[0]
        state = SolverState(
            coef=np.concatenate([p.coef for p in parts]),
            intercept=np.concatenate([p.intercept for p in parts]),
            t=first.t, n_avg=first.n_avg,
            extra={ACTIVE: np.ones(len(parts)), ETA0: np.array([p.eta0 for p in parts])},
        )
        if first.avg_coef is not None:
            state.avg_coef = np.concatenate([p.avg_coef for p in parts])
            state.avg_intercept = np.concatenate([p.avg_intercept for p in parts])
        if self.n_stacks > 1:
            state.extra.update({STACK_T: np.full(self.n_stacks, float(first.t)),
                                STACK_N_AVG: np.full(self.n_stacks, float(first.n_avg)),
                                STACK_ROWS: np.zeros(self.n_stacks)})
        return state

    def calibrate(self, state: SolverState, block: Block, codes: np.ndarray) -> SolverState:
        """Each candidate's constants (SGD: its own eta0, searched at its own alpha), the
        same in every stack: found for stack 0 and copied (they depend on alpha and the
        calibration rows only)."""
        out = state.copy()
        one = self.stack(out, 0) if self.n_stacks > 1 else out
        weighted: dict[int, Block] = {}
        for k, solver, view in self.candidates(one):
            own = self.weighted_block(block, codes, k, weighted)
            if self.regression and solver.loss != self.loss and self.fit_intercept:
                # (the calibration task started every intercept at the first loss's centre)
                view.intercept[:] = initial_intercept(codes, own.sample_weight, solver.loss)
            calibrated = solver.calibrate(view, own, codes)
            write_back(one, k, calibrated)
            one.extra[ETA0][k] = calibrated.eta0
        for s in range(1, self.n_stacks):
            other = self.stack(out, s)
            for name in _ARRAYS:
                if getattr(one, name) is not None:
                    np.copyto(getattr(other, name), getattr(one, name))
            other.extra[ETA0][:] = one.extra[ETA0]
        return out

    def run_block(self, state: SolverState, block: Block, codes: np.ndarray,
                  order: np.ndarray) -> PassStats:
        """Every active candidate's pass over ``block`` rows in ``order``, in place (with
        stacks: every stack over every row of ``order``, as :meth:`run_folds` with no fold;
        only a pass without folds does so, e.g. the one that compiles the kernels)."""
        if self.n_stacks > 1:
            return self.run_folds(state, block, codes, order, None)
        return self.run_stack(state, block, codes, order)

    def run_folds(self, state: SolverState, block: Block, codes: np.ndarray,
                  order: np.ndarray, step_folds: np.ndarray | None) -> PassStats:
        """Every stack's pass over ``block``: stack 0 over ``order``, stack f + 1 over
        ``order`` without the steps whose row is in fold f (``step_folds[i]``: the fold of
        row ``order[i]``), each with its own counters; returns stack 0's statistics (the
        rows of every model published: what weighs the streams, as for a fit of its own)."""
        if self.n_stacks == 1:
            return self.run_stack(state, block, codes, order)
        steps, weights = state.extra[STACK_T], state.extra[STACK_N_AVG]
        first = PassStats()
        for s in range(self.n_stacks):
            own = order if s == 0 or step_folds is None else order[step_folds != s - 1]
            part = self.stack(state, s)
            stats = self.run_stack(part, block, codes, own)
            steps[s], weights[s] = part.t, part.n_avg
            state.extra[STACK_ROWS][s] += stats.n_rows
            if s == 0:
                first = stats
        state.t, state.n_avg = float(steps[0]), float(weights[0])
        return first

    def stack(self, state: SolverState, s: int) -> SolverState:
        """Stack ``s`` of ``state`` as the state of a grid of one stack: views of its rows and
        of its candidates' ``extra`` entries (writes go through), its own counters."""
        width = self.n_candidates
        m = state.n_outputs // (width * self.n_stacks)
        rows = slice(s * width * m, (s + 1) * width * m)
        own = slice(s * width, (s + 1) * width)
        avg_coef, avg_intercept = state.avg_coef, state.avg_intercept
        t, n_avg = state.t, state.n_avg
        if STACK_T in state.extra:
            t, n_avg = float(state.extra[STACK_T][s]), float(state.extra[STACK_N_AVG][s])
        return SolverState(coef=state.coef[rows], intercept=state.intercept[rows], t=t,
                           avg_coef=None if avg_coef is None else avg_coef[rows],
                           avg_intercept=None if avg_intercept is None else avg_intercept[rows],
                           n_avg=n_avg, eta0=state.eta0,
                           extra={ACTIVE: state.extra[ACTIVE][own],
                                  ETA0: state.extra[ETA0][own]})

    def run_stack(self, state: SolverState, block: Block, codes: np.ndarray,
                  order: np.ndarray) -> PassStats:
        """Every active candidate's pass over ``block`` rows in ``order``, in place (one
        stack: ``state`` holds K candidates)."""
        losses, stats, counters = [], PassStats(), None
        weighted: dict[int, Block] = {}
        for k, solver, view in self.candidates(state, active_only=True):
            stats = solver.run_block(view, self.weighted_block(block, codes, k, weighted),
                                     codes, order)
            write_back(state, k, view)
            losses.append(stats.loss_sum)
            if counters is not None and counters != (view.t, view.n_avg):
                raise AssertionError(f"CandidateGrid: candidate {k} took other steps "
                                     f"{(view.t, view.n_avg)} than the others {counters}.")
            counters = (view.t, view.n_avg)
        if counters is None:  # all frozen: the rows still count (they weigh the combine)
            return PassStats(n_rows=int(len(order)), weight_sum=_weight_of(block, order))
        state.t, state.n_avg = counters
        weight_sum = stats.weight_sum if not self.class_weights else _weight_of(block, order)
        return PassStats(loss_sum=float(np.mean(losses)), n_rows=stats.n_rows,
                         weight_sum=weight_sum)

    # -- several windows in a row: each candidate over all of them (see "Windows in a row") --
    def window_budget(self, state: SolverState, block: Block) -> int:
        """Bytes of windows a stream may hold for :meth:`run_windows`: one candidate's share
        of the state (its W and average), for CSR rows with an average (the passes that pair
        W with it, :mod:`dsvm.kernels.pairs`); 0 (one window at a time) otherwise."""
        if not isinstance(block, CSRBlock) or state.avg_coef is None:
            return 0
        return int(state.nbytes // (self.n_candidates * self.n_stacks))

    def run_windows(self, state: SolverState, windows: Sequence[WindowRows]) -> PassStats:
        """:meth:`run_folds` over each window in turn (the stats of stack 0, summed in window
        order), run candidate by candidate: each candidate's passes over all the windows
        follow one another with its W kept paired (:func:`~dsvm.solvers.objective.
        pairs_kept`), so they give what one window after the other gives, bit for bit."""
        ready = [w for w in windows if w.rows is not None]
        per_window: list[PassStats] = []
        if self.n_stacks == 1:
            per_window = self.run_group(state, ready, [w.order for w in ready])
        else:
            steps, weights = state.extra[STACK_T], state.extra[STACK_N_AVG]
            for s in range(self.n_stacks):
                orders = [w.order if s == 0 or w.folds is None else w.order[w.folds != s - 1]
                          for w in ready]
                part = self.stack(state, s)
                of_stack = self.run_group(part, ready, orders)
                steps[s], weights[s] = part.t, part.n_avg
                for one in of_stack:
                    state.extra[STACK_ROWS][s] += one.n_rows
                if s == 0:
                    per_window = of_stack
            state.t, state.n_avg = float(steps[0]), float(weights[0])
        total, run = PassStats(), iter(per_window)
        for w in windows:  # (a window of empty chunks still brings its probe losses)
            total = total + (w.probe if w.rows is None else next(run) + w.probe)
        return total

    def run_group(self, state: SolverState, windows: Sequence[WindowRows],
                  orders: Sequence[np.ndarray]) -> list[PassStats]:
        """:meth:`run_stack` over each window in turn (``orders[w]``: window w's), candidate
        after candidate; returns each window's statistics as run_stack gives them."""
        n = len(windows)
        losses: list[list[float]] = [[] for _ in range(n)]
        last: list[PassStats] = [PassStats()] * n
        counters: list[tuple[float, float] | None] = [None] * n
        weighted: list[dict[int, Block]] = [{} for _ in range(n)]
        for k, solver, view in self.candidates(state, active_only=True):
            with pairs_kept(view):
                for w, (win, order) in enumerate(zip(windows, orders)):
                    rows = cast(Block, win.rows)
                    last[w] = solver.run_block(
                        view, self.weighted_block(rows, win.codes, k, weighted[w]),
                        win.codes, order)
                    losses[w].append(last[w].loss_sum)
                    if counters[w] is not None and counters[w] != (view.t, view.n_avg):
                        raise AssertionError(
                            f"CandidateGrid: candidate {k} took other steps "
                            f"{(view.t, view.n_avg)} than the others {counters[w]}.")
                    counters[w] = (view.t, view.n_avg)
            write_back(state, k, view)
        out = []
        for w, (win, order) in enumerate(zip(windows, orders)):
            rows = cast(Block, win.rows)
            if counters[w] is None:  # all frozen (see run_stack)
                out.append(PassStats(n_rows=int(len(order)), weight_sum=_weight_of(rows, order)))
                continue
            weight_sum = (last[w].weight_sum if not self.class_weights
                          else _weight_of(rows, order))
            out.append(PassStats(loss_sum=float(np.mean(losses[w])), n_rows=last[w].n_rows,
                                 weight_sum=weight_sum))
        final = counters[-1] if n else None
        if final is not None:
            state.t, state.n_avg = final
        return out

    def weighted_block(self, block: Block, codes: np.ndarray, k: int,
                       made: dict[int, Block]) -> Block:
        """``block`` with candidate ``k``'s class weights multiplied into its rows' weights
        (``made``: the blocks already weighted in this pass, by the first candidate of their
        weighting; candidates with the same weights share one)."""
        own = self.class_weights[k] if self.class_weights else None
        if own is None:
            return block
        for j, done in made.items():
            theirs = self.class_weights[j]
            if theirs is own or (theirs is not None and np.array_equal(theirs, own)):
                return done
        made[k] = with_class_weight(block, codes, own)
        return made[k]

    # -- candidates ----------------------------------------------------------------------------
    def candidates(self, state: SolverState, *, active_only: bool = False
                   ) -> Iterator[tuple[int, LocalSolver, SolverState]]:
        """(index, inner solver, a state of views into ``state``'s rows) per candidate."""
        active = state.extra[ACTIVE]
        for k, solver in enumerate(self.solvers):
            if active_only and active[k] < 0.5:
                continue
            yield k, solver, candidate_view(state, k, self.n_candidates)

    def candidate_model(self, state: SolverState, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(coef, intercept) candidate ``k`` predicts with (its average when it keeps one)."""
        return candidate_view(state, k, self.n_candidates).model()


def candidate_view(state: SolverState, k: int, n_candidates: int) -> SolverState:
    """Candidate ``k``'s state: row-slice views of the stacked arrays (writes go through), the
    shared counters, its own eta0."""
    m = state.n_outputs // n_candidates
    rows = slice(k * m, (k + 1) * m)
    avg_coef, avg_intercept = state.avg_coef, state.avg_intercept
    return SolverState(coef=state.coef[rows], intercept=state.intercept[rows], t=state.t,
                       avg_coef=None if avg_coef is None else avg_coef[rows],
                       avg_intercept=None if avg_intercept is None else avg_intercept[rows],
                       n_avg=state.n_avg, eta0=float(state.extra[ETA0][k]))


def write_back(state: SolverState, k: int, result: SolverState) -> None:
    """Copy into candidate ``k``'s rows what a solver put in new arrays instead of the views
    (a state without averages gets new ones; a calibration may return a new state)."""
    fresh = candidate_view(state, k, state.extra[ACTIVE].shape[0])
    for name in _ARRAYS:
        target, value = getattr(fresh, name), getattr(result, name)
        if value is None:
            continue
        if target is None:
            raise ValueError(f"CandidateGrid: candidate {k} made {name}, which the stacked "
                             "state does not keep.")
        if _address(value) != _address(target):  # (a view of the rows themselves: written)
            np.copyto(target, value)


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _weight_of(block: Block, order: np.ndarray) -> float:
    sw = block.sample_weight
    return float(len(order)) if sw is None else float(np.asarray(sw)[order].sum())


def candidate_penalty(solver: Any, coef: np.ndarray) -> float:
    """One candidate's regulariser at ``coef`` (its own for L1 / elastic net)."""
    own = getattr(solver, "penalty_of", None)
    if own is not None:
        return float(own(coef))
    flat = np.asarray(coef, dtype=np.float64).ravel()
    return float(0.5 * solver.alpha * np.dot(flat, flat))


def counter_config(solver: Any) -> tuple[Any, ...]:
    """What sets a solver's step counter and averaging weight besides the rows it visits:
    candidates that agree on it take the same steps (see "Shared counters")."""
    averaging = getattr(solver, "averaging", getattr(solver, "average", False))
    return (solver.name, int(getattr(solver, "batch_size", 1)), bool(averaging),
            getattr(solver, "power", None), getattr(solver, "average_start", None))


def grid_solvers(make: Any, alphas: Sequence[Any] | np.ndarray, n_stacks: int = 1, *,
                 class_weights: Sequence[np.ndarray | None] = (),
                 regression: bool = False) -> CandidateGrid:
    """The grid of ``make(candidate)`` for each candidate (an alpha, or the parameters of a
    product grid), ``n_stacks`` times (refused for solvers that do not stack)."""
    solvers = tuple(make(a) for a in alphas)
    name = solvers[0].name
    if name not in STACKABLE:
        raise ValueError(f"solver={name!r} cannot train a grid of alphas in one pass; use "
                         f"solver='sgd' or 'pegasos' (or 'auto', which picks 'sgd').")
    return CandidateGrid(solvers, int(n_stacks), tuple(class_weights), bool(regression))
