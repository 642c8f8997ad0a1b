"""Where a dataset lives (a local directory or an fsspec URL), and the checks and clean-up
of a destination before and after a write: what kind of thing is at a path (``kind_at``) and
whether a write may replace it (``check_replaceable``), the one decision every command and API
that writes makes; and the error that names the pip extra a remote URL needs.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import fsspec
import zarr

# The pip extra that brings each remote file system's package (pyproject.toml's extras).
STORAGE_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs"}


class StorageExtraMissing(ImportError, ValueError):
    """A URL's file system needs a package the base install leaves out (``dsvm[s3]``...).
    A ValueError too: for the command line it is a user error (exit 2, one line)."""


def url_to_fs(url: str, storage_options: dict | None = None) -> tuple[Any, str]:
    """fsspec's ``url_to_fs``, with an error that names the URL and the extra to install
    instead of fsspec's bare "Install s3fs to access S3"."""
    try:
        return fsspec.core.url_to_fs(url, **(storage_options or {}))
    except ImportError as exc:
        raise missing_extra(url, exc) from None


def is_glob(src: str | os.PathLike[str]) -> bool:
    """Whether ``src`` is a pattern of file names (``parts/*.csv``), as fsspec expands them."""
    return any(ch in os.fspath(src) for ch in "*?[")


def is_many_files(src: str | os.PathLike[str], storage_options: dict | None = None) -> bool:
    """Whether ``src`` names several files: a glob, or a folder (Spark writes its output as a
    folder of ``part-*`` files)."""
    name = os.fspath(src)
    if is_glob(name):
        return True
    fs, path = url_to_fs(name, storage_options)
    return bool(fs.isdir(path))


def files_of(src: str | os.PathLike[str], storage_options: dict | None = None,
             what: str = "data") -> tuple[Any, list[str]]:
    """The filesystem and the sorted files of a file, folder (searched below) or glob, where
    names starting with "_" or "." are markers and checksums (Spark's ``_SUCCESS``,
    ``.part-0.crc``), not data."""
    name = os.fspath(src)
    fs, _, paths = fsspec.get_fs_token_paths(name, storage_options=storage_options or {})
    files: list[str] = []
    for path in paths:
        if fs.isdir(path):
            files += sorted(p for p in fs.find(path)
                            if not os.path.basename(p).startswith(("_", ".")))
        else:
            files.append(path)
    if not files:
        raise FileNotFoundError(f"{name}: no {what} files found")
    return fs, files


def file_url(src: str | os.PathLike[str], path: str) -> str:
    """A file found under ``src`` (a local path, or a URL whose protocol fsspec stripped)."""
    name = os.fspath(src)
    return f"{name.split('://', 1)[0]}://{path}" if "://" in name else path


def first_file(src: str | os.PathLike[str], storage_options: dict | None = None) -> str:
    """``src``, or the first file of a folder or glob (its header stands for all of them)."""
    if not is_many_files(src, storage_options):
        return os.fspath(src)
    return file_url(src, files_of(src, storage_options)[1][0])


def missing_extra(url: str, exc: ImportError) -> StorageExtraMissing:
    """The error for fsspec's ImportError on ``url``: the URL and the pip extra to install."""
    scheme = url.split("://", 1)[0].lower()
    extra = STORAGE_EXTRAS.get(scheme)
    fix = (f"pip install 'dsvm[{extra}]'" if extra
           else f"install the fsspec file system for {scheme}://")
    return StorageExtraMissing(f"{url}: {exc}; the base install of dsvm has no remote storage: "
                               f"{fix}")


class _Location:
    """Where a dataset lives: a local directory or a path on an fsspec filesystem."""

    def __init__(self, path_or_url: str | os.PathLike[str], storage_options: dict | None) -> None:
        raw = os.fspath(path_or_url)
        self.storage_options = dict(storage_options or {})
        if "://" not in raw or raw.startswith("file://"):
            local = raw[len("file://"):] if raw.startswith("file://") else raw
            self.is_local = True
            self.url = os.path.abspath(os.path.expanduser(local))
        else:
            self.is_local = False
            self.url = raw.rstrip("/")

    def fs(self) -> tuple[Any, str]:
        """The fsspec filesystem and the path on it."""
        return url_to_fs(self.url, self.storage_options)

    def exists(self) -> bool:
        if self.is_local:
            return os.path.lexists(self.url)
        fs, path = self.fs()
        return bool(fs.exists(path))

    def store(self, *, url: str | None = None, read_only: bool) -> Any:
        target = url or self.url
        if self.is_local:
            return zarr.storage.LocalStore(target, read_only=read_only)
        try:
            return zarr.storage.FsspecStore.from_url(
                target, storage_options=self.storage_options or None, read_only=read_only
            )
        except ImportError as exc:  # s3:// without s3fs...: name the extra to install
            raise missing_extra(target, exc) from None


def _remove(loc: _Location, url: str | None = None) -> None:
    """Delete a dataset directory (best effort, used for cleanup and overwrite)."""
    target = url or loc.url
    if loc.is_local:
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target, ignore_errors=True)
        elif os.path.lexists(target):
            os.remove(target)
        return
    fs, path = url_to_fs(target, loc.storage_options)
    if fs.exists(path):
        fs.rm(path, recursive=True)


def require_path(value: Any, what: str) -> None:
    """``value`` as a path or URL, else a TypeError that says what ``what`` takes: arrays or a
    DataFrame given where a path goes (``convert(df, ...)``, ``write_arrays(X, y, path)``)
    were 'expected str, bytes or os.PathLike object, not DataFrame'."""
    if isinstance(value, (str, os.PathLike)) or hasattr(value, "url"):
        return
    given = f"{type(value).__module__.split('.')[0]}.{type(value).__name__}"
    raise TypeError(f"{what} is a path or URL; got a {given}. Arrays are written with "
                    "dsvm.write_arrays(path, X, y); a DataFrame trains as it is "
                    "(SVMClassifier().fit(df, y): its text columns are hashed), or is written "
                    "as Parquet (df.to_parquet) and converted with dsvm.convert.")


def check_destination(
    dst: str | os.PathLike[str] | _Location, *, overwrite: bool,
    storage_options: dict | None = None, inputs: Sequence[Any] = (), kind: str | None = None,
) -> None:
    """Raise unless a new ``kind`` (default: a dataset) may be written at ``dst``: see
    :func:`check_replaceable`."""
    loc = dst if isinstance(dst, _Location) else _Location(dst, storage_options)
    check_replaceable(loc, kind or DATASET, overwrite=overwrite, inputs=inputs)


def _make_parents(path: str) -> list[str]:
    """Create the missing parent directories of ``path``; return them, deepest first."""
    missing = []
    parent = os.path.dirname(path)
    while parent and not os.path.exists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    made = []
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:  # created concurrently: not ours to remove
            continue
        made.append(d)
    return made[::-1]


# ---- what is at a path, and what may replace it --------------------------------------------
# Every write of dsvm (convert, shuffle, write_predictions, predict --out, save, checkpoints,
# demo --data) asks kind_at() what is at its output and replaces only a thing of its own kind:
# a dataset by a dataset, a model by a model. A user's own file is none of dsvm's kinds, so no
# overwrite=True (--overwrite) can destroy it; and an output is never one of the inputs.
NOTHING = "nothing"
DATASET = "a dsvm dataset"
PREDICTIONS = "a dsvm prediction store"
MODEL = "a dsvm model file"
CHECKPOINT = "a dsvm checkpoint"
NPY = "a NumPy .npy file"
PREDICTIONS_TEXT = "a text file of predictions (comma-separated values)"
# The column of each kind of predictions (``dsvm predict``'s Parquet and .csv files).
PREDICTION_COLUMNS = {"labels": "label", "predicted values": "prediction",
                      "decision values": "decision"}
PREDICTIONS_PARQUET = "a Parquet file of predictions"
XZ = "an xz-compressed file"
EMPTY_FOLDER = "an empty folder"
EMPTY_FILE = "an empty file"
ZARR = "a zarr store of another kind"
FOLDER = "a folder that is not a zarr store"
PARQUET = "a Parquet file that is not dsvm's predictions"
FILE = "a file that is none of dsvm's outputs"

# What a write of each kind may replace (with overwrite=True).
REPLACES = {
    DATASET: (DATASET, EMPTY_FOLDER),
    PREDICTIONS: (PREDICTIONS, EMPTY_FOLDER),
    MODEL: (MODEL, EMPTY_FILE),
    CHECKPOINT: (CHECKPOINT, EMPTY_FILE),
    NPY: (NPY, EMPTY_FILE),
    PREDICTIONS_TEXT: (PREDICTIONS_TEXT, EMPTY_FILE),
    PREDICTIONS_PARQUET: (PREDICTIONS_PARQUET, EMPTY_FILE),
    XZ: (XZ,),
}
_SNIFF_BYTES = 1 << 16  # what kind_at reads of a text file to judge it
_ENVELOPES = {"dsvm-model": MODEL, "dsvm-checkpoint": CHECKPOINT}  # dsvm.io's formats
_PREDICTIONS_FORMAT = "dsvm-predictions"  # dsvm.data.predictions.PREDICTIONS_FORMAT


def kind_at(path: str | os.PathLike[str] | _Location, storage_options: dict | None = None) -> str:
    """What is at ``path`` (a local path or fsspec URL): one of the kinds above, judged from
    the content (a zarr group's attributes, a file's first bytes), never from the name."""
    loc = path if isinstance(path, _Location) else _Location(path, storage_options)
    if not loc.exists():
        return NOTHING
    fs, fpath = loc.fs()
    if fs.isdir(fpath):
        return _folder_kind(fs, fpath.rstrip("/"))
    try:
        with fs.open(fpath, "rb") as f:
            head = f.read(_SNIFF_BYTES)
    except OSError:  # a dangling link, a socket...: nothing dsvm wrote
        return FILE
    return _file_kind(fs, fpath, head)


def store_around(loc: _Location) -> tuple[str, str] | None:
    """(the folder, its kind) of the dsvm dataset or prediction store that holds the local
    path ``loc`` (a file written into one would become part of it), or None. Remote URLs are
    not walked up (a request for each folder)."""
    if not loc.is_local:
        return None
    fs, _ = loc.fs()
    for parent in Path(loc.url).parents:
        if (parent / "zarr.json").is_file():
            kind = _folder_kind(fs, str(parent))
            if kind in (DATASET, PREDICTIONS):
                return str(parent), kind
    return None


def _folder_kind(fs: Any, path: str) -> str:
    try:
        meta = json.loads(fs.cat_file(path + "/zarr.json"))
    except (OSError, ValueError):
        return FOLDER if fs.ls(path) else EMPTY_FOLDER
    attrs = meta.get("attributes") or {} if isinstance(meta, dict) else {}
    if "dsvm_format" in attrs:
        return DATASET
    return PREDICTIONS if attrs.get("format") == _PREDICTIONS_FORMAT else ZARR


def _file_kind(fs: Any, path: str, head: bytes) -> str:
    if not head:
        return EMPTY_FILE
    if head.startswith(b"PK"):
        return _envelope_kind(fs, path)
    if head.startswith(b"\x93NUMPY"):
        return NPY
    if head.startswith(b"PAR1"):
        return _parquet_kind(fs, path)
    if head.startswith(b"\xfd7zXZ\x00"):
        return XZ
    return PREDICTIONS_TEXT if _looks_like_predictions(head) else FILE


def _envelope_kind(fs: Any, path: str) -> str:
    """A model file or a checkpoint (dsvm.io.envelope: an npz with a JSON ``meta`` entry)."""
    import numpy as np

    try:
        with fs.open(path, "rb") as f, zipfile.ZipFile(f) as archive, \
                archive.open("meta.npy") as member:
            meta = json.loads(np.lib.format.read_array(member, allow_pickle=False).tobytes())
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return FILE
    return _ENVELOPES.get(str(meta.get("format")), FILE) if isinstance(meta, dict) else FILE


def _parquet_kind(fs: Any, path: str) -> str:
    """Predictions (columns ``label``, or ``decision`` / ``decision_<k>``, as ``dsvm predict``
    writes them) or any other Parquet file."""
    import pyarrow.parquet as pq

    try:
        with fs.open(path, "rb") as f:
            names = pq.read_schema(f).names
    except (OSError, ValueError):
        return FILE
    ours = all(n in ("label", "decision") or n.startswith("label_")
               or n.startswith("decision_") for n in names)
    return PREDICTIONS_PARQUET if names and ours else PARQUET


def _looks_like_predictions(head: bytes) -> bool:
    """Whether the start of a text file is what ``dsvm predict`` writes: lines of the same
    number of comma-separated numbers, or one column of words without spaces (text labels),
    under a header of :data:`PREDICTION_COLUMNS` names for a .csv. A svmlight file (spaces),
    a CSV with another header or prose is not."""
    if len(head) == _SNIFF_BYTES:
        head = head[:head.rfind(b"\n") + 1]
    try:
        lines = head.decode("ascii").splitlines()
    except UnicodeDecodeError:
        return False
    if lines and all(c.split("_", 1)[0] in PREDICTION_COLUMNS.values()
                     for c in lines[0].split(",")):
        lines = lines[1:]  # (the header .csv predictions have)
    rows = [line.split(",") for line in lines]
    if not rows or any(len(r) != len(rows[0]) for r in rows):
        return False
    if len(rows[0]) == 1:
        return all(r[0] and not any(c.isspace() for c in r[0]) for r in rows)
    return all(_is_number(t) for r in rows for t in r)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def overlaps(path: str, other: str) -> bool:
    """Whether ``path`` is ``other``, lies inside it or holds it (local paths through links;
    URLs compare as text)."""
    return _relation(path, other) is not None


def _relation(path: str, other: str) -> str | None:
    """How ``path`` meets ``other``: "is", "lies inside", "holds", or None."""
    a, b = (_real(p) for p in (os.fspath(path), os.fspath(other)))
    if a == b:
        return "is"
    if a.startswith(b.rstrip("/") + "/"):
        return "lies inside"
    return "holds" if b.startswith(a.rstrip("/") + "/") else None


def _real(path: str) -> str:
    if "://" in path and not path.startswith("file://"):
        return path.rstrip("/")
    local = path[len("file://"):] if path.startswith("file://") else path
    return os.path.realpath(os.path.expanduser(local)).rstrip(os.sep) or os.sep


def check_replaceable(
    target: str | os.PathLike[str] | _Location, kind: str, *, overwrite: bool,
    inputs: Sequence[Any] = (), storage_options: dict | None = None, label: str | None = None,
) -> None:
    """Raise unless a new ``kind`` may be written at ``target``: it is none of ``inputs`` (nor
    inside one, nor holding one: ValueError), and what is there now is nothing, or of that
    same kind and ``overwrite`` is true (FileExistsError). ``label`` names ``target`` in the
    messages (default: its path)."""
    loc = target if isinstance(target, _Location) else _Location(target, storage_options)
    label = label or loc.url
    for source in inputs:
        source = getattr(source, "url", source)  # a Dataset
        relation = _relation(loc.url, os.fspath(source)) if source else None
        if relation is not None:
            raise ValueError(f"{label} {relation} the input {source}; dsvm never overwrites an "
                             "input: choose another output.")
    around = store_around(loc)
    if around is not None:
        folder, found = around
        raise ValueError(f"{label} lies inside {found}, {folder}: writing there would change "
                         "it; choose another output.")
    found = kind_at(loc)
    if found == NOTHING:
        return
    if found not in REPLACES[kind]:
        raise FileExistsError(f"{label} exists and is {found}, not {kind}; overwrite=True "
                              f"replaces only {kind}: choose another output.")
    if not overwrite:
        raise FileExistsError(f"{label} already exists; pass overwrite=True to replace it")
