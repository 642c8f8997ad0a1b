"""Combining parallel SGD-type streams: iterates averaged, step counts and running averages pooled.

Each stream starts an epoch from the same broadcast state s_0 = (w_0, t_0, abar_0, n_0) and makes
its own pass over its chunks, ending at (w_j, t_j, abar_j, n_j). The next state is:

* **iterate** w = sum_j r_j w_j / sum_j r_j, weighted by the rows r_j each stream visited
  (parameter averaging, Zinkevich et al.'s parallel SGD applied once per epoch); the same for
  the intercept and for solver-specific ``extra`` arrays.
* **step counter** t = t_0 + sum_j (t_j - t_0): every stream's steps count, as if one stream had
  taken them all. Averaging the counters instead would let t grow by only n/S per epoch with S
  streams, keeping the steps 1/(lambda t) S times larger; measured on a9a (lambda = 1/n, 20
  epochs, Pegasos), that leaves the objective at +8.8% (S = 2) and +25% (S = 4) above the
  optimum against +3.0% for one stream, while the pooled counter gives +3.0% for S = 1, 2, 4.
* **running average** of the iterates (Polyak-Ruppert / weighted averages, with total weight
  n = sum of the averaging weights): the union of all streams' averaged iterates,

      n    = n_0 + sum_j (n_j - n_0)
      abar = (n_0 abar_0 + sum_j (n_j abar_j - n_0 abar_0)) / n

  since stream j's average is (n_0 abar_0 + its own weighted iterates) / n_j.

* **L1 / elastic net** (``intersect_support=True``): a stream's last iterate is a prox output
  with exact zeros, but the average of S streams is zero only where every stream is (the union
  of their supports: a9a at alpha = 64/n, 20 epochs, had 24.4% zeros on 2 workers against
  30.9% in one stream). The combined coefficient is kept only where it is non-zero in every
  stream and set to exactly 0 elsewhere: the intersection of the supports, Bolasso's rule
  (Bach, ICML 2008: the streams' disjoint row sets play the bootstrap replicates; a feature
  that one stream's prox steps put at 0 has no support in its rows). The cluster model then has
  at least as many zeros as any of its streams; with one stream nothing changes.

The combine is associative: partials carry sums (and a stream count) that add, and the
subtraction of the shared start happens once, in ``finalize``. Sums are float64 whatever the
data's dtype, so grouping in the tree changes the result only by float64 rounding.

The model-sized arithmetic of lone streams' partials (every stream's, in the usual case of
one stream per worker) runs in :func:`dsvm.kernels.combine.weighted_mean`, one pass per output
array with no float64 temporaries; at the root :meth:`ParameterAveraging.aggregate` goes from
the streams' states to the next state in that one pass. Both give the values of the NumPy
expressions, bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dsvm.kernels.combine import weighted_mean
from dsvm.solvers.base import PassStats, SolverState


@dataclass
class AveragePartial:
    """Sums over streams: row-weighted iterates, n-weighted averages, raw counters."""

    rows: float
    n_streams: int
    iterate: dict[str, np.ndarray]  # sum_j r_j * array_j
    average: dict[str, np.ndarray]  # sum_j n_j * abar_j
    t_sum: float
    n_avg_sum: float
    eta0: float
    stats: PassStats = field(default_factory=PassStats)
    # A lone stream's partial keeps its state instead of the sums (made only when a second
    # partial joins, :meth:`ParameterAveraging.combine`): with one stream the next state is
    # that state itself, and the sums would cost five O(d) float64 sweeps and copies an epoch
    # (0.1 s of a 0.5 s epoch at 2^22 features, averaged).
    single: SolverState | None = None

    def __sizeof__(self) -> int:
        if self.single is not None:
            return 128 + self.single.nbytes
        return 128 + sum(a.nbytes for d in (self.iterate, self.average) for a in d.values())


_ITERATE = ("coef", "intercept")
_AVERAGE = ("avg_coef", "avg_intercept")


class ParameterAveraging:
    """Combine streams: average the iterates, pool the steps and the running averages."""

    name = "average"
    intersect_support = False  # (class default: instances pickled before it existed)

    def __init__(self, intersect_support: bool = False) -> None:
        self.intersect_support = bool(intersect_support)

    def chunk(self, state: SolverState, stats: PassStats) -> AveragePartial | None:
        if stats.n_rows == 0:
            return None
        return AveragePartial(
            rows=float(stats.n_rows), n_streams=1, iterate={}, average={},
            t_sum=float(state.t), n_avg_sum=float(state.n_avg), eta0=float(state.eta0),
            # the probe models came with the epoch's state and are not part of the result:
            # left behind, so that a partial that crosses the network carries the model only
            stats=stats, single=replace(state, probe_coef=None, probe_intercept=None),
        )

    def _sums(self, p: AveragePartial) -> AveragePartial:
        """``p`` with its sums made (a lone stream's partial holds only its state)."""
        state = p.single
        if state is None:
            return p
        r = p.rows
        # (one float64 array each: converting first and multiplying after made two)
        iterate = {k: np.multiply(getattr(state, k), r, dtype=np.float64) for k in _ITERATE}
        iterate.update({"extra." + k: np.multiply(v, r, dtype=np.float64)
                        for k, v in state.extra.items()})
        if self.intersect_support:  # how many streams have each coefficient non-zero
            iterate["support"] = (np.asarray(state.coef) != 0).astype(np.float64)
        average = {
            k: np.asarray(getattr(state, k), dtype=np.float64) * state.n_avg
            for k in _AVERAGE
            if getattr(state, k) is not None
        }
        return AveragePartial(
            rows=r, n_streams=1, iterate=iterate, average=average, t_sum=p.t_sum,
            n_avg_sum=p.n_avg_sum, eta0=p.eta0, stats=p.stats,
        )

    def combine(self, partials: Sequence[AveragePartial | None]) -> AveragePartial | None:
        present = [p for p in partials if p is not None]
        if not present:
            return None
        if len(present) == 1:
            return present[0]
        if self._lone_streams(present):
            return self._pooled_sums(present)
        # the first partial's sums are added into: copied, unless _sums just made them (a
        # partial that was already sums may be another task's result, held by dask)
        fresh = present[0].single is not None
        present = [self._sums(p) for p in present]
        first = present[0]
        out = AveragePartial(
            rows=first.rows, n_streams=first.n_streams,
            iterate={k: v if fresh else v.copy() for k, v in first.iterate.items()},
            average={k: v if fresh else v.copy() for k, v in first.average.items()},
            t_sum=first.t_sum, n_avg_sum=first.n_avg_sum, eta0=first.eta0, stats=first.stats,
        )
        for p in present[1:]:
            for k, v in p.iterate.items():
                out.iterate[k] += v
            for k, v in p.average.items():
                out.average[k] += v
            out.rows += p.rows
            out.n_streams += p.n_streams
            out.t_sum += p.t_sum
            out.n_avg_sum += p.n_avg_sum
            out.stats = out.stats + p.stats
        return out

    def _lone_streams(self, present: Sequence[AveragePartial]) -> bool:
        """Whether these partials are all lone streams' states, the case that
        :func:`~dsvm.kernels.combine.weighted_mean` combines in one pass (not with
        ``intersect_support``, whose support counts take the general path)."""
        return (len(present) >= 2 and not self.intersect_support
                and all(p.single is not None for p in present))

    def _pooled_sums(self, present: Sequence[AveragePartial]) -> AveragePartial:
        """The sums partial of lone streams' partials, each sum made in one pass: the values
        of :meth:`_sums` and the adds of :meth:`combine`."""
        states = [p.single for p in present if p.single is not None]
        rows = np.array([p.rows for p in present])
        n_avgs = np.array([s.n_avg for s in states])
        iterate = {k: _pooled([getattr(s, k) for s in states], rows, 1.0, np.float64)
                   for k in _ITERATE}
        iterate.update({"extra." + k: _pooled([s.extra[k] for s in states], rows, 1.0,
                                              np.float64) for k in states[0].extra})
        average = {k: _pooled([getattr(s, k) for s in states], n_avgs, 1.0, np.float64)
                   for k in _AVERAGE if getattr(states[0], k) is not None}
        counts = _counts(present)
        return AveragePartial(rows=counts.rows, n_streams=len(present), iterate=iterate,
                              average=average, t_sum=counts.t_sum, n_avg_sum=counts.n_avg_sum,
                              eta0=present[0].eta0, stats=counts.stats)

    def aggregate(self, partials: Sequence[AveragePartial | None], previous: SolverState
                  ) -> tuple[SolverState, PassStats]:
        """``finalize(combine(partials), previous)``: at the root of an epoch's combine, where
        the next state is made. Lone streams' states go to the next state in one pass per
        array (:func:`~dsvm.kernels.combine.weighted_mean`), with the same values: at 2^22
        features no float64 sums are made, neither their time nor their memory."""
        present = [p for p in partials if p is not None]
        if not self._lone_streams(present):
            return self.finalize(self.combine(partials), previous)
        states = [p.single for p in present if p.single is not None]
        counts = _counts(present)
        s = len(present)
        rows = np.array([p.rows for p in present])

        def iterate(arrays: list[np.ndarray], like: np.ndarray) -> np.ndarray:
            return _pooled(arrays, rows, counts.rows, like.dtype)

        n_avg = previous.n_avg + counts.n_avg_sum - s * previous.n_avg
        n_avgs = np.array([st.n_avg for st in states])
        averages: dict[str, np.ndarray | None] = {k: None for k in _AVERAGE}
        for k in _AVERAGE:
            arrays = [getattr(st, k) for st in states]
            if arrays[0] is None:
                continue
            if n_avg > 0:
                averages[k] = _pooled(arrays, n_avgs, n_avg, np.float64,
                                      start=getattr(previous, k),
                                      start_weight=previous.n_avg, start_copies=s - 1)
            else:
                averages[k] = np.zeros(arrays[0].shape)
        state = SolverState(
            coef=iterate([st.coef for st in states], previous.coef),
            intercept=iterate([st.intercept for st in states], previous.intercept),
            t=previous.t + counts.t_sum - s * previous.t,
            avg_coef=averages["avg_coef"], avg_intercept=averages["avg_intercept"],
            n_avg=n_avg, eta0=present[0].eta0,
            extra={k: iterate([st.extra[k] for st in states], previous.extra[k])
                   for k in states[0].extra},
        )
        return state, counts.stats

    def finalize(
        self, partial: AveragePartial | None, previous: SolverState
    ) -> tuple[SolverState, PassStats]:
        if partial is None:  # no stream saw a row: nothing changes
            return previous.copy(), PassStats()
        if partial.single is not None:  # one stream: its state is the combined one
            one = partial.single
            return SolverState(
                coef=one.coef, intercept=one.intercept, t=one.t, avg_coef=one.avg_coef,
                avg_intercept=one.avg_intercept, n_avg=one.n_avg, eta0=partial.eta0,
                extra=dict(one.extra),
            ), partial.stats
        s = partial.n_streams

        def iterate(key: str, like: np.ndarray) -> np.ndarray:
            # divided in float64, rounded into the data's dtype on the way out: the same
            # values as dividing and then casting, without a float64 temporary
            out = np.empty(partial.iterate[key].shape, like.dtype)
            return np.divide(partial.iterate[key], partial.rows, out=out, casting="unsafe")

        n_avg = previous.n_avg + partial.n_avg_sum - s * previous.n_avg
        averages: dict[str, np.ndarray | None] = {k: None for k in _AVERAGE}
        for k in _AVERAGE:
            if k in partial.average and n_avg > 0:
                start = getattr(previous, k)
                if start is None:
                    averages[k] = (partial.average[k] - 0.0) / n_avg
                    continue
                # (sum - (s - 1) n_0 abar_0) / n, in one array: each step in place, in the
                # order of the plain expression, so the same values (the partial's own sums
                # are left alone: they may be held elsewhere)
                shared = previous.n_avg * np.asarray(start, np.float64)
                shared *= s - 1
                np.subtract(partial.average[k], shared, out=shared)
                shared /= n_avg
                averages[k] = shared
            elif k in partial.average:
                averages[k] = np.zeros_like(partial.average[k])
        state = SolverState(
            coef=iterate("coef", previous.coef),
            intercept=iterate("intercept", previous.intercept),
            t=previous.t + partial.t_sum - s * previous.t,
            avg_coef=averages["avg_coef"],
            avg_intercept=averages["avg_intercept"],
            n_avg=n_avg,
            eta0=partial.eta0,
            extra={
                k[len("extra."):]: iterate(k, previous.extra[k[len("extra."):]])
                for k in partial.iterate
                if k.startswith("extra.")
            },
        )
        if self.intersect_support and "support" in partial.iterate:
            state.coef[partial.iterate["support"] < s] = 0
        return state, partial.stats


@dataclass(frozen=True)
class _Counts:
    rows: float
    t_sum: float
    n_avg_sum: float
    stats: PassStats


def _counts(present: Sequence[AveragePartial]) -> _Counts:
    """The partials' rows, step and averaging-weight sums and statistics, added up in the
    order :meth:`ParameterAveraging.combine` adds them."""
    first = present[0]
    rows, t_sum, n_avg_sum, stats = first.rows, first.t_sum, first.n_avg_sum, first.stats
    for p in present[1:]:
        rows += p.rows
        t_sum += p.t_sum
        n_avg_sum += p.n_avg_sum
        stats = stats + p.stats
    return _Counts(rows, t_sum, n_avg_sum, stats)


def _pooled(arrays: list[np.ndarray], weights: np.ndarray, total: float, dtype: type | np.dtype,
            *, start: np.ndarray | None = None, start_weight: float = 0.0,
            start_copies: float = 0.0) -> np.ndarray:
    """(sum_j weights[j] arrays[j] - start_copies start_weight start) / total, as a new array
    of ``dtype`` shaped like the arrays (see :func:`~dsvm.kernels.combine.weighted_mean`)."""
    shape = arrays[0].shape
    out = np.empty(shape, dtype)
    flat = tuple(np.ascontiguousarray(a).reshape(-1) for a in arrays)
    first = np.empty(0) if start is None else np.ascontiguousarray(start).reshape(-1)
    weighted_mean(flat, np.asarray(weights, np.float64), first, float(start_weight),
                  float(start_copies), float(total), out.reshape(-1))
    return out


COMBINERS = {"average": ParameterAveraging}


def make_combiner(name: str) -> ParameterAveraging:
    try:
        return COMBINERS[name]()
    except KeyError:
        raise ValueError(
            f"Unknown combine {name!r}; expected one of {sorted(COMBINERS)}.") from None
