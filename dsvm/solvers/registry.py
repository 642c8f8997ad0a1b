"""Local solvers by name: what ``solver="..."`` in the estimators and the CLI resolves to."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsvm.solvers.asset import AssetSolver, AssetStarSolver
from dsvm.solvers.base import LocalSolver
from dsvm.solvers.bsgd import BSGDSolver
from dsvm.solvers.cocoa import CocoaSolver
from dsvm.solvers.options import check_penalty, solver_params
from dsvm.solvers.pegasos import PegasosSolver
from dsvm.solvers.sgd import SGDSolver

SOLVERS: dict[str, type] = {"pegasos": PegasosSolver, "sgd": SGDSolver}
SOLVERS.update({"asset": AssetSolver, "asset*": AssetStarSolver})
SOLVERS["bsgd"] = BSGDSolver
SOLVERS["cocoa"] = CocoaSolver


def solver_class(name: str) -> type:
    try:
        return SOLVERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"Got {name!r}; expected one of {sorted(SOLVERS)}.") from None


def make_solver(name: str, **params: Any) -> LocalSolver:
    """Instantiate the solver registered as ``name`` with hyper-parameters ``params``.

    Raises ValueError for an unknown name (listing the valid ones) and TypeError for a
    parameter the solver does not have.
    """
    solver: LocalSolver = solver_class(name)(**params)
    return solver


def solver_from_params(params: Mapping[str, Any], n_samples: int | None = None) -> LocalSolver:
    """The solver ``params["solver"]`` with its own parameters picked from the flat
    estimator-style ``params`` (see :func:`dsvm.solvers.options.solver_params`)."""
    name = params["solver"]
    check_penalty(name, params.get("penalty", "l2"))
    cls = solver_class(name)
    return make_solver(name, **solver_params(cls, params, n_samples))
