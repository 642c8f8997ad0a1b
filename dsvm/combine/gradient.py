"""Exact gradient reduction for full-gradient solvers (NESVM): shares of row sums are added.

Every share is a sum over some rows (float64), so adding them in any grouping gives the full
sums up to float64 rounding: the combine is associative and can sit anywhere in a tree.
``None`` stands for a task that had no rows and is skipped.
"""

from __future__ import annotations

from collections.abc import Sequence

from dsvm.solvers.nesvm import GradientShare


def add_shares(shares: Sequence[GradientShare | None]) -> GradientShare | None:
    """The sum of the non-None shares (None when all are None)."""
    total: GradientShare | None = None
    for share in shares:
        if share is None:
            continue
        total = share if total is None else total + share
    return total
