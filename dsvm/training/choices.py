"""The values of the estimators' parameters that the layers below define, gathered here so that
the estimators' constraints (:mod:`dsvm.estimators.params`) need no layer below training.
"""

from __future__ import annotations

from dsvm.features.maps import RFF, Nystroem
from dsvm.solvers.bsgd import MERGE_METHODS
from dsvm.training.kernel_maps import KERNELS

# ``kernel=`` as a name ("linear": no map) or as a map object to copy
KERNEL_NAMES: tuple[str, ...] = KERNELS
FEATURE_MAPS: tuple[type, ...] = (RFF, Nystroem)
# ``merge=`` of solver="bsgd": how two support vectors' merge coefficient is found
BSGD_MERGES: tuple[str, ...] = MERGE_METHODS

__all__ = ["BSGD_MERGES", "FEATURE_MAPS", "KERNEL_NAMES"]
