"""The combine protocol: how the results of parallel streams become one state.

It follows dask's reductions: ``chunk`` turns one stream's result into a partial, ``combine``
merges any number of partials (associative and order-independent up to rounding, so it can sit
anywhere in a tree reduction), ``finalize`` turns the last partial into the next state. A stream
that saw no rows yields ``None``, which ``combine`` ignores. At the root of a tree the
partials go to :func:`aggregate`, which is ``finalize(combine(partials))`` unless the combiner
has an ``aggregate`` of its own that makes the next state from them directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from dsvm.solvers.base import PassStats, SolverState


class Combiner(Protocol):
    name: str

    def chunk(self, state: SolverState, stats: PassStats) -> Any | None: ...

    def combine(self, partials: Sequence[Any | None]) -> Any | None: ...

    def finalize(
        self, partial: Any | None, previous: SolverState
    ) -> tuple[SolverState, PassStats]: ...


def aggregate(combiner: Combiner, partials: Sequence[Any | None], previous: SolverState
              ) -> tuple[SolverState, PassStats]:
    """The next state from the last partials of a combine tree: ``finalize(combine(...))``,
    or the combiner's own ``aggregate``, which may do both in one pass (parameter averaging:
    :meth:`dsvm.combine.averaging.ParameterAveraging.aggregate`)."""
    own = getattr(combiner, "aggregate", None)
    if own is not None:
        return own(partials, previous)  # type: ignore[no-any-return]
    return combiner.finalize(combiner.combine(partials), previous)
