"""dsvm.data: the dataset format (zarr row chunks, dense or CSR), converters and row blocks.

``open_dataset`` / ``Dataset`` read; ``DatasetWriter``, ``write_arrays``, ``convert`` and
``write_synthetic`` write. Nothing here imports dask until ``Dataset.to_dask`` or a dask input
to ``write_arrays`` needs it.
"""

from dsvm.data.arrays import write_arrays
from dsvm.data.blocks import CSRBlock, DenseBlock, block_from_arrays
from dsvm.data.convert import convert
from dsvm.data.dataset import Dataset, open_dataset
from dsvm.data.shuffle import shuffle_dataset
from dsvm.data.synthetic import write_synthetic
from dsvm.data.writer import DatasetWriter

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
