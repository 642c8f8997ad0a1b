"""Combining the results of parallel streams (pure NumPy, no dask)."""

from dsvm.combine.averaging import COMBINERS, AveragePartial, ParameterAveraging, make_combiner
from dsvm.combine.base import Combiner
from dsvm.combine.sv_merge import SVUnionMerge

__all__ = ["COMBINERS", "AveragePartial", "Combiner", "ParameterAveraging", "SVUnionMerge",
           "combiner_for", "make_combiner"]


def combiner_for(solver: object) -> Combiner:
    """How the streams of ``solver`` are combined: kernel expansions (BSGD) by the union of
    their support vectors merged back to budget, everything else by parameter averaging."""
    from dsvm.solvers.bsgd import BSGDSolver

    if isinstance(solver, BSGDSolver):
        return SVUnionMerge(solver.budget, solver.gamma, solver.merge)
    penalty = getattr(solver, "penalty", "l2")
    if penalty == "l1" or (penalty == "elasticnet" and getattr(solver, "l1_ratio", 0.0) > 0):
        return ParameterAveraging(intersect_support=True)  # prox-aware: see combine.averaging
    return make_combiner("average")
