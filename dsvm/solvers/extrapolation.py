"""Richardson extrapolation of a running average of iterates, switched on by measurement.

Why. With Pegasos' step 1/(lambda t) every iterate is (up to the projection) -1/(lambda t) times
the sum of all past subgradients, so the subgradients of the first epochs, taken far from the
optimum, stay in every later iterate with weight ~1/T: an error that decays like 1/T whatever
average of the iterates is taken (see :mod:`dsvm.solvers.pegasos`, "Averaging"). When that error
dominates, the average abar_T is close to w* + c / T, and the Richardson combination of two
averages taken at step counts t_r < t,

    w_ex = (t abar_t - t_r abar_r) / (t - t_r),

cancels the c / T term (Richardson & Romberg's extrapolation; applied to stochastic
approximation by Dieuleveut, Durmus & Bach 2020). When the error is noise instead (larger
lambda n, or data where the average has already converged), the combination amplifies the
noise of abar_r and is worse than abar_t. Which case holds is data-dependent (measured on a9a
and w8a in :mod:`dsvm.solvers.pegasos`), so dsvm measures it during training:

* **Reference average.** The client keeps snapshots of the average at step counts that double
  (the end of the first epoch, then whenever t has doubled since the last snapshot); the
  reference for step count t is the latest snapshot with t_r <= t / 2. At most three
  snapshots are kept (older ones can never be chosen again, since t only grows).
* **Probe.** Each epoch ships both candidates, abar_t and w_ex, with the state; every stream
  evaluates their loss on every s-th row of each chunk it reads (rows already in memory for
  the pass: no extra reading), and the sums come back with the pass statistics. The stride s
  is n_samples // PROBE_ROWS, clipped to [1, MAX_PROBE_STRIDE]: about PROBE_ROWS rows whatever
  the data's size, at most 1/MAX_PROBE_STRIDE of a large data set (the probe is memory-bound,
  like the pass). Adding the exact regulariser gives paired estimates of the training
  objective, and the spread of the per-row differences their standard error.
* **Choice.** The model returned after an epoch is w_ex if the previous epoch's probe found
  w_ex's objective lower than abar_t's by more than ``Z_SCORE`` standard errors, else abar_t.
  Without that margin the probe chose wrong on w8a with ~1,500 rows (stride 32): w_ex at
  +2.3-2.6% against the average's +1.35%. The choice lags one epoch (the candidates of the
  last epoch are never probed); it is made on the training objective, the quantity being
  minimised, never on test data.

Only the client holds snapshots; the workers see the two probe models and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from dsvm.solvers.base import PassStats, SolverState

# About PROBE_ROWS probe rows per epoch, one row in MAX_PROBE_STRIDE at least (see above).
PROBE_ROWS = 4096
MAX_PROBE_STRIDE = 64
# w_ex must beat abar_t by this many standard errors of the paired difference.
Z_SCORE = 2.0
# Snapshots kept: the reference, and the ones that may become the reference later.
MAX_SNAPSHOTS = 3


@dataclass
class Snapshot:
    """The running average (coef, intercept; float64) when the step counter was ``t``."""

    t: float
    coef: np.ndarray
    intercept: np.ndarray


@dataclass
class Extrapolation:
    """The client's bookkeeping: snapshots, and whether the extrapolated model won the probe."""

    snapshots: list[Snapshot] = field(default_factory=list)
    use: bool = False
    # The (2K, d) float64 array the probe models are built in, kept from epoch to epoch
    # (RichardsonSelection.probe_arrays): a fresh 64 MB array at 2^22 features cost 0.08-0.26
    # s an epoch in first-touch page faults (transparent huge pages compacted on demand).
    scratch: np.ndarray | None = field(default=None, repr=False, compare=False)

    def reference(self, t: float) -> Snapshot | None:
        """The latest snapshot taken at t_r <= t / 2 (with t_r > 0), or None."""
        chosen = None
        for snap in self.snapshots:
            if 0 < snap.t <= t / 2:
                chosen = snap
        return chosen

    def extrapolated(self, coef: np.ndarray, intercept: np.ndarray, t: float,
                     out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """w_ex for the average (coef, intercept) at step count t, or None (no reference);
        the coefficients written into ``out`` when given."""
        ref = self.reference(t)
        if ref is None:
            return None
        scale = 1.0 / (t - ref.t)
        # (t abar - t_r abar_r) / (t - t_r), a block of columns at a time: no O(d) temporary
        # (the model is 32 MB of float64 at 2^22 features, built every epoch).
        ex = np.empty(coef.shape, np.float64) if out is None else out
        step = 1 << 16
        for lo in range(0, coef.shape[-1], step):
            cols = slice(lo, lo + step)
            np.multiply(coef[..., cols], t * scale, out=ex[..., cols])
            ex[..., cols] -= ref.coef[..., cols] * (ref.t * scale)
        return ex, (t * np.asarray(intercept, np.float64) - ref.t * ref.intercept) * scale

    def model(self, state: SolverState) -> tuple[np.ndarray, np.ndarray] | None:
        """The extrapolation of ``state``'s average when the probe chose it, else None."""
        if not self.use or state.avg_coef is None or state.avg_intercept is None:
            return None
        return self.extrapolated(state.avg_coef, state.avg_intercept, state.t)

    def choose(self, difference: tuple[float, float] | None) -> None:
        """Record the probe's verdict from (objective of w_ex - objective of abar, its standard
        error); None (no probe this epoch) keeps the last verdict."""
        if difference is not None:
            self.use = bool(difference[0] < -Z_SCORE * difference[1])

    def record(self, coef: np.ndarray, intercept: np.ndarray, t: float) -> None:
        """Snapshot the average at step count t when t has doubled since the last snapshot."""
        if t <= 0 or (self.snapshots and t < 2 * self.snapshots[-1].t):
            return
        snap = Snapshot(float(t), np.array(coef, np.float64), np.array(intercept, np.float64))
        snap.coef.flags.writeable = False  # shared by copies (see copy)
        snap.intercept.flags.writeable = False
        self.snapshots.append(snap)
        ref = self.reference(t)
        keep = [s for s in self.snapshots if ref is None or s.t >= ref.t]
        self.snapshots = keep[-MAX_SNAPSHOTS:]

    # -- checkpoints (no pickle: arrays plus JSON scalars) ------------------------------------
    def to_arrays(self) -> dict[str, np.ndarray]:
        out = {}
        for i, s in enumerate(self.snapshots):
            out[f"snapshot.{i}.coef"] = s.coef
            out[f"snapshot.{i}.intercept"] = s.intercept
        return out

    def to_meta(self) -> dict[str, Any]:
        return {"snapshot_t": [float(s.t) for s in self.snapshots], "use": self.use}

    @classmethod
    def from_parts(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Extrapolation:
        snaps = [Snapshot(float(t), arrays[f"snapshot.{i}.coef"].astype(np.float64),
                          arrays[f"snapshot.{i}.intercept"].astype(np.float64))
                 for i, t in enumerate(meta["snapshot_t"])]
        return cls(snapshots=snaps, use=bool(meta["use"]))

    def copy(self) -> Extrapolation:
        """A copy that shares the snapshots' arrays: they are read-only once recorded, and
        copying them cost up to MAX_SNAPSHOTS O(d) copies an epoch (the training loop copies
        the selection with the state)."""
        return Extrapolation([Snapshot(s.t, s.coef, s.intercept) for s in self.snapshots],
                             self.use, self.scratch)


def probe_stride(n_samples: int) -> int:
    """Probe every s-th row: about PROBE_ROWS rows, at most 1/MAX_PROBE_STRIDE of them."""
    return int(min(MAX_PROBE_STRIDE, max(1, n_samples // PROBE_ROWS)))


def probe_difference(probe_coef: np.ndarray, alpha: float, sums: np.ndarray, weight: float,
                     rows: int) -> tuple[float, float] | None:
    """(objective of probe 1 - objective of probe 0, standard error) from the probe's sums.

    Objective = alpha/2 ||W_p||^2 (exact) + weighted mean loss on the probe rows; the error is
    the standard error of the weighted mean of the per-row loss differences."""
    if weight <= 0 or rows < 2:
        return None
    per_probe = probe_coef.reshape(sums.shape[1], -1)
    reg = 0.5 * alpha * np.einsum("pj,pj->p", per_probe, per_probe)
    mean_diff = (sums[0, 1] - sums[0, 0]) / weight
    variance = max(0.0, sums[1, 1] / weight - mean_diff ** 2) / rows
    return float(reg[1] - reg[0] + mean_diff), float(np.sqrt(variance))


@dataclass(frozen=True)
class RichardsonSelection:
    """Averaged Pegasos' model selection (:class:`dsvm.solvers.base.ModelSelection`): the
    average or its Richardson extrapolation, whichever the last probe measured lower."""

    alpha: float

    def candidates(self, state: SolverState) -> tuple[list[tuple[np.ndarray, np.ndarray]], int]:
        """The models the next epoch's probe measures, and which of them ``state`` predicts
        with: the average, and its extrapolation when a reference snapshot exists."""
        if state.avg_coef is None or state.avg_intercept is None:
            coef, intercept = state.model()
            return [(coef, intercept)], 0
        avg = (state.avg_coef, state.avg_intercept)
        ex = None if state.selection is None else state.selection.extrapolated(
            state.avg_coef, state.avg_intercept, state.t)
        if ex is None:
            return [avg], 0
        return [avg, ex], (1 if state.selection.use else 0)

    def probe_arrays(self, state: SolverState) -> tuple[np.ndarray, np.ndarray, int] | None:
        """:meth:`candidates` stacked as the probe's (P K, d) coefficients and (P K,)
        intercepts, built in the selection's scratch array; None when there is no
        extrapolation to stack (the caller then ships :meth:`candidates`)."""
        sel = state.selection
        if state.avg_coef is None or state.avg_intercept is None or sel is None \
                or sel.reference(state.t) is None:
            return None
        K, d = state.avg_coef.shape
        if sel.scratch is None or sel.scratch.shape != (2 * K, d):
            sel.scratch = np.empty((2 * K, d), np.float64)
        coef = sel.scratch
        coef[:K] = state.avg_coef
        ex = sel.extrapolated(state.avg_coef, state.avg_intercept, state.t, out=coef[K:])
        assert ex is not None
        intercept = np.concatenate([np.asarray(state.avg_intercept, np.float64), ex[1]])
        return coef, intercept, (1 if sel.use else 0)

    def update(self, before: SolverState, shipped: SolverState, new: SolverState,
               stats: PassStats) -> None:
        """The snapshots and verdict after an epoch that started from ``before`` (shipped as
        ``shipped``): the probe of the shipped candidates decides whether the new average is
        extrapolated; the new average may become a snapshot."""
        if new.avg_coef is None:
            new.selection = None
            return
        out = Extrapolation() if before.selection is None else before.selection.copy()
        if stats.probe_sums is not None and stats.probe_sums.shape[1] == 2:
            assert shipped.probe_coef is not None  # the probe's sums come from the shipped coef
            out.choose(probe_difference(shipped.probe_coef, self.alpha, stats.probe_sums,
                                        stats.probe_weight, stats.probe_rows))
        assert new.avg_intercept is not None
        out.record(new.avg_coef, new.avg_intercept, new.t)
        new.selection = out

    def decode(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Extrapolation:
        return Extrapolation.from_parts(meta, arrays)
