"""Prediction stores: labels or decision values written chunk by chunk by the workers.

``model.write_predictions(dataset, "out.zarr")`` (and ``dsvm predict MODEL DATASET --out
out.zarr``) gives every chunk of the dataset to a task that reads it, predicts and writes its
rows into a zarr array here; the values never pass through the client, which for a dataset
larger than memory is the only way its predictions fit anywhere. The layout:

    values       labels (n_samples,) or decision values (n_samples,) / (n_samples, n_classes),
                 chunked like the dataset's rows, so that every task writes whole zarr chunks
                 and no two tasks touch the same chunk
    attrs        format "dsvm-predictions", kind ("labels" | "decision"), classes, source
                 dataset, complete (False until every chunk is written)

Labels are the class values themselves when they are numbers; text labels are stored as their
index into ``attrs["classes"]`` (zarr v3 has no stable text data type yet). A local store is
written under a temporary name and renamed when complete; on an fsspec URL the ``complete``
attribute is set last. :func:`read_predictions` refuses a store that is not complete.
"""

from __future__ import annotations

import os
import secrets
from typing import Any, cast

import numpy as np
import zarr

from dsvm.data.location import PREDICTIONS, _Location, _remove, check_destination
from dsvm.exceptions import DataFormatError

PREDICTIONS_FORMAT = "dsvm-predictions"
KINDS = ("labels", "decision")


class PredictionStore:
    """Where a model's predictions go: created on the client, filled by the tasks."""

    def __init__(self, dst: str | os.PathLike[str], *, n_rows: int, chunk_rows: int,
                 kind: str, classes: np.ndarray, n_outputs: int, source: str,
                 overwrite: bool = False, storage_options: dict | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {kind!r}.")
        self._loc = _Location(dst, storage_options)
        # replaces only a prediction store (never the dataset predicted, nor any other thing)
        check_destination(self._loc, overwrite=overwrite, kind=PREDICTIONS)
        self.url = self._loc.url
        # the tasks write here; a local store is renamed to ``url`` once complete
        self.write_url = f"{self.url}.tmp-{secrets.token_hex(4)}" if self._loc.is_local \
            else self.url
        self.storage_options = self._loc.storage_options
        self.chunk_rows = int(chunk_rows)
        text = classes.dtype.kind not in "biuf"
        shape: tuple[int, ...]
        if kind == "labels":
            dtype, shape = (np.dtype(np.int32) if text else classes.dtype), (n_rows,)
        else:
            dtype = np.dtype(np.float64)
            shape = (n_rows,) if n_outputs == 1 else (n_rows, n_outputs)
        if self._loc.exists():
            _remove(self._loc)  # overwrite=True was checked above
        group = zarr.open_group(self._loc.store(url=self.write_url, read_only=False), mode="w")
        group.create_array("values", shape=shape, dtype=dtype, fill_value=0,
                           chunks=(self.chunk_rows, *shape[1:]))
        group.attrs.update({
            "format": PREDICTIONS_FORMAT, "kind": kind, "complete": False, "source": source,
            "classes": [c.item() if hasattr(c, "item") else c for c in classes.tolist()],
            "labels_are_indices": bool(kind == "labels" and text),
        })

    def writer(self) -> ChunkWriter:
        """What a task needs to write its chunk (small and picklable)."""
        return ChunkWriter(self.write_url, self.storage_options, self.chunk_rows)

    def finish(self, rows_written: int, n_rows: int) -> str:
        """Mark the store complete (after checking every row was written); return its URL."""
        if rows_written != n_rows:
            self.abort()
            raise RuntimeError(f"predictions for {rows_written} of {n_rows} rows were written; "
                               f"{self.url} was removed.")
        group = zarr.open_group(self._loc.store(url=self.write_url, read_only=False), mode="r+")
        group.attrs["complete"] = True
        if self.write_url != self.url:
            os.replace(self.write_url, self.url)
        return self.url

    def abort(self) -> None:
        """Remove what was written (a failed prediction leaves nothing behind)."""
        _remove(self._loc, self.write_url)


class ChunkWriter:
    """Writes the predictions of row chunk ``i`` into a store's ``values`` array."""

    def __init__(self, url: str, storage_options: dict, chunk_rows: int) -> None:
        self.url, self.storage_options, self.chunk_rows = url, dict(storage_options), chunk_rows

    def write(self, chunk: int, values: np.ndarray) -> int:
        loc = _Location(self.url, self.storage_options)
        array = cast(zarr.Array, zarr.open_group(loc.store(read_only=False), mode="r+")["values"])
        start = chunk * self.chunk_rows
        array[start:start + values.shape[0]] = values
        return int(values.shape[0])


def read_predictions(path_or_url: str | os.PathLike[str], *,
                     storage_options: dict | None = None) -> np.ndarray:
    """The values of a complete prediction store (labels mapped back to text when they were
    stored as indices). Raises DataFormatError for anything else."""
    loc = _Location(path_or_url, storage_options)
    try:
        group = zarr.open_group(loc.store(read_only=True), mode="r")
    except (FileNotFoundError, zarr.errors.GroupNotFoundError) as exc:
        raise DataFormatError(f"{loc.url} is not a dsvm prediction store: {exc}") from None
    attrs: dict[str, Any] = dict(group.attrs)
    if attrs.get("format") != PREDICTIONS_FORMAT:
        raise DataFormatError(f"{loc.url} is not a dsvm prediction store "
                              f"(format {attrs.get('format')!r}).")
    if not attrs.get("complete", False):
        raise DataFormatError(f"{loc.url} is incomplete: the prediction that wrote it did not "
                              "finish.")
    stored = cast(zarr.Array, group["values"])  # zarr types a member as Array | Group
    values = np.asarray(stored[...])
    if attrs.get("labels_are_indices"):
        return np.asarray(attrs["classes"])[values]
    return values
