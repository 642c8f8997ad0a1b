"""Local solvers by name: what ``solver="..."`` in the estimators and the CLI resolves to."""

from __future__ import annotations

from typing import Any

from dsvm.solvers.asset import AssetSolver, AssetStarSolver
from dsvm.solvers.base import LocalSolver
from dsvm.solvers.bsgd import BSGDSolver
from dsvm.solvers.pegasos import PegasosSolver
from dsvm.solvers.sgd import SGDSolver

SOLVERS: dict[str, type] = {"pegasos": PegasosSolver, "sgd": SGDSolver}
SOLVERS.update({"asset": AssetSolver, "asset*": AssetStarSolver})
SOLVERS["bsgd"] = BSGDSolver


def make_solver(name: str, **params: Any) -> LocalSolver:
    """Instantiate the solver registered as ``name`` with hyper-parameters ``params``.

    Raises ValueError for an unknown name (listing the valid ones) and TypeError for a
    parameter the solver does not have.
    """
    try:
        cls = SOLVERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"Got {name!r}; expected one of {sorted(SOLVERS)}.") from None
    solver: LocalSolver = cls(**params)
    return solver
