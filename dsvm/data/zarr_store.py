"""The on-disk dataset format, under its historical module name.

The code lives in dsvm.data.attrs (format constants), dsvm.data.location (where a dataset
lives), dsvm.data.dataset (reading: ``Dataset``, ``open_dataset``) and dsvm.data.writer
(``DatasetWriter``); this module re-exports them so that existing imports keep working.
"""

from __future__ import annotations

from dsvm.data.attrs import DTYPES, FORMAT_VERSION, LAYOUTS, MAX_CLASSES
from dsvm.data.dataset import Dataset, open_dataset
from dsvm.data.location import _Location, _remove, check_destination
from dsvm.data.writer import DatasetWriter

__all__ = [
    "DTYPES", "FORMAT_VERSION", "LAYOUTS", "MAX_CLASSES", "Dataset", "DatasetWriter",
    "_Location", "_remove", "check_destination", "open_dataset",
]
