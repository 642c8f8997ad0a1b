"""The training layer: it owns a fit from the user's input to a fitted-model record.

``fit`` / ``partial_fit`` (:mod:`dsvm.training.trainer`) take a :class:`FitSpec` (the validated
parameters) and the input; they resolve the source, open the engine, fit the kernel map,
restore or write checkpoints, run the epoch loop (or NESVM's gradient loop) and return a
:class:`FittedModel`. Scoring and prediction over sources are in
:mod:`dsvm.training.evaluation`; detached jobs in :mod:`dsvm.training.jobs`.
"""

from dsvm.training.checkpoints import load_checkpoint
from dsvm.training.jobs import attach, jobs, submit
from dsvm.training.record import FittedModel
from dsvm.training.spec import CLASSIFICATION, REGRESSION, FitSpec
from dsvm.training.trainer import fit, partial_fit

__all__ = ["CLASSIFICATION", "REGRESSION", "FitSpec", "FittedModel", "attach", "fit", "jobs",
           "load_checkpoint", "partial_fit", "submit"]
