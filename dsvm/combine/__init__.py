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
    return make_combiner("average")
