"""dsvm: distributed, out-of-core training of support vector machines on Dask.

The public names are imported on first use (PEP 562), so that ``import dsvm`` and the ``dsvm``
command start in a fraction of a second; ``from dsvm import SVMClassifier`` works as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsvm._lazy import lazy_getattr

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "Dataset": "dsvm.data",
    "convert": "dsvm.data",
    "open_dataset": "dsvm.data",
    "write_arrays": "dsvm.data",
    "write_synthetic": "dsvm.data",
    "read_predictions": "dsvm.data.predictions",
    "RFF": "dsvm.features",
    "Nystroem": "dsvm.features",
    "SVMClassifier": "dsvm.estimators",
    "SVMRegressor": "dsvm.estimators",
    "SVMClassifierCV": "dsvm.estimators",
    "SVMRegressorCV": "dsvm.estimators",
    "load": "dsvm.estimators",
    "plot_history": "dsvm.estimators",
    "load_checkpoint": "dsvm.training.checkpoints",
    "submit": "dsvm.training.jobs",
    "attach": "dsvm.training.jobs",
    "jobs": "dsvm.training.jobs",
}

__all__ = sorted([*_EXPORTS, "__version__"])

if TYPE_CHECKING:
    from dsvm.data import Dataset, open_dataset, write_arrays, write_synthetic  # noqa: F401
    from dsvm.data.convert import convert  # noqa: F401
    from dsvm.data.predictions import read_predictions  # noqa: F401
    from dsvm.estimators import (  # noqa: F401
        SVMClassifier,
        SVMClassifierCV,
        SVMRegressor,
        SVMRegressorCV,
        load,
        plot_history,
    )
    from dsvm.features import RFF, Nystroem  # noqa: F401
    from dsvm.training.checkpoints import load_checkpoint  # noqa: F401
    from dsvm.training.jobs import attach, jobs, submit  # noqa: F401


__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
