"""Budgeted SGD for the Gaussian-kernel SVM (papers/001): the local solver.

The state keeps, per output (one-vs-rest), at most ``budget`` support vectors and their
coefficients in ``state.extra`` ("sv" (K, B+1, d), "alpha" (K, B+1), "n_sv" (K,)), plus merge
statistics ("merge_stats" (K, 3): merges, merges compared with lookup-WD, equal decisions) and
the seconds spent merging ("merge_seconds" (1,)). ``state.coef`` is empty: the model is the
kernel expansion, published by the estimator as a :class:`dsvm.features.KernelExpansion` map
with the coefficients as linear weights.

The pass kernel stops whenever a model exceeds its budget; this loop times the merge call
(:func:`dsvm.kernels.bsgd.merge_once`) with ``perf_counter`` and resumes the pass, so merge
times are measured the same way for every method.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dsvm.data.block_ops import kernel_rows
from dsvm.data.blocks import Block
from dsvm.features.maps import KernelExpansion
from dsvm.kernels import bsgd as kb
from dsvm.solvers.base import PassStats, SolverState
from dsvm.solvers.bsgd_tables import merge_tables

MERGE_METHODS = tuple(kb.MERGE_CODES)


@dataclass
class BSGDSolver:
    """Pegasos steps on a budgeted Gaussian-kernel expansion, budget kept by merging.

    ``fit_intercept``, ``batch_size`` and ``average`` are accepted for the common solver
    signature and ignored: BSGD has no bias, takes one row per step and returns its last
    iterate (as in papers/001). ``compare_merges`` also ranks every merge's partners by
    lookup-WD and counts equal decisions (Table 3 of the paper); it costs one extra lookup per
    candidate.
    """

    loss: str = "hinge"
    alpha: float = 1e-4
    fit_intercept: bool = False
    batch_size: int = 1
    average: bool = False
    gamma: float = 1.0
    budget: int = 500
    merge: str = "lookup-wd"
    compare_merges: bool = False
    name: ClassVar[str] = "bsgd"

    def __post_init__(self) -> None:
        if self.loss != "hinge":
            raise ValueError(f"solver='bsgd' trains the hinge loss only; got loss={self.loss!r}.")
        if self.merge not in kb.MERGE_CODES:
            raise ValueError(f"Got merge={self.merge!r}; expected one of {sorted(kb.MERGE_CODES)}.")

    def init_state(self, n_features: int, n_outputs: int, dtype: np.dtype) -> SolverState:
        B = int(self.budget)
        return SolverState(
            coef=np.zeros((n_outputs, 0), dtype=np.float64),
            intercept=np.zeros(n_outputs, dtype=np.float64),
            extra={
                "sv": np.zeros((n_outputs, B + 1, n_features), dtype=np.float64),
                "alpha": np.zeros((n_outputs, B + 1), dtype=np.float64),
                "n_sv": np.zeros(n_outputs, dtype=np.int64),
                "merge_stats": np.zeros((n_outputs, kb.N_STATS), dtype=np.float64),
                "merge_seconds": np.zeros(1, dtype=np.float64),
            },
        )

    def calibrate(self, state: SolverState, block: Block, codes: np.ndarray) -> SolverState:
        return state

    def predictor(self, state: SolverState) -> tuple[np.ndarray, np.ndarray, KernelExpansion]:
        """The state as (coef, intercept, map): all outputs' support vectors stacked as the
        map's landmarks, each output's coefficients in its own columns (zeros elsewhere)."""
        ex = state.extra
        n_sv = ex["n_sv"].astype(np.int64)
        n_out, total = len(n_sv), int(n_sv.sum())
        coef = np.zeros((n_out, total), dtype=np.float64)
        svs = []
        start = 0
        for k in range(n_out):
            coef[k, start: start + n_sv[k]] = ex["alpha"][k, : n_sv[k]]
            svs.append(ex["sv"][k, : n_sv[k]])
            start += int(n_sv[k])
        d = ex["sv"].shape[2]
        landmarks = np.concatenate(svs) if total else np.zeros((0, d))
        return coef, np.zeros(n_out, dtype=np.float64), KernelExpansion(landmarks, self.gamma)

    def run_block(
        self, state: SolverState, block: Block, codes: np.ndarray, order: np.ndarray
    ) -> PassStats:
        if block.sample_weight is not None:
            raise ValueError("solver='bsgd' does not support sample weights.")
        ex = state.extra
        sv, alpha, n_sv, stats = ex["sv"], ex["alpha"], ex["n_sv"], ex["merge_stats"]
        H, WD = merge_tables()
        code = kb.MERGE_CODES[self.merge]
        cursor = np.zeros(2, dtype=np.int64)
        acc = np.array([state.t, 0.0])
        hp = np.array([float(self.alpha), float(self.gamma)])
        codes = np.ascontiguousarray(codes, dtype=np.int32)
        merge_seconds = 0.0
        args = (kernel_rows(block), codes, order, sv, alpha, n_sv, cursor, acc, hp)
        # the pass returns at each merge and is called again from its cursor
        k = kb.bsgd_pass(*args)
        while k >= 0:
            tic = time.perf_counter()
            n_sv[k] = kb.merge_once(sv[k], alpha[k], int(n_sv[k]), float(self.gamma), code,
                                    self.compare_merges, H, WD, stats[k])
            merge_seconds += time.perf_counter() - tic
            k = kb.bsgd_pass(*args)
        ex["merge_seconds"][0] += merge_seconds
        state.t = float(acc[0])
        if not np.isfinite(acc[1]) or not np.all(np.isfinite(alpha)):
            raise FloatingPointError(
                f"bsgd diverged (non-finite coefficients) at step t={state.t:.0f}; "
                "raise alpha or scale the features."
            )
        n = block.n_samples
        return PassStats(loss_sum=float(acc[1]), n_rows=n, weight_sum=float(n))
