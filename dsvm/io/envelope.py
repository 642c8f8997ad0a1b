"""The npz + JSON envelope shared by model files and checkpoints.

A file is a NumPy ``.npz`` archive of named arrays plus one entry ``meta``: a JSON document
stored as UTF-8 bytes, which carries the format name and version. It is read with
``allow_pickle=False``, and only numeric or fixed-width text arrays are accepted, so loading a
file never runs code.

Writes are atomic: a local file is written beside its target, flushed and renamed over it (a
crash leaves the previous file intact); on an fsspec URL (``s3://``, ``gs://``, ``memory://``)
the whole archive is uploaded in one put, which object stores make visible all at once.
"""

from __future__ import annotations

import io
import json
import os
import uuid
import zipfile
from typing import Any

import numpy as np

from dsvm.exceptions import ModelFormatError

_ZIP_MAGIC = b"PK\x03\x04"  # every .npz (np.savez) is a zip archive
# what the first bytes of a file that is not a zip say it is
_MAGIC_KINDS = ((b"\x93NUMPY", "a NumPy .npy array"), (b"\x1f\x8b", "gzip-compressed data"),
                (b"\xfd7zXZ\x00", "xz-compressed data"), (b"BZh", "bzip2-compressed data"),
                (b"PAR1", "a Parquet file"), (b"\x80", "a Python pickle"))


def is_url(path: str) -> bool:
    """Whether ``path`` names an fsspec location other than the local file system."""
    return "://" in path and not path.startswith("file://")


def local_path(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def encode(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> bytes:
    """The archive's bytes: ``arrays`` and ``meta`` (a JSON-able dict)."""
    payload = {k: np.asarray(v) for k, v in arrays.items()}
    payload["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **payload)  # type: ignore[arg-type]
    return buf.getvalue()


def write_bytes(path: str | os.PathLike, payload: bytes,
                storage_options: dict | None = None) -> None:
    """Write ``payload`` to a local path or fsspec URL atomically."""
    path = os.fspath(path)
    if is_url(path):
        import fsspec

        fs, fpath = fsspec.core.url_to_fs(path, **(storage_options or {}))
        fs.pipe_file(fpath, payload)
        return
    path = local_path(path)
    tmp = f"{path}.tmp-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    try:
        with open(tmp, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def exists(path: str | os.PathLike, storage_options: dict | None = None) -> bool:
    path = os.fspath(path)
    if is_url(path):
        import fsspec

        fs, fpath = fsspec.core.url_to_fs(path, **(storage_options or {}))
        return bool(fs.exists(fpath))
    return os.path.isfile(local_path(path))


def read_bytes(path: str | os.PathLike, what: str, storage_options: dict | None = None) -> bytes:
    """The file's bytes; FileNotFoundError naming ``what`` (e.g. "model file") when absent."""
    path = os.fspath(path)
    if is_url(path):
        import fsspec

        fs, fpath = fsspec.core.url_to_fs(path, **(storage_options or {}))
        if not fs.exists(fpath):
            raise FileNotFoundError(f"No {what} at {path!r}.")
        return bytes(fs.cat_file(fpath))
    local = local_path(path)
    if os.path.isdir(local):
        raise ModelFormatError(f"{path} is a folder{_folder_kind(local)}, not a dsvm {what}.")
    if not os.path.isfile(local):
        raise FileNotFoundError(f"No {what} at {path!r}.")
    with open(local, "rb") as f:
        return f.read()


def decode(data: bytes, *, path: str, fmt: str, version: int, what: str,
           required: tuple[str, ...] = ()) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(arrays, meta) of an archive written by :func:`encode` with ``meta["format"] == fmt``.

    Refuses, with :class:`ModelFormatError`, anything else: not an npz (saying what the file
    looks like instead), no meta, another format, a newer version than ``version``, missing
    ``required`` arrays, or arrays that are neither numbers nor fixed-width text.
    """
    if not data.startswith(_ZIP_MAGIC):  # np.load would answer with its allow_pickle hint
        raise ModelFormatError(f"{path} is not a dsvm {what}: it looks like {looks_like(data)}.")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            names = set(z.files)
            missing = {"meta", *required} - names
            if missing:
                raise ModelFormatError(f"{path} is not a dsvm {what}: it lacks {sorted(missing)}.")
            arrays = {k: z[k] for k in names if k != "meta"}
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
    except (zipfile.BadZipFile, ValueError, OSError, UnicodeDecodeError, EOFError) as exc:
        if isinstance(exc, ModelFormatError):
            raise
        raise ModelFormatError(
            f"{path} is not a dsvm {what} (a NumPy .npz with a JSON 'meta' entry): {exc}"
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise ModelFormatError(f"{path} is not a dsvm {what} (format {found!r}).")
    if int(meta.get("version", -1)) > version:
        raise ModelFormatError(
            f"{path} was written by a newer dsvm ({what} format version {meta['version']}; "
            f"this dsvm reads up to {version}). Upgrade dsvm."
        )
    for name, arr in arrays.items():
        if arr.dtype.kind not in "bfiuU":  # numbers, bool or fixed-width text labels (no pickle)
            raise ModelFormatError(f"{path}: array {name!r} has dtype {arr.dtype}, not numeric, "
                                   "bool or text.")
    return arrays, meta


def looks_like(data: bytes) -> str:
    """What a file that is not an npz archive seems to be, from its first bytes: for an error
    that tells a user which file they gave instead (a dataset, a text file, ...)."""
    if not data:
        return "an empty file"
    for magic, kind in _MAGIC_KINDS:
        if data.startswith(magic):
            return kind + (" (a dataset to dsvm convert?)" if "compressed" in kind else "")
    head = data[:4096]
    if b"\x00" in head:
        return "binary data"
    return _text_kind(head.decode("utf-8", "replace"))


def _text_kind(text: str) -> str:
    lines = [ln for ln in text.splitlines()[:20] if ln.strip()]
    if not lines:
        return "blank text"
    if lines[0].lstrip().startswith(("{", "[")):
        return "JSON text"
    first = lines[0].split()
    if len(first) > 1 and all(":" in token for token in first[1:]):
        return "svmlight/libsvm text (a dataset to dsvm convert?)"
    if "\t" in lines[0] or "," in lines[0]:
        return "CSV/TSV text (a dataset to dsvm convert?)"
    return "text"


def _folder_kind(path: str) -> str:
    """The hint for a folder given as a file: one holding zarr metadata is likely a dataset."""
    if any(os.path.exists(os.path.join(path, name)) for name in ("zarr.json", ".zgroup")):
        return " (a zarr store: a dataset?)"
    return ""
