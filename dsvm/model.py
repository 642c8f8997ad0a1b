"""Saving and loading fitted models without pickle.

A model file is a NumPy ``.npz`` archive holding plain numeric arrays (``coef``, ``intercept``,
``classes``) and one JSON document (``meta``, stored as UTF-8 bytes) with the estimator's
parameters, history and format version. It is read with ``allow_pickle=False``: a file that is not
a dsvm model, or that would need unpickling, is refused with :class:`ModelFormatError`.
"""

from __future__ import annotations

import json
import os
import zipfile
from typing import Any

import numpy as np

from dsvm.exceptions import ModelFormatError

MODEL_FORMAT = "dsvm-model"
MODEL_VERSION = 1
_ARRAYS = ("coef", "intercept", "classes")


def save_model(path: str | os.PathLike, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Write ``arrays`` and ``meta`` to ``path`` atomically (temporary file, then rename)."""
    path = os.fspath(path)
    doc = dict(meta, format=MODEL_FORMAT, version=MODEL_VERSION)
    payload = {k: np.asarray(arrays[k]) for k in _ARRAYS}
    payload.update({k: np.asarray(v) for k, v in arrays.items() if k not in _ARRAYS})  # e.g. map.*
    payload["meta"] = np.frombuffer(json.dumps(doc).encode("utf-8"), dtype=np.uint8)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            np.savez(f, **payload)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_model_arrays(path: str | os.PathLike) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read a model file; refuse anything that is not one."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No model file at {path!r}.")
    try:
        with np.load(path, allow_pickle=False) as z:
            names = set(z.files)
            missing = {"meta", *_ARRAYS} - names
            if missing:
                raise ModelFormatError(
                    f"{path} is not a dsvm model: it lacks {sorted(missing)}."
                )
            arrays = {k: z[k] for k in names if k != "meta"}
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
    except (zipfile.BadZipFile, ValueError, OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, ModelFormatError):
            raise
        raise ModelFormatError(
            f"{path} is not a dsvm model file (a NumPy .npz with a JSON 'meta' entry): {exc}"
        ) from None
    if meta.get("format") != MODEL_FORMAT:
        raise ModelFormatError(f"{path} is not a dsvm model (format {meta.get('format')!r}).")
    if int(meta.get("version", -1)) > MODEL_VERSION:
        raise ModelFormatError(
            f"{path} was written by a newer dsvm (model format version {meta['version']}; "
            f"this dsvm reads up to {MODEL_VERSION}). Upgrade dsvm."
        )
    for k, a in arrays.items():
        if a.dtype.kind not in "fiuU":  # numbers, or fixed-width text labels (no pickle)
            raise ModelFormatError(f"{path}: array {k!r} has dtype {a.dtype}, not numeric or text.")
    return arrays, meta


def load(path: str | os.PathLike) -> Any:
    """Load a model saved with ``estimator.save(path)``; returns the fitted estimator."""
    from dsvm.estimators import estimator_from_saved

    arrays, meta = load_model_arrays(path)
    return estimator_from_saved(arrays, meta)
