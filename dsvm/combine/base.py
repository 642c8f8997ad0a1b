"""The combine protocol: how the results of parallel streams become one state.

It follows dask's reductions: ``chunk`` turns one stream's result into a partial, ``combine``
merges any number of partials (associative and order-independent up to rounding, so it can sit
anywhere in a tree reduction), ``finalize`` turns the last partial into the next state. A stream
that saw no rows yields ``None``, which ``combine`` ignores.
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
