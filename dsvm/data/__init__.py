"""dsvm.data: the dataset format (zarr row chunks, dense or CSR), converters and row blocks.

``open_dataset`` / ``Dataset`` read; ``DatasetWriter``, ``write_arrays``, ``convert`` and
``write_synthetic`` write. Nothing here imports dask until ``Dataset.to_dask`` or a dask input
to ``write_arrays`` needs it.
"""

from dsvm.data.blocks import CSRBlock, DenseBlock, block_from_arrays
from dsvm.data.convert import convert, write_arrays
from dsvm.data.shuffle import shuffle_dataset
from dsvm.data.synthetic import write_synthetic
from dsvm.data.zarr_store import Dataset, DatasetWriter, open_dataset

__all__ = [
    "CSRBlock",
    "Dataset",
    "DatasetWriter",
    "DenseBlock",
    "block_from_arrays",
    "convert",
    "open_dataset",
    "shuffle_dataset",
    "write_arrays",
    "write_synthetic",
]
