"""CoCoA+'s combine: the streams' changes of w are added (gamma = 1, "adding", not averaging).

Each stream returns the change ``dw`` its dual steps made (w = sum_i alpha_i y_i x_i moves by
exactly that) and its rows' duality-gap terms; partials add up (associative and order-free up
to float64 rounding, so they can sit anywhere in a tree reduction) and the round's new model is
``w + sum_k dw_k``. A grid of alphas (:mod:`dsvm.solvers.cocoa_grid`) adds its stacked
changes the same way, element-wise, and its held-out sums (``held_out``) ride along.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class AddPartial:
    """Summed stream results: dW (K, d), db (K,), the gap terms (see
    :func:`dsvm.solvers.cocoa.gap_terms`; a grid's: one row of 4 per candidate), rows visited
    and dual steps that changed a dual; a grid's held-out sums (``GridCounts``, or None)."""

    dW: np.ndarray
    db: np.ndarray
    terms: np.ndarray
    n_rows: int = 0
    n_changed: int = 0
    compile_seconds: float = 0.0
    held_out: Any = None

    def __sizeof__(self) -> int:
        return 64 + int(self.dW.nbytes + self.db.nbytes + self.terms.nbytes)


def add_partials(partials: Sequence[AddPartial | None]) -> AddPartial | None:
    """The sum of the partials (None: a stream that saw no rows)."""
    parts = [p for p in partials if p is not None]
    if not parts:
        return None
    out = AddPartial(parts[0].dW.copy(), parts[0].db.copy(), parts[0].terms.copy(),
                     parts[0].n_rows, parts[0].n_changed, parts[0].compile_seconds,
                     parts[0].held_out)
    for p in parts[1:]:
        out.dW += p.dW
        out.db += p.db
        out.terms += p.terms
        out.n_rows += p.n_rows
        out.n_changed += p.n_changed
        out.compile_seconds = max(out.compile_seconds, p.compile_seconds)
        if p.held_out is not None:  # (GridCounts add up; a new object, never in place)
            out.held_out = p.held_out if out.held_out is None else out.held_out + p.held_out
    return out


def added(coef: np.ndarray, intercept: np.ndarray,
          partial: AddPartial | None) -> tuple[np.ndarray, np.ndarray]:
    """w + sum_k dw_k (and the bias feature's weight alike)."""
    if partial is None:
        return coef.copy(), intercept.copy()
    return coef + partial.dW, intercept + partial.db
