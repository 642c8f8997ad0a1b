"""The model an epoch starts from, measured while the epoch reads its rows.

Every epoch ships, with the state, the model the state predicts with (and, for a solver with a
model selection, its other candidates: averaged Pegasos' extrapolation); each stream adds
their losses on every s-th row of the chunks it reads (about ``PROBE_ROWS`` rows in all, the
same rows every epoch, see :func:`dsvm.solvers.extrapolation.probe_stride`), and the sums come
back with the pass statistics: no extra reading. With the exact regulariser this gives the
objective of the model returned after the previous epoch on a fixed sample of the training
rows (``history_[i]["sample_objective"]``), which the stopping rule and the check for a failed
fit use instead of the progressive loss (the loss of the iterates during the pass, which for
averaged solvers runs far above the averaged model's).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from dsvm.solvers.base import LocalSolver, PassStats, SolverState, selection_of
from dsvm.solvers.extrapolation import probe_stride


def _probe_array(parts: list[np.ndarray]) -> np.ndarray:
    # One candidate already in float64 (an average) is shipped as the same array object as the
    # state's own: pickled once, and never written (a task copies its state before the pass).
    if len(parts) == 1 and parts[0].dtype == np.float64 and parts[0].flags.c_contiguous:
        return parts[0]
    out = np.empty((sum(p.shape[0] for p in parts), *parts[0].shape[1:]), np.float64)
    at = 0
    for p in parts:  # filled in place: np.concatenate of asarray copies made a float64 copy more
        out[at:at + p.shape[0]] = p
        at += p.shape[0]
    return out


def ship_with_probes(state: SolverState, solver: LocalSolver,
                     n_samples: int) -> tuple[SolverState, int | None]:
    """(the state to send for an epoch, carrying its probe models; the index of the probe the
    state predicts with). None: nothing is probed (BSGD predicts with a kernel expansion; a
    solver with ``probed = False``, the candidate grid of :mod:`dsvm.solvers.grid`, whose
    stacked outputs are not one model)."""
    if getattr(solver, "predictor", None) is not None or not getattr(solver, "probed", True):
        return replace(state, selection=None), None
    selection = selection_of(solver)
    stacked = getattr(selection, "probe_arrays", None)
    stacked = None if stacked is None else stacked(state)  # built in place, no copies
    if stacked is not None:
        coef, intercept, returned = stacked
    else:
        models, returned = (selection.candidates(state) if selection is not None
                            else ([state.model()], 0))
        coef = _probe_array([m[0] for m in models])
        intercept = _probe_array([m[1] for m in models])
    shipped = replace(state, probe_coef=coef, probe_intercept=intercept,
                      probe_stride=probe_stride(n_samples), selection=None)
    return shipped, returned


def penalty_of(solver: Any, coef: np.ndarray) -> float:
    own = getattr(solver, "penalty_of", None)  # L1 / elastic net (solvers.penalties)
    if own is not None:
        return float(own(coef))
    flat = np.asarray(coef, dtype=np.float64).ravel()
    return float(0.5 * solver.alpha * np.dot(flat, flat))


def sampled_objective(shipped: SolverState, stats: PassStats, solver: LocalSolver,
                      index: int | None) -> float | None:
    """The objective of probe ``index`` (the model the epoch started from) on the sample."""
    if index is None or stats.probe_sums is None or stats.probe_weight <= 0 \
            or shipped.probe_coef is None:
        return None
    k = shipped.n_outputs
    coef = shipped.probe_coef[index * k:(index + 1) * k]
    return penalty_of(solver, coef) + float(stats.probe_sums[0, index]) / stats.probe_weight


def returned_kind(state: SolverState) -> str:
    """What the state predicts with: "average" (a running average of the iterates, or its
    extrapolation), "iterate" (the last iterate), or "pending" (an averaging solver before its
    average started: ASSET averages from rho N on)."""
    if state.avg_coef is None:
        return "iterate"
    return "average" if state.n_avg > 0 else "pending"
