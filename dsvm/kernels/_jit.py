"""The one place where numba compile options are chosen (see :mod:`dsvm._config`).

Every ``@njit`` in dsvm goes through :func:`njit_serial`, :func:`njit_inline` or
:func:`njit_parallel`, and every ``@overload`` gets :func:`overload_options`; a test greps the
package for the keyword ``fastmath=`` anywhere else.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import numba

from dsvm import _config

FASTMATH: frozenset[str] = _config.fastmath_flags()
CACHE: bool = _config.numba_cache()

_KERNELS_DIR = Path(__file__).resolve().parent
_FINGERPRINT = "dsvm-kernels.fingerprint"


def _sources_digest() -> str:
    h = hashlib.sha256()
    for path in sorted([*_KERNELS_DIR.glob("*.py"), _KERNELS_DIR.parent / "_config.py"]):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    h.update(repr(sorted(FASTMATH)).encode())
    return h.hexdigest()


def drop_stale_cache() -> bool:
    """Delete cached kernels compiled from other sources than the current ones.

    Numba keys a cached function on its own file's timestamp only, so editing (or checking out)
    a helper module such as ``dense.py`` would leave kernels in ``passes.py`` running stale
    machine code. A fingerprint of every kernel source (and the fastmath flags) is kept next
    to the cache; when it differs, the cache files are removed and numba recompiles. Returns
    whether anything was dropped. Only the in-tree ``__pycache__`` is managed; installed
    packages change all their files together.
    """
    cache_dir = _KERNELS_DIR / "__pycache__"
    try:
        digest = _sources_digest()
        stamp = cache_dir / _FINGERPRINT
        if stamp.exists() and stamp.read_text() == digest:
            return False
        dropped = False
        for path in [*cache_dir.glob("*.nbi"), *cache_dir.glob("*.nbc")]:
            path.unlink(missing_ok=True)
            dropped = True
        cache_dir.mkdir(exist_ok=True)
        tmp = cache_dir / f"{_FINGERPRINT}.{os.getpid()}.tmp"
        tmp.write_text(digest)
        tmp.replace(stamp)  # atomic: concurrent importers agree on one fingerprint
        return dropped
    except OSError:  # read-only install or a race with another process: numba copes
        return False


if CACHE:
    drop_stale_cache()


def jit_options(**overrides: Any) -> dict[str, Any]:
    """Options shared by all dsvm kernels: fastmath from config, GIL released, disk cache.

    ``error_model="numpy"``: a float division by zero gives inf/NaN (caught by the solvers'
    once-per-pass finiteness check) instead of raising inside a GIL-free loop, and spares a
    zero test on every division.
    """
    opts: dict[str, Any] = {
        "fastmath": set(FASTMATH) if FASTMATH else False,
        "nogil": True,
        "error_model": "numpy",
        "cache": CACHE,
    }
    opts.update(overrides)
    return opts


def overload_options() -> dict[str, Any]:
    """Keyword arguments for ``numba.extending.overload``: the same fastmath flags.

    Overload bodies are inlined into their caller (and cached with it), so only the code
    generation flags apply here.
    """
    return {
        "jit_options": {"fastmath": set(FASTMATH) if FASTMATH else False},
        "inline": "always",
    }


def njit_serial(func: Callable[..., Any] | None = None, **overrides: Any) -> Any:
    """``numba.njit`` for serial kernels: one training task per worker core, GIL released.

    Use bare (``@njit_serial``), with an eager signature (``@njit_serial("float64(float64)")``,
    for tiny hot leaves only) or with extra options (``@njit_serial(inline="always")``).
    """
    return _decorate(func, jit_options(**overrides))


def njit_inline(func: Callable[..., Any] | None = None, **overrides: Any) -> Any:
    """:func:`njit_serial` with numba-level inlining into every caller (``inline="always"``).

    For the per-row leaves of the pass kernels (row dot/axpy, losses, scale updates). Numba does
    not inline across separately compiled functions on its own, and a call that passes arrays
    unpacks each into ~7 machine words: at a few calls per row that overhead was larger than
    the arithmetic of a 100-feature row.
    """
    return _decorate(func, jit_options(inline="always", **overrides))


def njit_exact(func: Callable[..., Any] | None = None, **overrides: Any) -> Any:
    """:func:`njit_serial` without fast-math flags, whatever ``DSVM_FASTMATH`` says: for
    kernels that stand in for NumPy expressions and must give their values bit for bit (a
    contracted multiply-add, or a reassociated sum, rounds differently)."""
    return _decorate(func, jit_options(fastmath=False, **overrides))


def njit_parallel(func: Callable[..., Any] | None = None, **overrides: Any) -> Any:
    """``numba.njit(parallel=True)`` variants, compiled separately from the serial ones.

    Only for code whose ``prange`` loops write per-thread buffers merged serially afterwards
    (no shared writes); callers pick the variant through a getter, never both at once.
    """
    return _decorate(func, jit_options(parallel=True, **overrides))


def _decorate(func: Any, opts: dict[str, Any]) -> Any:
    if func is None:
        return lambda f: _compiles_locked(numba.njit(**opts)(f))
    if isinstance(func, (str, tuple, list)):  # eager signature(s)
        return lambda f: _compiles_locked(numba.njit(func, **opts)(f))
    return _compiles_locked(numba.njit(**opts)(func))


def _compiles_locked(dispatcher: Any) -> Any:
    """``dispatcher`` compiling each new specialisation for a call from Python under a lock
    that every process of this machine takes (with the disk cache on).

    The two workers of a cluster run the same tasks at the same moment, so without it each
    compiled every new pass kernel variant itself, both at once (9-10 s each on a cold cache):
    a third of the suite's compiling was the same variant compiled twice. With the lock the
    second process waits for the first and loads its result from the cache. Numba's C
    dispatcher looks ``_compile_for_args`` up on the dispatcher only when no compiled
    specialisation matches the call, so a call that matches costs nothing more (the lock used
    to be taken by a wrapper that typed every argument of every call first: 0.3 ms a call, a
    quarter of scikit-learn's estimator checks). A jitted caller compiles its callees itself,
    under its own lock.

    The lock is the specialisation's (:func:`specialisation_name`), not the kernel's: with one
    lock per kernel, a process compiling ``sgd_pass`` for CSR float64 rows waited 30 s while a
    cluster's worker compiled it for CSR float32, one core idle, and then compiled its own."""
    compile_for_args = getattr(dispatcher, "_compile_for_args", None)
    if not CACHE or compile_for_args is None:  # (a plain function with NUMBA_DISABLE_JIT=1)
        return dispatcher

    def locked(*args: Any, **kwargs: Any) -> Any:
        with _compile_lock(specialisation_name(dispatcher, args)):
            return compile_for_args(*args, **kwargs)

    dispatcher._compile_for_args = locked
    return dispatcher


def specialisation_name(dispatcher: Any, args: tuple[Any, ...]) -> str:
    """The kernel's name and a digest of the numba types of ``args``: the specialisation a
    call from Python compiles, which names its compile lock (typing the arguments costs
    microseconds, and only a call that compiles pays it)."""
    types = ", ".join(str(dispatcher.typeof_pyval(a)) for a in args)
    digest = hashlib.sha256(types.encode()).hexdigest()[:16]
    return f"{dispatcher.py_func.__qualname__}.{digest}"


# A fit's first compilation is its stochastic pass kernels (passes.py; compiled lazily, unlike
# the eager loss leaves, which import compiles): numba writes an index file (.nbi) for each
# function it caches, so while there is none for them, the next fit compiles.
_FIRST_FIT_INDEX = "passes.*.nbi"


def kernels_not_compiled(cache_dir: Path | None = None) -> bool:
    """Whether the next fit compiles dsvm's kernels first (a minute or two), for a command to
    say so before it starts: the disk cache (``cache_dir``, default this package's
    ``__pycache__``) is on and holds no compiled pass kernel. One glob, nothing compiled.

    False when that cannot be known cheaply: with ``DSVM_NUMBA_CACHE=0`` (every process
    compiles), ``NUMBA_CACHE_DIR`` set, or a read-only install (numba caches elsewhere).
    """
    if not CACHE or numba.config.CACHE_DIR:
        return False
    folder = cache_dir if cache_dir is not None else _KERNELS_DIR / "__pycache__"
    if folder.exists() and not os.access(folder, os.W_OK):
        return False
    if not folder.exists() and not os.access(folder.parent, os.W_OK):
        return False
    return not any(folder.glob(_FIRST_FIT_INDEX))


@contextlib.contextmanager
def _compile_lock(name: str) -> Iterator[None]:
    try:
        folder = Path(numba.config.CACHE_DIR or _KERNELS_DIR / "__pycache__")
        folder.mkdir(exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise OSError(folder)
    except OSError:  # a read-only install: a folder of this user's in the temporary one
        folder = Path(tempfile.gettempdir()) / f"dsvm-compile-{os.getuid()}"
        folder.mkdir(exist_ok=True)
    with open(folder / f"{name}.compile-lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released by the kernel when a process dies
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
