"""The training layer: it owns a fit from the user's input to a fitted-model record.

``fit`` / ``partial_fit`` (:mod:`dsvm.training.trainer`) take a :class:`FitSpec` (the validated
parameters) and the input; they resolve the source, open the engine, fit the kernel map,
restore or write checkpoints, run the epoch loop (or NESVM's gradient loop) and return a
:class:`FittedModel`. Scoring and prediction over sources are in
:mod:`dsvm.training.evaluation`; detached jobs in :mod:`dsvm.training.jobs`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsvm._lazy import lazy_getattr

# public name -> the module that defines it, imported on first use (PEP 562): a submodule
# such as dsvm.training.cluster, which the command line imports first thing to start its
# cluster's server (dsvm.distributed.start_method), loads without the whole layer (2.3 s)
_EXPORTS = {
    "load_checkpoint": "dsvm.training.checkpoints",
    "attach": "dsvm.training.jobs", "submit": "dsvm.training.jobs",
    "FittedModel": "dsvm.training.record",
    "CLASSIFICATION": "dsvm.training.spec", "REGRESSION": "dsvm.training.spec",
    "FitSpec": "dsvm.training.spec",
    "fit": "dsvm.training.trainer", "partial_fit": "dsvm.training.trainer",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from dsvm.training.checkpoints import load_checkpoint  # noqa: F401
    from dsvm.training.jobs import attach, submit  # noqa: F401
    from dsvm.training.record import FittedModel  # noqa: F401
    from dsvm.training.spec import CLASSIFICATION, REGRESSION, FitSpec  # noqa: F401
    from dsvm.training.trainer import fit, partial_fit  # noqa: F401


__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
