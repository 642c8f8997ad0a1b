"""Process-wide settings: numba compile policy (fastmath flags, on-disk cache), with env overrides.

Everything here is read once, when :mod:`dsvm.kernels._jit` is imported, because numba bakes
these options into the compiled (and cached) machine code. To change them, set the environment
variables before the first ``import dsvm.kernels...``:

``DSVM_FASTMATH``
    ``"1"``/``"true"`` (the default flag set), ``"0"``/``"false"``/``""`` (strict IEEE), or a
    comma-separated list of LLVM fast-math flags, e.g. ``"reassoc,contract"``.
``DSVM_NUMBA_CACHE``
    ``"1"`` (default) caches compiled kernels next to their source (``__pycache__``);
    ``"0"`` compiles in memory on every process start.

Why these default flags: ``reassoc`` lets LLVM reorder the sums in row dot products, which is
what makes contiguous float32/float64 dots vectorise; ``contract`` allows fused multiply-adds;
``nsz``/``arcp`` are harmless here. ``nnan``/``ninf`` are deliberately *not* on: the solvers rely
on NaN/inf propagating so that their once-per-pass finiteness check can see a diverged run.
``afn`` (approximate exp/log) is off so that the logistic loss matches NumPy to rounding.
"""

from __future__ import annotations

import os

DEFAULT_FASTMATH: frozenset[str] = frozenset({"reassoc", "contract", "nsz", "arcp"})
_KNOWN_FLAGS = frozenset({"nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc", "fast"})


def _parse_bool(name: str, value: str) -> bool:
    v = value.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"{name}={value!r} is not a boolean; use 1 or 0.")


def _parse_fastmath(value: str | None) -> frozenset[str]:
    if value is None:
        return DEFAULT_FASTMATH
    v = value.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return DEFAULT_FASTMATH
    if v in ("0", "false", "no", "off", ""):
        return frozenset()
    flags = frozenset(f.strip() for f in v.split(",") if f.strip())
    unknown = sorted(flags - _KNOWN_FLAGS)
    if unknown:
        raise ValueError(
            f"DSVM_FASTMATH={value!r} names unknown flags {unknown}; "
            f"expected 1, 0 or a comma-separated subset of {sorted(_KNOWN_FLAGS)}."
        )
    return flags


def fastmath_flags() -> frozenset[str]:
    """The LLVM fast-math flags kernels are compiled with (``DSVM_FASTMATH`` overrides)."""
    return _parse_fastmath(os.environ.get("DSVM_FASTMATH"))


def numba_cache() -> bool:
    """Whether compiled kernels are cached on disk (``DSVM_NUMBA_CACHE`` overrides)."""
    value = os.environ.get("DSVM_NUMBA_CACHE")
    return True if value is None else _parse_bool("DSVM_NUMBA_CACHE", value)
