"""What every local solver shares: its state, its per-pass statistics and its protocol.

A *local pass* runs one solver over one row block, starting from a state and mutating it in place.
The caller (the in-process loop or a worker task) copies the state first, because a future's value
may be shared by several tasks on one worker. Combining the states of parallel streams is the job
of :mod:`dsvm.combine`; a state therefore keeps every array that has to be averaged as a named
field, and ``t`` (the step counter) as a number that can be averaged too.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from dsvm.data.blocks import Block
from dsvm.exceptions import DataFormatError
from dsvm.kernels.labels import encode_classes


@dataclass
class SolverState:
    """The model being trained and the solver's running quantities.

    coef : (n_outputs, n_features) array in the data's dtype; the current iterate w_t.
    intercept : (n_outputs,) array in the data's dtype; the current (unregularised) bias.
    t : number of steps taken so far (global across epochs and, after a combine, the weighted
        mean of the streams' counters).
    avg_coef, avg_intercept : running Polyak-Ruppert averages (averaged solvers), else None.
    n_avg : total averaging weight of the running average (the number of iterates for
        uniform averages, sum_t a_t for weighted ones).
    eta0 : initial step size of schedules that need one (SGD), NaN where unused (Pegasos).
    extra : solver-specific named arrays that are averaged by the combine like ``coef`` is.
    probe_coef, probe_intercept : (P * n_outputs, n_features) and (P * n_outputs,) float64
        models whose loss the pass also measures on a sample of its rows (the two candidates
        of :mod:`dsvm.solvers.extrapolation`), or None. Passes never change them.
    probe_stride : the probe reads rows 0, probe_stride, 2 probe_stride, ... of each block.
    selection : the solver's model-selection bookkeeping, kept on the client and in checkpoints,
        never shipped to workers (see :class:`ModelSelection`; averaged Pegasos' snapshots and
        verdict, :class:`dsvm.solvers.extrapolation.Extrapolation`), or None.
    """

    coef: np.ndarray
    intercept: np.ndarray
    t: float = 0.0
    avg_coef: np.ndarray | None = None
    avg_intercept: np.ndarray | None = None
    n_avg: float = 0.0
    eta0: float = float("nan")
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    probe_coef: np.ndarray | None = None
    probe_intercept: np.ndarray | None = None
    probe_stride: int = 1
    selection: Any = None

    @property
    def n_outputs(self) -> int:
        return int(self.coef.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.coef.shape[1])

    def copy(self) -> SolverState:
        def _c(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a.copy()

        return replace(
            self,
            coef=self.coef.copy(),
            intercept=self.intercept.copy(),
            avg_coef=_c(self.avg_coef),
            avg_intercept=_c(self.avg_intercept),
            extra={k: v.copy() for k, v in self.extra.items()},
            selection=None if self.selection is None else self.selection.copy(),
        )  # the probe models are shared: passes only read them

    @property
    def extrapolation(self) -> Any:
        """Averaged Pegasos' model selection (the ``selection`` of that solver)."""
        return self.selection

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays that travel to the workers (the client's snapshots do not)."""
        arrays = [self.coef, self.intercept, self.avg_coef, self.avg_intercept,
                  self.probe_coef, self.probe_intercept, *self.extra.values()]
        return sum(a.nbytes for a in arrays if a is not None)

    def __sizeof__(self) -> int:
        # dask's memory accounting falls back to sys.getsizeof (56 bytes) for dataclasses
        return 64 + self.nbytes

    def model(self) -> tuple[np.ndarray, np.ndarray]:
        """The (coef, intercept) to predict with: what the model selection chose (averaged
        Pegasos: the average or its extrapolation, see :mod:`dsvm.solvers.extrapolation`), else
        the average when there is one, else w_t."""
        if self.avg_coef is not None and self.n_avg > 0:
            assert self.avg_intercept is not None
            if self.selection is not None:
                chosen = self.selection.model(self)
                if chosen is not None:
                    return chosen
            return self.avg_coef, self.avg_intercept
        return self.coef, self.intercept


@dataclass
class PassStats:
    """What a local pass measured while it ran (summed, so that stats of streams add up).

    loss_sum : sum over rows (and outputs) of sample_weight * loss(w_t at the time of the step).
    n_rows : rows visited.
    weight_sum : sum of sample weights visited (== n_rows without weights).
    probe_sums : (2, P) sums over the probe rows of sample_weight * loss of each probe model
        and of sample_weight * (its loss - probe 0's loss)^2, or None when the state had no
        probe models; probe_weight, probe_rows : those rows' weight sum and count.
    compile_seconds : time spent compiling numba kernels in this pass (streams run side by
        side, so their compile times combine by the maximum).
    held_out : the evaluation sums of the pass's held-out rows (a row fold,
        :mod:`dsvm.solvers.held_out`: a ``GridCounts``, one per candidate, scored with the
        models the pass started from), or None when no rows are held out.
    """

    loss_sum: float = 0.0
    n_rows: int = 0
    weight_sum: float = 0.0
    probe_sums: np.ndarray | None = None
    probe_weight: float = 0.0
    probe_rows: int = 0
    compile_seconds: float = 0.0
    held_out: Any = None

    def __add__(self, other: PassStats) -> PassStats:
        if self.probe_sums is None or other.probe_sums is None:
            probe = self.probe_sums if other.probe_sums is None else other.probe_sums
        else:
            probe = self.probe_sums + other.probe_sums
        if self.held_out is None or other.held_out is None:
            held = self.held_out if other.held_out is None else other.held_out
        else:
            held = self.held_out + other.held_out
        return PassStats(
            self.loss_sum + other.loss_sum,
            self.n_rows + other.n_rows,
            self.weight_sum + other.weight_sum,
            probe,
            self.probe_weight + other.probe_weight,
            self.probe_rows + other.probe_rows,
            max(self.compile_seconds, other.compile_seconds),
            held,
        )


class ModelSelection(Protocol):
    """A solver's own choice among candidate models, measured during each epoch's pass.

    Before an epoch the training loop asks for the :meth:`candidates` (models whose loss the
    pass measures on a sample of its rows, see :func:`dsvm.solvers.passes.probe_losses`, and
    the index of the one the state predicts with now); after it, :meth:`update` records the
    verdict in ``new.selection`` from ``before.selection`` and the measured sums. The
    selection's state lives in ``SolverState.selection``, travels into checkpoints
    (``to_arrays``/``to_meta``, rebuilt by :meth:`decode`) and decides what
    ``SolverState.model`` returns (its ``model(state)``).
    """

    def candidates(self, state: SolverState) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                                      int]: ...

    def update(self, before: SolverState, shipped: SolverState, new: SolverState,
               stats: PassStats) -> None: ...

    def decode(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Any: ...


def selection_of(solver: Any) -> ModelSelection | None:
    """The solver's model selection, or None (most solvers have none)."""
    return getattr(solver, "selection", None)


class LocalSolver(Protocol):
    """The contract between the training loop and an algorithm.

    Implementations are small picklable dataclasses holding hyper-parameters only. Optional:
    ``selection`` (a :class:`ModelSelection`), ``penalty_of(coef)`` (the regulariser's value,
    for penalties other than L2) and ``predictor(state)`` (a model that is not linear in the
    input features: BSGD's kernel expansion).
    """

    name: str
    loss: str
    alpha: float

    def init_state(self, n_features: int, n_outputs: int, dtype: np.dtype) -> SolverState:
        """A fresh state (zero weights, t = 0) for data of ``dtype``."""
        ...

    def calibrate(self, state: SolverState, block: Block, codes: np.ndarray) -> SolverState:
        """Set data-dependent constants (e.g. SGD's eta0) from a small sample; Pegasos: no-op."""
        ...

    def run_block(
        self, state: SolverState, block: Block, codes: np.ndarray, order: np.ndarray
    ) -> PassStats:
        """One pass over ``block`` rows in ``order`` (int64 permutation), mutating ``state``."""
        ...


def n_outputs_for(n_classes: int) -> int:
    """Binary problems train one weight vector, K > 2 classes train K (one-vs-rest)."""
    return 1 if n_classes == 2 else n_classes


def encode_labels(y: np.ndarray, classes: np.ndarray, where: str) -> np.ndarray:
    """Map labels to int32 class indices 0..K-1 (``classes`` sorted).

    For one output (binary) the kernels read code 1 as +1 and code 0 as -1; for K outputs,
    output k sees +1 where code == k and -1 elsewhere (one-vs-rest).
    """
    codes = np.empty(y.shape[0], dtype=np.int32)
    bad = encode_classes(
        np.ascontiguousarray(y, dtype=np.float64), np.ascontiguousarray(classes, np.float64), codes
    )
    if bad >= 0:
        raise DataFormatError(
            f"{where}: row {bad} has label {float(y[bad])!r}, which is not one of the classes "
            f"{classes.tolist()} seen when the fit started."
        )
    return codes
