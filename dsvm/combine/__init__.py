"""Combining the results of parallel streams (pure NumPy, no dask)."""

from dsvm.combine.averaging import COMBINERS, AveragePartial, ParameterAveraging, make_combiner

__all__ = ["COMBINERS", "AveragePartial", "ParameterAveraging", "make_combiner"]
