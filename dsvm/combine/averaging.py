"""Weighted parameter averaging of parallel SGD-type streams.

Each stream starts an epoch from the same broadcast state and makes its own pass over its chunks;
the next state is the average of the streams' states weighted by the rows each visited
(Zinkevich et al.'s parallel SGD, applied once per epoch). Every array of the state is averaged
this way: the iterate ``coef``/``intercept``, the Polyak-Ruppert averages and the solver's extra
arrays, so that the combined running average is the average of the streams' running averages,
each of which already covers the iterates its stream produced. The step counter ``t`` is averaged
too: each stream advanced by about (its rows / batch size) steps from the same start, and after
the average the schedule goes on from the mean of those counters.

Sums are kept in float64 whatever the data's dtype, and cast back in ``finalize``, so that the
result does not depend on how the tree groups the streams beyond float64 rounding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from dsvm.solvers.base import PassStats, SolverState


@dataclass
class AveragePartial:
    """Row-weighted sums of the streams' states, and their summed pass statistics."""

    weight: float
    sums: dict[str, np.ndarray]
    scalars: dict[str, float]
    stats: PassStats = field(default_factory=PassStats)


_ARRAYS = ("coef", "intercept", "avg_coef", "avg_intercept")
_SCALARS = ("t", "n_avg")


class ParameterAveraging:
    """Combine streams by averaging their states weighted by rows visited."""

    name = "average"

    def chunk(self, state: SolverState, stats: PassStats) -> AveragePartial | None:
        if stats.n_rows == 0:
            return None
        w = float(stats.n_rows)
        sums = {
            k: np.asarray(getattr(state, k), dtype=np.float64) * w
            for k in _ARRAYS
            if getattr(state, k) is not None
        }
        sums.update({"extra." + k: v.astype(np.float64) * w for k, v in state.extra.items()})
        scalars = {k: float(getattr(state, k)) * w for k in _SCALARS}
        scalars["eta0"] = float(state.eta0)  # the same in every stream: carried, not averaged
        return AveragePartial(weight=w, sums=sums, scalars=scalars, stats=stats)

    def combine(self, partials: Sequence[AveragePartial | None]) -> AveragePartial | None:
        present = [p for p in partials if p is not None]
        if not present:
            return None
        first = present[0]
        sums = {k: v.copy() for k, v in first.sums.items()}
        scalars = dict(first.scalars)
        stats = first.stats
        weight = first.weight
        for p in present[1:]:
            for k, v in p.sums.items():
                sums[k] += v
            for k in _SCALARS:
                scalars[k] += p.scalars[k]
            stats = stats + p.stats
            weight += p.weight
        return AveragePartial(weight=weight, sums=sums, scalars=scalars, stats=stats)

    def finalize(
        self, partial: AveragePartial | None, previous: SolverState
    ) -> tuple[SolverState, PassStats]:
        if partial is None:  # no stream saw a row: nothing changes
            return previous.copy(), PassStats()
        dtype = previous.coef.dtype
        w = partial.weight

        def mean(key: str, like: np.ndarray | None) -> np.ndarray | None:
            if key not in partial.sums:
                return None
            out_dtype = dtype if like is None else like.dtype
            return (partial.sums[key] / w).astype(out_dtype)

        state = SolverState(
            coef=mean("coef", previous.coef),
            intercept=mean("intercept", previous.intercept),
            t=partial.scalars["t"] / w,
            avg_coef=mean("avg_coef", previous.avg_coef),
            avg_intercept=mean("avg_intercept", previous.avg_intercept),
            n_avg=partial.scalars["n_avg"] / w,
            eta0=partial.scalars["eta0"],
            extra={
                k[len("extra."):]: mean(k, previous.extra.get(k[len("extra."):]))
                for k in partial.sums
                if k.startswith("extra.")
            },
        )
        return state, partial.stats


COMBINERS = {"average": ParameterAveraging}


def make_combiner(name: str) -> ParameterAveraging:
    try:
        return COMBINERS[name]()
    except KeyError:
        raise ValueError(f"Unknown combine {name!r}; expected one of {sorted(COMBINERS)}.") from None
