"""dsvm: distributed, out-of-core training of support vector machines on Dask."""

from dsvm.data import Dataset, convert, open_dataset, write_arrays, write_synthetic
from dsvm.estimators import SVMClassifier
from dsvm.features import RFF, Nystroem
from dsvm.model import load
from dsvm.regressor import SVMRegressor
from dsvm.checkpoint import load_checkpoint
from dsvm.data.predictions import read_predictions
from dsvm.plotting import plot_history
from dsvm._jobs import attach, jobs, submit

__version__ = "0.1.0"

__all__ = [
    "Dataset",
    "Nystroem",
    "RFF",
    "SVMClassifier",
    "SVMRegressor",
    "__version__",
    "convert",
    "load",
    "load_checkpoint",
    "plot_history",
    "read_predictions",
    "submit",
    "attach",
    "jobs",
    "open_dataset",
    "write_arrays",
    "write_synthetic",
]
