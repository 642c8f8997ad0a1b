"""Per-row state that lives with the rows: CoCoA+'s dual variables, chunked like ``y``.

A dual store is a folder at a path or URL that every worker can reach (next to the checkpoint,
or a scratch folder on the workers' shared storage). The duals of row chunk ``c`` after ``v``
updates are the NumPy file ``v{v}/c{c}.npy`` of shape (rows of chunk c, n_outputs), float64.
(They were a zarr array each: 5.5 ms a chunk and epoch to write, read and delete on this
machine's disk, against 0.35 ms for the file, 2,000-row chunks.) Every chunk is updated exactly
once per epoch, so ``v`` is the epoch count: the task of epoch ``e`` reads version ``e`` of its
chunks and writes version ``e + 1``. A task that is re-run (its worker was lost) reads the same
input and writes the same output; a version is dropped only once the next one is complete (and
the checkpoint that names it written). Version 0 is all zeros and never stored.

A fit in this process with no checkpoint keeps its duals in a :class:`MemoryDualStore`
instead: the same versions in a dict. Writing the store and deleting its old versions cost
more than the dual steps themselves on small chunks (as zarr arrays: 8,000 a9a rows in 500-row
chunks, 10 epochs, 2.5 of the fit's 4.0 s), and nothing outside the process reads them.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass

import numpy as np

# np.load parses a .npy header with ast.literal_eval. CPython 3.11 keeps the AST constructor's
# recursion depth in state its threads share (gh-95185; see gh-106905), so two threads of one
# process parsing at once (a fit's streams reading their chunks' duals: the in-process engine's
# threads, or a worker's) can fail with "SystemError: AST constructor recursion depth
# mismatch"; it failed a CoCoA+ grid's resume in the suite once. One parse at a time.
_NPY_HEADER = threading.Lock()


@dataclass(frozen=True)
class DualStore:
    """Where the duals of a fit live (``url``: a local path or an fsspec URL)."""

    url: str
    n_outputs: int

    def _path(self, version: int, chunk: int) -> str:
        return f"{self.url.rstrip('/')}/v{int(version)}/c{int(chunk)}.npy"

    def read(self, chunk: int, version: int, n_rows: int) -> np.ndarray:
        """The (n_rows, n_outputs) duals of ``chunk`` after ``version`` epochs (a new array)."""
        if version == 0:
            return np.zeros((n_rows, self.n_outputs))
        import fsspec

        fs, path = fsspec.core.url_to_fs(self._path(version, chunk))
        try:
            with fs.open(path, "rb") as f:
                data = f.read()
            with _NPY_HEADER:
                arr = np.load(io.BytesIO(data), allow_pickle=False)
        except (FileNotFoundError, ValueError, EOFError):  # (missing, or not a .npy file)
            arr = None
        if arr is None or arr.shape != (n_rows, self.n_outputs):
            found = "missing" if arr is None else f"of shape {arr.shape}"
            raise FileNotFoundError(
                f"Dual store {self.url}: the duals of chunk {chunk} after epoch {version} are "
                f"{found}; expected {(n_rows, self.n_outputs)} (was the store deleted, or "
                "the checkpoint moved without it?).")
        return np.asarray(arr, dtype=np.float64)

    def write(self, chunk: int, version: int, duals: np.ndarray) -> None:
        """Store ``duals`` as version ``version`` of ``chunk`` (overwrites: idempotent)."""
        import fsspec

        fs, path = fsspec.core.url_to_fs(self._path(version, chunk))
        fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        with fs.open(path, "wb") as f:
            np.save(f, np.ascontiguousarray(duals, dtype=np.float64), allow_pickle=False)

    def drop(self, version: int) -> None:
        """Delete every chunk's duals of ``version`` (0 is never stored)."""
        if version <= 0:
            return
        import fsspec

        fs, path = fsspec.core.url_to_fs(f"{self.url.rstrip('/')}/v{int(version)}")
        if fs.exists(path):
            fs.rm(path, recursive=True)

    def versions(self) -> list[int]:
        """The versions present (for checks and tests)."""
        import fsspec

        fs, path = fsspec.core.url_to_fs(self.url)
        if not fs.exists(path):
            return []
        names = [os.path.basename(p.rstrip("/")) for p in fs.ls(path, detail=False)]
        return sorted(int(n[1:]) for n in names if n.startswith("v") and n[1:].isdigit())


class MemoryDualStore:
    """:class:`DualStore`'s versions in this process's memory (an in-process fit's tasks are
    threads of it; each chunk's version is written by one task, read after it is complete)."""

    def __init__(self, n_outputs: int) -> None:
        self.n_outputs = int(n_outputs)
        self._arrays: dict[tuple[int, int], np.ndarray] = {}

    def read(self, chunk: int, version: int, n_rows: int) -> np.ndarray:
        """As :meth:`DualStore.read`."""
        if version == 0:
            return np.zeros((n_rows, self.n_outputs))
        arr = self._arrays.get((int(version), int(chunk)))
        if arr is None or arr.shape != (n_rows, self.n_outputs):
            found = "missing" if arr is None else f"of shape {arr.shape}"
            raise KeyError(f"The duals of chunk {chunk} after epoch {version} are {found}; "
                           f"expected {(n_rows, self.n_outputs)}.")
        return arr.copy()

    def write(self, chunk: int, version: int, duals: np.ndarray) -> None:
        """As :meth:`DualStore.write` (a copy is kept)."""
        self._arrays[int(version), int(chunk)] = np.array(duals, dtype=np.float64)

    def drop(self, version: int) -> None:
        """As :meth:`DualStore.drop`."""
        for key in [k for k in self._arrays if k[0] == int(version)]:
            del self._arrays[key]

    def versions(self) -> list[int]:
        """As :meth:`DualStore.versions`."""
        return sorted({v for v, _ in self._arrays})


# what a CoCoA+ task reads and writes its duals through
AnyDualStore = DualStore | MemoryDualStore


def dual_store_url(checkpoint: str | os.PathLike | None) -> tuple[str, bool]:
    """(url, temporary): next to the checkpoint (``<checkpoint>.duals``, kept for resume), else
    a scratch folder under ``$DSVM_SCRATCH`` (a folder the workers share; default: the system
    temporary folder, which a LocalCluster shares) removed when the fit ends."""
    if checkpoint is not None:
        return f"{os.fspath(checkpoint).rstrip('/')}.duals", False
    root = os.environ.get("DSVM_SCRATCH") or None
    return tempfile.mkdtemp(prefix="dsvm-duals-", dir=root), True


def remove_store(url: str) -> None:
    """Delete a whole dual store (a fit's scratch store when it ends, or an earlier fit's
    ``<checkpoint>.duals``); refuses (FileExistsError) a folder that holds anything but the
    store's versions ``v1``, ``v2``...: a user's folder of that name is not the fit's to delete."""
    import fsspec

    fs, path = fsspec.core.url_to_fs(url)
    if not fs.exists(path):
        return
    names = [os.path.basename(p.rstrip("/")) for p in fs.ls(path, detail=False)] \
        if fs.isdir(path) else [path]
    foreign = [n for n in names if not (n.startswith("v") and n[1:].isdigit())]
    if foreign:
        raise FileExistsError(f"{url} is not a dsvm dual store (it holds {foreign[0]!r}); a "
                              "CoCoA+ fit keeps its duals there: move it, or choose another "
                              "checkpoint path.")
    if "://" not in url:
        shutil.rmtree(url, ignore_errors=True)
        return
    fs.rm(path, recursive=True)
