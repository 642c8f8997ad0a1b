"""What a fit is asked to do: the validated parameters of an estimator, as one typed record.

The estimators validate their parameters and hand the training layer a :class:`FitSpec`;
nothing below reads an estimator. ``params`` keeps the flat scikit-learn-style parameters (the
solver picks its own from them, :func:`dsvm.solvers.registry.solver_from_params`; checkpoints
and model files record them); the typed fields are what the training loop itself uses.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dsvm.kernels.losses import loss_param
from dsvm.solvers.base import LocalSolver
from dsvm.solvers.registry import solver_from_params
from dsvm.solvers.targets import LossSpec

CLASSIFICATION = "classification"
REGRESSION = "regression"


@dataclass(frozen=True)
class FitSpec:
    """A fit's plan, fixed before it starts."""

    estimator: str  # the estimator's class name, recorded in checkpoints
    task: str  # CLASSIFICATION or REGRESSION
    params: Mapping[str, Any] = field(repr=False)
    solver: str = "pegasos"
    max_epochs: int = 10
    tol: float | None = None
    n_iter_no_change: int = 3
    n_streams: int | None = None
    chunk_rows: int = 65536
    n_workers: int | None = None
    random_state: Any = None
    verbose: int = 0
    checkpoint: str | os.PathLike | None = None
    client: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def from_params(cls, estimator: str, task: str, params: Mapping[str, Any]) -> FitSpec:
        """The spec of an estimator named ``estimator`` with (validated) ``params``."""
        clean = {k: v for k, v in params.items() if k != "client"}
        return cls(
            estimator=estimator, task=task, params=clean, solver=str(params["solver"]),
            max_epochs=int(params["max_epochs"]),
            tol=None if params["tol"] is None else float(params["tol"]),
            n_iter_no_change=int(params["n_iter_no_change"]),
            n_streams=None if params.get("n_streams") is None else int(params["n_streams"]),
            chunk_rows=int(params.get("chunk_rows", 65536)),
            n_workers=params.get("n_workers"),
            random_state=params.get("random_state"),
            verbose=int(params.get("verbose", 0)),
            checkpoint=params.get("checkpoint"),
            client=params.get("client"),
        )

    @property
    def classifies(self) -> bool:
        return self.task == CLASSIFICATION

    @property
    def loss(self) -> LossSpec:
        """The loss with its parameter (mu, epsilon), as evaluation needs it."""
        name = self.loss_name
        return LossSpec(name, loss_param(name, mu=self.params.get("mu", 0.0),
                                         epsilon=self.params.get("epsilon", 0.0)))

    # Typed reads of the parameters the training layer reads most (``params`` stays the record
    # of them all: the solvers pick theirs from it, checkpoints and model files write it).
    # Both estimators have each of them, except class_weight (None for a regressor).
    @property
    def loss_name(self) -> str:
        return str(self.params["loss"])

    @property
    def penalty(self) -> str:
        return str(self.params["penalty"])

    @property
    def alpha(self) -> float:
        return float(self.params["alpha"])

    @property
    def l1_ratio(self) -> float:
        return float(self.params["l1_ratio"])

    @property
    def fit_intercept(self) -> bool:
        return bool(self.params["fit_intercept"])

    @property
    def class_weight(self) -> dict[Any, float] | str | None:
        value = self.params.get("class_weight")
        return dict(value) if isinstance(value, Mapping) else value

    @property
    def kernel(self) -> Any:
        """A name ("linear", "rff", "nystroem") or a feature map object (RFF, Nystroem)."""
        return self.params["kernel"]

    @property
    def gamma(self) -> float | str:
        """A width, or "scale" until the fit resolves it (:meth:`with_params`)."""
        value = self.params["gamma"]
        return value if isinstance(value, str) else float(value)

    @property
    def n_components(self) -> int:
        return int(self.params["n_components"])

    @property
    def mu(self) -> float:
        """NESVM's smoothing of the hinge (the classifier's; none for a regressor)."""
        return float(self.params["mu"])

    @property
    def mu0(self) -> float | None:
        """Homotopy NESVM's first mu (None: plain NESVM)."""
        value = self.params.get("mu0")
        return None if value is None else float(value)

    @property
    def early_stopping(self) -> bool:
        return bool(self.params["early_stopping"])

    @property
    def validation_fraction(self) -> float:
        return float(self.params["validation_fraction"])

    @property
    def shuffle_window(self) -> int | None:
        value = self.params["shuffle_window"]
        return None if value is None else int(value)

    def make_solver(self, n_samples: int | None) -> LocalSolver:
        """The local solver with its hyper-parameters (``n_samples``: ASSET's N)."""
        return solver_from_params(self.params, n_samples)

    def with_params(self, **changes: Any) -> FitSpec:
        """This spec with some parameters resolved (``gamma="scale"`` to its value)."""
        return replace(self, params={**self.params, **changes})

    def jsonable_params(self) -> dict[str, Any]:
        """The parameters as a model file or checkpoint records them (JSON values only)."""
        out: dict[str, Any] = {}
        for k, v in self.params.items():
            if isinstance(v, np.random.Generator):
                v = None
            elif isinstance(v, (np.integer, np.floating)):
                v = v.item()
            elif isinstance(v, os.PathLike):
                v = os.fspath(v)
            elif hasattr(v, "kind") and k == "kernel":  # an RFF / Nystroem object
                v = v.kind
            elif k == "class_weight" and isinstance(v, dict):
                # JSON keys are text: keep the labels' own types as [label, weight] pairs
                v = [[_plain(label), float(w)] for label, w in v.items()]
            out[k] = v
        return out


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def params_from_json(params: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :meth:`FitSpec.jsonable_params` where it changed a type."""
    out = dict(params)
    if isinstance(out.get("class_weight"), list):
        out["class_weight"] = {label: float(w) for label, w in out["class_weight"]}
    return out
