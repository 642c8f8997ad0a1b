"""Combining budgeted-SGD streams: the union of their support vectors, merged back to budget.

No paper covers this step; it is dsvm's design. Each of the K streams starts an epoch from the
same broadcast model f_0 and returns its own budgeted model f_j = sum_i a_ji k(s_ji, .). The
combined model is their average (1/K) sum_j f_j -- parameter averaging, exactly as for the linear
solvers, here expressed on the kernel expansion: the union of all streams' support vectors with
every coefficient scaled by 1/K. Support vectors the streams inherited from f_0 and did not
move appear up to K times, bit for bit: these copies are first collapsed into one vector with the
sum of their coefficients (exact, no weight degradation). Algorithm 1 alone would not do this
reliably: it always starts from the smallest |alpha|, which is often a vector only one stream
holds, so it would merge distinct vectors while copies remain. What is left, up to K B vectors,
is brought back to the budget B by repeating the same merge as inside the solver (papers/001
Algorithm 1, with the fit's merge method) until B remain.

The partials carry the per-stream vectors unscaled plus a stream count, so ``combine`` is a
plain concatenation (associative and order-independent); scaling and merging happen once, in
``finalize``. Step counters are pooled as in :mod:`dsvm.combine.averaging` (every stream's
steps count) and so are the merge statistics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dsvm.kernels import bsgd as kb
from dsvm.solvers.base import PassStats, SolverState
from dsvm.solvers.bsgd_tables import merge_tables


@dataclass
class SVPartial:
    sv: list[list[np.ndarray]]  # per output, the streams' (n_j, d) support vectors
    alpha: list[list[np.ndarray]]  # per output, their coefficients
    n_streams: int
    t_sum: float
    merge_stats: np.ndarray
    merge_seconds: float
    stats: PassStats = field(default_factory=PassStats)

    def __sizeof__(self) -> int:
        return 128 + sum(a.nbytes for per in (*self.sv, *self.alpha) for a in per)


class SVUnionMerge:
    """Average the streams' kernel expansions, then merge the union down to ``budget``."""

    name = "sv_merge"

    def __init__(self, budget: int, gamma: float, merge: str) -> None:
        self.budget = int(budget)
        self.gamma = float(gamma)
        self.merge = merge

    def chunk(self, state: SolverState, stats: PassStats) -> SVPartial | None:
        if stats.n_rows == 0:
            return None
        ex = state.extra
        n_sv = ex["n_sv"]
        return SVPartial(
            sv=[[ex["sv"][k, : n_sv[k]].copy()] for k in range(len(n_sv))],
            alpha=[[ex["alpha"][k, : n_sv[k]].copy()] for k in range(len(n_sv))],
            n_streams=1, t_sum=float(state.t), merge_stats=ex["merge_stats"].copy(),
            merge_seconds=float(ex["merge_seconds"][0]), stats=stats,
        )

    def combine(self, partials: Sequence[SVPartial | None]) -> SVPartial | None:
        present = [p for p in partials if p is not None]
        if not present:
            return None
        n_out = len(present[0].sv)
        return SVPartial(
            sv=[[a for p in present for a in p.sv[k]] for k in range(n_out)],
            alpha=[[a for p in present for a in p.alpha[k]] for k in range(n_out)],
            n_streams=sum(p.n_streams for p in present),
            t_sum=sum(p.t_sum for p in present),
            merge_stats=np.sum([p.merge_stats for p in present], axis=0),
            merge_seconds=sum(p.merge_seconds for p in present),
            stats=sum((p.stats for p in present[1:]), present[0].stats),
        )

    def finalize(
        self, partial: SVPartial | None, previous: SolverState
    ) -> tuple[SolverState, PassStats]:
        if partial is None:
            return previous.copy(), PassStats()
        s = partial.n_streams
        state = previous.copy()
        ex = state.extra
        H, WD = merge_tables()
        code = kb.MERGE_CODES[self.merge]
        ex["sv"][:] = 0.0
        ex["alpha"][:] = 0.0
        for k in range(len(partial.sv)):
            sv = np.concatenate(partial.sv[k]) if partial.sv[k] else ex["sv"][k, :0]
            sv, alpha = collapse_duplicates(sv, np.concatenate(partial.alpha[k]) / s)
            n = self.merge_down(sv, alpha, code, H, WD)
            ex["sv"][k, :n] = sv[:n]
            ex["alpha"][k, :n] = alpha[:n]
            ex["n_sv"][k] = n
        prev = previous.extra
        ex["merge_stats"] = prev["merge_stats"] + partial.merge_stats - s * prev["merge_stats"]
        ex["merge_seconds"] = prev["merge_seconds"] + partial.merge_seconds \
            - s * prev["merge_seconds"]
        state.t = previous.t + partial.t_sum - s * previous.t
        return state, partial.stats

    def merge_down(self, sv: np.ndarray, alpha: np.ndarray, code: int, H: np.ndarray,
                   WD: np.ndarray) -> int:
        """Merge (in place) until at most ``budget`` vectors remain; returns their number."""
        n = sv.shape[0]
        scratch = np.zeros(kb.N_STATS)
        while n > self.budget:
            n = kb.merge_once(sv, alpha, n, self.gamma, code, False, H, WD, scratch)
        return n


def collapse_duplicates(sv: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bit-identical rows of ``sv`` become one row carrying the sum of their coefficients.

    The first occurrence's position is kept, so the result does not depend on how the union
    was grouped.
    """
    if sv.shape[0] < 2:
        return np.ascontiguousarray(sv), alpha
    _, first, inverse = np.unique(sv, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    summed = np.bincount(inverse, weights=alpha, minlength=first.size)
    keep = np.argsort(first, kind="stable")  # unique rows in order of first appearance
    return np.ascontiguousarray(sv[first[keep]]), summed[keep]
