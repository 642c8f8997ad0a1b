"""CoCoA+ with LIBLINEAR's dual coordinate descent as the local solver (NumPy in, NumPy out).

Minimises, for each output k (one-vs-rest; one output for two classes),

    P(w) = alpha/2 ||w||^2 + 1/n sum_i s_i loss(y_i w.x_i),    loss: hinge or squared hinge,

(``s_i``: the sample and class weights, n the number of rows: LIBLINEAR's C_i = s_i / (alpha n),
the convention of scikit-learn's LinearSVC) through its dual (see :mod:`dsvm.kernels.dcd`).
Ma, Smith, Jaggi et al. 2015 ("Adding vs. averaging in distributed primal-dual optimization"):
each of K streams improves the duals of its own rows against the local subproblem with
``sigma' = K`` and the streams' changes of w are *added* (gamma = 1), which keeps
``w = sum_i alpha_i y_i x_i`` and raises the dual objective every round.

Where this differs from the paper, and why:

- A stream's rows are its chunks of the round, read a window of ``shuffle_window`` chunks at
  a time (memory bounded, as the stochastic solvers' windows): the local solver runs
  ``local_iters`` passes of coordinate steps (a fresh permutation each, LIBLINEAR's order) over
  the window's rows, then moves on to the next window, carrying ``dw``. That is a particular
  coordinate order of the local subproblem, which CoCoA+ leaves to the local solver (its
  Theta-approximation); when a stream's chunks of a round fit in one window it is the paper's
  local DCD on the whole partition. One chunk at a time instead solves the partition's blocks
  in turn, exchanging their changes once per round, and converged 20-40x slower in epochs
  (a9a, 2 streams of 4,096-row chunks: 0.9% above the optimum after 10 epochs, 0.04% with
  windows of 8). So a CoCoA+ fit's default window is all of a stream's chunks up to 128 MB of
  rows (:func:`dsvm.training.cocoa.cocoa_window`); past that, a stream's windows are solved in
  turn and the fit needs more epochs (w8a in 1,024-row chunks, 4 windows of 8 per stream:
  1.7e-3 above the optimum after 10 epochs, against 0.1% at epoch 4 in one window).
- The local solver's accuracy (the paper's Theta) is set by the passes, not fixed: with a
  ``tol``, a window's passes stop before ``local_iters`` once one takes less than
  ``LOCAL_GAIN_SHARE x tol`` of the window's part of the primal objective off the subproblem
  (:class:`LocalPasses`), as LIBLINEAR stops its passes on a tolerance; each pass still
  raises the dual, so the per-round ascent holds.
- The partition of rows into streams is re-dealt every epoch (the chunk order); each round's
  subproblem is defined for the partition of that round, so the per-round dual ascent holds.
- The intercept (``fit_intercept=True``) is LIBLINEAR's bias feature of value 1, regularised
  like the weights (LIBLINEAR's ``-B 1``), not the free bias of the primal solvers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from dsvm.data.block_ops import kernel_rows
from dsvm.data.blocks import Block
from dsvm.kernels.dcd import DCD_LOSSES, DcdModel, DcdParams, dcd_pass
from dsvm.solvers.base import PassStats, SolverState
from dsvm.solvers.targets import output_targets


@dataclass(frozen=True)
class CocoaSolver:
    """CoCoA+'s hyper-parameters. ``local_iters``: passes of coordinate steps over each window's
    rows per round (H = local_iters x the round's rows; fractions allowed); ``rounds_per_epoch``:
    communication rounds per epoch (each reads 1/rounds of every stream's chunks).

    The default of 50 passes is measured (a9a / w8a, lambda = 1/n, 2 streams, 4,096-row
    chunks, 10 epochs; epochs to 0.1% of LIBLINEAR's optimum): 1 pass > 10 / > 10 (11% / 4.2%
    above after 10), 10 passes > 10 / 10, 20 passes 7 / 6, 50 passes 3 / 5, at 0.17 / 0.31 s
    an epoch in memory against 0.06 / 0.13 s for 1 pass. The passes run on rows in memory;
    for data read from storage the reads are the cost. ``tol`` (the fit's): a window's passes
    stop once one gains far less than it asks (:class:`LocalPasses`); None: all passes run."""

    loss: str = "hinge"
    alpha: float = 1e-4
    fit_intercept: bool = True
    local_iters: float = 50.0
    rounds_per_epoch: int = 1
    tol: float | None = None  # the fit's (see LocalPasses)
    name: str = "cocoa"

    def __post_init__(self) -> None:
        if self.loss not in DCD_LOSSES:
            raise ValueError(f"solver='cocoa' supports loss in {sorted(DCD_LOSSES)}; got "
                             f"loss={self.loss!r}.")
        if not float(self.local_iters) > 0:
            raise ValueError(f"local_iters must be > 0; got {self.local_iters!r}.")
        if int(self.rounds_per_epoch) < 1:
            raise ValueError(f"rounds_per_epoch must be >= 1; got {self.rounds_per_epoch!r}.")

    @property
    def bias(self) -> float:
        return 1.0 if self.fit_intercept else 0.0

    def init_state(self, n_features: int, n_outputs: int, dtype: np.dtype) -> SolverState:
        """w = 0 (all duals 0), kept in float64: w is the running sum of the duals' steps."""
        return SolverState(coef=np.zeros((n_outputs, n_features)), intercept=np.zeros(n_outputs))

    def calibrate(self, state: SolverState, block: Block, codes: np.ndarray) -> SolverState:
        return state  # nothing data-dependent: the steps are exact line searches

    def run_block(self, state: SolverState, block: Block, codes: np.ndarray,
                  order: np.ndarray) -> PassStats:
        raise TypeError("solver='cocoa' runs rounds over its dual store "
                        "(dsvm.training.cocoa), not per-row passes.")


def row_costs(block: Block, n_total: int, alpha: float) -> np.ndarray:
    """LIBLINEAR's C_i = s_i / (alpha n) of the block's rows."""
    c = 1.0 / (float(alpha) * max(1, int(n_total)))
    if block.sample_weight is None:
        return np.full(block.n_samples, c)
    return np.asarray(block.sample_weight, dtype=np.float64) * c


# A window's local passes stop once a pass takes less off the local subproblem than this
# share of tol times the window's part of the primal objective the round started from
# (:func:`round_start`): the fit stops on a relative duality gap of tol, and such passes
# re-read rows whose duals barely move. Measured (in process, default settings, tol=1e-3):
# 1,000,000 x 20 dense rows 7.6 -> 3.4-4.4 s, w8a 0.75 -> 0.53 s, ijcnn1 0.33 -> 0.19 s,
# a9a unchanged (its passes gain more than this to the 50th); 0.01 stalled a9a and w8a
# just above tol (10 epochs against 7), since late rounds then gain too little.
LOCAL_GAIN_SHARE = 0.001


class LocalPasses:
    """Whose local passes over a window go on (the candidates of a grid), each stopping on
    its own once a pass gains at most its ``enough`` (:func:`enough_gain`; None: never, all
    ``local_iters`` passes run). A pure function of the steps taken, so a re-run task stops
    where the first run did."""

    def __init__(self, enough: dict[int, float | None]) -> None:
        self._active = list(enough)
        self._enough = enough

    def active(self) -> list[int]:
        return list(self._active)

    def record(self, k: int, gain: float) -> None:
        """Candidate ``k``'s pass took ``gain`` off its local subproblem."""
        enough = self._enough[k]
        if enough is not None and gain <= enough:
            self._active.remove(k)


def enough_gain(solver: CocoaSolver, objective: float) -> float | None:
    """What a pass over a window must gain for the next pass to run, from the window's part
    of the primal objective (:func:`round_start`); None without a tol: every pass runs."""
    if solver.tol is None:
        return None
    return LOCAL_GAIN_SHARE * float(solver.tol) * objective


def local_passes(n_rows: int, local_iters: float, rng: np.random.Generator
                 ) -> Iterator[np.ndarray]:
    """H = round(local_iters x n_rows) row indices, one pass at a time: whole permutations,
    then part of one (int64). Drawn pass by pass, so that a window of n rows holds n indices,
    not H (50 passes of a 250,000-row window were 100 MB of int64, twice over)."""
    h = int(round(float(local_iters) * n_rows))
    full, rest = divmod(h, max(1, n_rows))
    for _ in range(full):
        yield rng.permutation(n_rows).astype(np.int64, copy=False)
    if rest:
        yield rng.permutation(n_rows)[:rest].astype(np.int64)


def local_order(n_rows: int, local_iters: float, rng: np.random.Generator) -> np.ndarray:
    """All of :func:`local_passes` in one array (the same indices; for tests and references)."""
    parts = list(local_passes(n_rows, local_iters, rng))
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


@dataclass
class LocalModel:
    """A stream's model during a round: v = w + sigma dw and its own change dw (float64)."""

    V: np.ndarray
    dW: np.ndarray
    vb: np.ndarray
    db: np.ndarray

    @classmethod
    def start(cls, coef: np.ndarray, intercept: np.ndarray) -> LocalModel:
        return cls(np.array(coef, dtype=np.float64), np.zeros(coef.shape),
                   np.array(intercept, dtype=np.float64), np.zeros(intercept.shape))

    def rows(self, rows: slice) -> LocalModel:
        """The model of the outputs ``rows`` (one candidate of a grid): contiguous views,
        so the dual steps on them update this model (and numba reuses its kernels)."""
        return LocalModel(self.V[rows], self.dW[rows], self.vb[rows], self.db[rows])


def dcd_block(solver: CocoaSolver, block: Block, codes: np.ndarray, cost: np.ndarray,
              duals: np.ndarray, local: LocalModel, order: np.ndarray, sigma: float
              ) -> tuple[int, float]:
    """Coordinate steps on ``block``'s rows in ``order``; updates ``duals`` and ``local``.
    Returns (steps that changed a dual, what they took off the local subproblem's objective,
    in LIBLINEAR's scale)."""
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    loss = DCD_LOSSES[solver.loss]
    X = kernel_rows(block)  # read-only views: one compiled variant (data.block_ops)
    model = DcdModel(local.V, local.dW, local.vb, local.db)
    gain = np.zeros(1)
    changed = int(dcd_pass(X, codes, cost, duals, model, order,
                           DcdParams(float(sigma), loss, float(solver.bias)), gain))
    return changed, float(gain[0])


def primal_loss(loss: str, margins: np.ndarray) -> np.ndarray:
    gap = np.maximum(0.0, 1.0 - margins)
    return gap if loss == "hinge" else gap * gap


def row_margins(solver: CocoaSolver, block: Block, codes: np.ndarray, coef: np.ndarray,
                intercept: np.ndarray) -> np.ndarray:
    """(rows, outputs) margins y w.x of the rows, the bias feature's part included."""
    Y = output_targets(codes, coef.shape[0])
    scores = np.asarray(block.to_matrix() @ coef.T, dtype=np.float64)
    return Y * (scores + solver.bias * intercept[None, :])


def dual_curvature(solver: CocoaSolver, cost: np.ndarray, duals: np.ndarray) -> np.ndarray:
    """D_ii alpha_i^2 by row and output (0 for the hinge; 1 / (2 C_i) for the squared hinge;
    rows of C_i = 0 have no dual)."""
    if solver.loss != "squared_hinge":
        return np.zeros_like(duals)
    safe = np.where(cost > 0, cost, 1.0)
    return np.where((cost > 0)[:, None], (0.5 / safe)[:, None] * duals * duals, 0.0)


def round_start(solver: CocoaSolver, block: Block, codes: np.ndarray, cost: np.ndarray,
                duals: np.ndarray, coef: np.ndarray, intercept: np.ndarray
                ) -> tuple[np.ndarray, float]:
    """What a round needs of its rows at its starting (w, alpha), from one product of them
    with the model: their :func:`gap_terms` and their part of LIBLINEAR's primal objective,
    sum_i C_i loss_i + alpha_i m_i / 2 with m_i = y_i w.x_i (since w = sum_i alpha_i y_i x_i,
    ||w||^2 = sum_i alpha_i m_i, and these parts add up to P over all rows)."""
    margins = row_margins(solver, block, codes, coef, intercept)
    losses = primal_loss(solver.loss, margins)
    terms = np.zeros(4)
    terms[0] = float(cost @ losses.sum(axis=1))
    terms[1] = float(duals.sum())
    terms[2] = float(dual_curvature(solver, cost, duals).sum())
    weights = np.ones(block.n_samples) if block.sample_weight is None else block.sample_weight
    terms[3] = float(np.asarray(weights, dtype=np.float64) @ losses.sum(axis=1))
    return terms, terms[0] + 0.5 * float(np.sum(duals * margins))


def gap_terms(solver: CocoaSolver, block: Block, codes: np.ndarray, cost: np.ndarray,
              duals: np.ndarray, coef: np.ndarray, intercept: np.ndarray) -> np.ndarray:
    """[sum C_i loss_i(w), sum alpha, sum D_ii alpha^2, sum s_i loss_i(w)] over the rows and
    outputs, at the round's starting (w, alpha): the parts of LIBLINEAR's primal and dual."""
    return round_start(solver, block, codes, cost, duals, coef, intercept)[0]


def window_objective(solver: CocoaSolver, block: Block, codes: np.ndarray, cost: np.ndarray,
                     duals: np.ndarray, coef: np.ndarray, intercept: np.ndarray) -> float:
    """The rows' part of LIBLINEAR's primal objective at (w, alpha) (:func:`round_start`)."""
    return round_start(solver, block, codes, cost, duals, coef, intercept)[1]


def duality_gap(alpha: float, coef: np.ndarray, intercept: np.ndarray, bias: float,
                terms: np.ndarray) -> tuple[float, float]:
    """(primal, dual) objectives in P's scale (alpha times LIBLINEAR's) from the summed
    :func:`gap_terms` of all rows, at w = sum alpha_i y_i x_i."""
    norm = float(np.sum(np.square(coef))) + bias * float(np.sum(np.square(intercept)))
    primal = 0.5 * norm + float(terms[0])
    dual = float(terms[1]) - 0.5 * norm - 0.5 * float(terms[2])
    return alpha * primal, alpha * dual


def with_weights(block: Block, codes: np.ndarray, class_weight: np.ndarray | None) -> Block:
    """``block`` with each row's sample weight times its class's weight (C_i = s_i C)."""
    if class_weight is None:
        return block
    weights = np.asarray(class_weight, dtype=np.float64)[codes]
    if block.sample_weight is not None:
        weights = weights * np.asarray(block.sample_weight, dtype=np.float64)
    return replace(block, sample_weight=weights)


def chunk_rng(seed: int, epoch: int, chunk: int) -> np.random.Generator:
    """The local solver's coordinate order of one chunk in one epoch: a pure function of
    (seed, epoch, chunk), so a re-run task takes the same steps."""
    return np.random.default_rng([int(seed) % (2**63), int(epoch), int(chunk), 0xC0C0A])
