"""Text class labels ("yes"/"no", "cat"/"dog"/"bird") of a conversion, stored as numeric codes.

A dataset's ``y`` is float64. A label column that holds text is stored as codes 0..K-1 with the
names in the attribute ``label_names``, sorted as scikit-learn's ``LabelEncoder`` sorts them
(``np.unique`` on text: by code point), so that code ``i`` is ``label_names[i]``: the same
convention as a fit on text labels from a DataFrame (dsvm.training.inputs.codes_of), which
trains on the codes as they are and shows the names as ``classes_``.

A conversion streams, so the set of names is known only at its end. Codes are given by first
appearance while the rows stream past (:meth:`LabelNames.encode`), and when the writer closes
it rewrites the stored ``y`` once into the sorted order (:func:`recode_stored`). That was
chosen over a first pass that gathers the names: one pass reads the input once (a second
read doubles the transfer of a remote file and, for CSV, the parsing of every line, as the
label column cannot be read alone), while the rewrite touches only ``y`` (8 bytes a row; X is
never rewritten) and happens before the attribute ``complete`` is set, so that no dataset
whose codes are still provisional ever opens as complete.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dsvm.data.attrs import MAX_CLASSES
from dsvm.exceptions import DataFormatError


class LabelNames:
    """The label names met so far in one conversion and their provisional codes."""

    def __init__(self, where: str) -> None:
        self.where = where  # the input, named in errors
        self._codes: dict[str, int] = {}

    @classmethod
    def known(cls, names: Sequence[str], where: str) -> LabelNames:
        """Names already sorted and coded (a dataset rewritten: its codes stay as they are)."""
        out = cls(where)
        out._codes = {str(n): i for i, n in enumerate(names)}
        return out

    def __len__(self) -> int:
        return len(self._codes)

    def encode(self, names: Any) -> np.ndarray:
        """Float64 codes of an array of names (any text dtype, or objects that are str)."""
        distinct, inverse = np.unique(np.asarray(names), return_inverse=True)
        table = np.array([self._code(str(n)) for n in distinct.tolist()], dtype=np.float64)
        return table[inverse.ravel()]

    def _code(self, name: str) -> int:
        code = self._codes.get(name)
        if code is None:
            if len(self._codes) >= MAX_CLASSES:
                raise DataFormatError(
                    f"{self.where}: the label column holds more than {MAX_CLASSES} distinct "
                    f"texts (e.g. {name!r}); text labels are class names: is the label "
                    "column (label_column= / --label-column) an id or a free-text column?")
            code = self._codes[name] = len(self._codes)
        return code

    def sorted(self) -> tuple[list[str], np.ndarray]:
        """(the names sorted, ``table`` with ``table[provisional code] = sorted code``)."""
        names = sorted(self._codes)
        table = np.empty(len(names), dtype=np.float64)
        for new, name in enumerate(names):
            table[self._codes[name]] = new
        return names, table


def recode_stored(y: Any, chunk_starts: Sequence[int], table: np.ndarray) -> None:
    """Rewrite the stored labels ``y`` (a zarr array) chunk by chunk: code c becomes
    ``table[c]``. Nothing to do when the codes are already in sorted order."""
    if np.array_equal(table, np.arange(len(table))):
        return
    for start, stop in zip(chunk_starts[:-1], chunk_starts[1:]):
        if stop > start:
            y[start:stop] = table[np.asarray(y[start:stop]).astype(np.int64)]
