"""What the estimators need for kernels: building the map, the BSGD model, saving both.

Kept out of :mod:`dsvm.estimators` so that the estimator only wires these in a few lines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dsvm.combine.sv_merge import SVUnionMerge
from dsvm.features.maps import RFF, FeatureMap, KernelExpansion, Nystroem, map_from_arrays
from dsvm.solvers.base import SolverState

KERNELS = ("linear", "rff", "nystroem")
_MAP_PREFIX = "map."


def make_feature_map(kernel: Any, n_components: int, gamma: float,
                     random_state: Any) -> FeatureMap | None:
    """The unfitted map for ``kernel`` ("linear": none); a given RFF/Nystroem is copied."""
    if isinstance(kernel, (RFF, Nystroem)):
        params = dict(vars(kernel))
        params = {k: v for k, v in params.items() if not k.endswith("_") and k in
                  ("n_components", "gamma", "eigen_threshold", "random_state")}
        if params.get("random_state") is None and isinstance(random_state, (int, np.integer)):
            params["random_state"] = int(random_state)  # the fit's seed: resumable
        return type(kernel)(**params)
    seed = int(random_state) if isinstance(random_state, (int, np.integer)) else None
    if kernel == "rff":
        return RFF(int(n_components), float(gamma), random_state=seed)
    if kernel == "nystroem":
        return Nystroem(int(n_components), float(gamma), random_state=seed)
    return None


def check_kernel_solver(kernel: Any, solver: str) -> None:
    if solver == "bsgd" and not (isinstance(kernel, str) and kernel == "linear"):
        raise ValueError(
            f"solver='bsgd' trains the Gaussian kernel itself; kernel must be 'linear' with it "
            f"(got kernel={kernel!r}). Use kernel='rff' or 'nystroem' with a linear solver instead."
        )


def bsgd_combiner(budget: int, gamma: float, merge: str) -> SVUnionMerge:
    return SVUnionMerge(budget, gamma, merge)


def expansion_model(state: SolverState, gamma: float) -> tuple[np.ndarray, np.ndarray, KernelExpansion]:
    """A BSGD state as (coef, intercept, map): all outputs' support vectors stacked as the
    map's landmarks, each output's coefficients in its own columns (zeros elsewhere)."""
    ex = state.extra
    n_sv = ex["n_sv"].astype(np.int64)
    n_out, total = len(n_sv), int(n_sv.sum())
    coef = np.zeros((n_out, total), dtype=np.float64)
    svs = []
    start = 0
    for k in range(n_out):
        coef[k, start : start + n_sv[k]] = ex["alpha"][k, : n_sv[k]]
        svs.append(ex["sv"][k, : n_sv[k]])
        start += int(n_sv[k])
    d = ex["sv"].shape[2]
    landmarks = np.concatenate(svs) if total else np.zeros((0, d))
    return coef, np.zeros(n_out, dtype=np.float64), KernelExpansion(landmarks, gamma)


def map_arrays(fmap: FeatureMap | None) -> tuple[dict[str, np.ndarray], dict[str, Any] | None]:
    """The map as model-file arrays (prefixed) and its JSON description."""
    if fmap is None:
        return {}, None
    return {_MAP_PREFIX + k: v for k, v in fmap.to_arrays().items()}, fmap.meta()


def map_from_saved(arrays: dict[str, np.ndarray], meta: dict[str, Any] | None) -> FeatureMap | None:
    if meta is None:
        return None
    own = {k[len(_MAP_PREFIX):]: v for k, v in arrays.items() if k.startswith(_MAP_PREFIX)}
    return map_from_arrays(meta, own)
