"""Where a dataset lives (a local directory or an fsspec URL), and the checks and clean-up
of a destination before and after a write.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import fsspec
import zarr


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
        fs, path = fsspec.core.url_to_fs(self.url, **self.storage_options)
        return fs, path

    def exists(self) -> bool:
        if self.is_local:
            return os.path.lexists(self.url)
        fs, path = self.fs()
        return bool(fs.exists(path))

    def store(self, *, url: str | None = None, read_only: bool) -> Any:
        target = url or self.url
        if self.is_local:
            return zarr.storage.LocalStore(target, read_only=read_only)
        return zarr.storage.FsspecStore.from_url(
            target, storage_options=self.storage_options or None, read_only=read_only
        )


def _is_zarr_store(loc: _Location) -> bool:
    if loc.is_local:
        return os.path.isfile(os.path.join(loc.url, "zarr.json"))
    fs, path = loc.fs()
    return bool(fs.exists(path.rstrip("/") + "/zarr.json"))


def _remove(loc: _Location, url: str | None = None) -> None:
    """Delete a dataset directory (best effort, used for cleanup and overwrite)."""
    target = url or loc.url
    if loc.is_local:
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target, ignore_errors=True)
        elif os.path.lexists(target):
            os.remove(target)
        return
    fs, path = fsspec.core.url_to_fs(target, **loc.storage_options)
    if fs.exists(path):
        fs.rm(path, recursive=True)


def check_destination(
    dst: str | os.PathLike[str] | _Location, *, overwrite: bool,
    storage_options: dict | None = None,
) -> None:
    """Raise FileExistsError if ``dst`` exists and may not be replaced."""
    loc = dst if isinstance(dst, _Location) else _Location(dst, storage_options)
    if not loc.exists():
        return
    if not overwrite:
        raise FileExistsError(f"{loc.url} already exists; pass overwrite=True to replace it")
    is_dir = os.path.isdir(loc.url) if loc.is_local else True
    if is_dir and not _is_zarr_store(loc) and _nonempty(loc):
        raise FileExistsError(f"refusing to overwrite {loc.url}: it exists and is not a zarr store")


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


def _nonempty(loc: _Location) -> bool:
    if loc.is_local:
        return not os.path.isdir(loc.url) or bool(os.listdir(loc.url))
    fs, path = loc.fs()
    return bool(fs.ls(path))
