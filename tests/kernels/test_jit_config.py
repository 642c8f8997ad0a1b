"""Compile policy: one place for fastmath/cache flags, env overrides, and vectorised dots."""

from __future__ import annotations

import re
from pathlib import Path

import numba
import numpy as np
import pytest

import dsvm
from dsvm import _config
from dsvm.kernels import _jit
from dsvm.kernels.passes import pegasos_pass, sgd_pass

PACKAGE = Path(dsvm.__file__).resolve().parent


def test_fastmath_is_only_set_in_jit_module():
    """stumpy's lint: no ``fastmath=`` outside kernels/_jit.py, so config decides alone."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "kernels" / "_jit.py":
            continue
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"fastmath\s*=", line):
                offenders.append(f"{path.relative_to(PACKAGE)}:{lineno}: {line.strip()}")
    assert not offenders, "fastmath= set outside dsvm/kernels/_jit.py:\n" + "\n".join(offenders)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="plain functions with NUMBA_DISABLE_JIT=1")
def test_kernels_use_the_configured_options():
    for kernel in (pegasos_pass, sgd_pass):
        opts = kernel.targetoptions
        assert opts["nogil"] is True
        cached = type(kernel._cache).__name__ != "NullCache"
        assert cached is _jit.CACHE
        expected = set(_jit.FASTMATH) if _jit.FASTMATH else False
        assert opts["fastmath"] == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, _config.DEFAULT_FASTMATH),
        ("1", _config.DEFAULT_FASTMATH),
        ("true", _config.DEFAULT_FASTMATH),
        ("0", frozenset()),
        ("", frozenset()),
        ("reassoc, contract", frozenset({"reassoc", "contract"})),
    ],
)
def test_fastmath_env_override(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("DSVM_FASTMATH", raising=False)
    else:
        monkeypatch.setenv("DSVM_FASTMATH", value)
    assert _config.fastmath_flags() == expected


def test_fastmath_env_rejects_unknown_flags(monkeypatch):
    monkeypatch.setenv("DSVM_FASTMATH", "reassoc,turbo")
    with pytest.raises(ValueError, match=r"unknown flags \['turbo'\]"):
        _config.fastmath_flags()


def test_cache_env_override(monkeypatch):
    monkeypatch.delenv("DSVM_NUMBA_CACHE", raising=False)
    assert _config.numba_cache() is True
    monkeypatch.setenv("DSVM_NUMBA_CACHE", "0")
    assert _config.numba_cache() is False
    monkeypatch.setenv("DSVM_NUMBA_CACHE", "maybe")
    with pytest.raises(ValueError, match="DSVM_NUMBA_CACHE='maybe' is not a boolean"):
        _config.numba_cache()


def test_default_flags_keep_nan_and_inf_semantics():
    # The once-per-pass finiteness check relies on NaN/inf propagating through the kernels.
    assert not {"nnan", "ninf", "fast"} & _config.DEFAULT_FASTMATH


@pytest.mark.skipif("reassoc" not in _jit.FASTMATH, reason="vectorised sums need reassoc")
@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="no machine code with NUMBA_DISABLE_JIT=1")
def test_float32_dense_dot_vectorises():
    """The float32 row dot compiles to packed single-precision arithmetic."""
    from dsvm.kernels.dense import dense_row_dot

    # A non-cached wrapper, so that its machine code can be inspected.
    probe = _jit.njit_serial(cache=False)(lambda X, W: dense_row_dot(X, 0, W, 0))
    X = np.ones((1, 64), np.float32)
    W = np.ones((1, 64), np.float32)
    assert probe(X, W) == 64.0
    asm = probe.inspect_asm(probe.signatures[0])
    packed = re.findall(r"\bv?(?:fmadd\d+ps|mulps|addps)\b", asm)
    assert packed, "no packed float32 arithmetic in the dense row dot"


@pytest.mark.skipif(not _jit.CACHE, reason="the disk cache is off")
def test_cache_fingerprint_matches_current_sources():
    """After import the fingerprint describes these sources: nothing is dropped again."""
    assert _jit.drop_stale_cache() is False
    stamp = Path(_jit.__file__).parent / "__pycache__" / "dsvm-kernels.fingerprint"
    assert stamp.read_text() == _jit._sources_digest()


_RACE = """
import sys, time
from pathlib import Path
import numpy as np
from dsvm.kernels.combine import weighted_mean
go = Path(sys.argv[1])
Path(sys.argv[2]).touch()  # imported
while not go.exists():  # both processes start compiling at the same moment
    time.sleep(0.01)
out = np.zeros(4)
weighted_mean((np.ones(4), np.ones(4)), np.ones(2), np.zeros(0), 0.0, 0.0, 2.0, out)
assert out.tolist() == [1.0] * 4
stats = weighted_mean.stats
print(sum(stats.cache_misses.values()), sum(stats.cache_hits.values()))
"""


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="nothing compiles with NUMBA_DISABLE_JIT=1")
def test_processes_compiling_the_same_variant_at_once_compile_it_once(tmp_path):
    """Two processes (a cluster's two workers starting the same task) asking for a variant no
    cache holds: one compiles it, the other waits for the lock and loads it from the cache."""
    import os
    import subprocess
    import sys
    import time

    go = tmp_path / "go"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "DSVM_NUMBA_CACHE": "1"}
    ready = [tmp_path / f"ready{i}" for i in range(2)]
    procs = [subprocess.Popen([sys.executable, "-c", _RACE, str(go), str(flag)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for flag in ready]
    deadline = time.monotonic() + 120
    while not all(flag.exists() for flag in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        results.append(tuple(int(v) for v in out.split()))
    # (misses, hits) of the kernel's disk cache in each process: one compiled, one loaded
    assert sorted(results) == [(0, 1), (1, 0)], results


@_jit.njit_serial
def _add_one(x):
    return x + 1


@pytest.mark.skipif(numba.config.DISABLE_JIT or not _jit.CACHE,
                    reason="the lock is taken only by compiled kernels with the disk cache on")
def test_a_compile_from_python_takes_the_machine_wide_lock(tmp_path, monkeypatch):
    """Each dsvm kernel compiles a new specialisation for a call from Python under an fcntl
    lock of that specialisation (kernels/_jit.py: the workers of a cluster would compile it at
    the same moment); a call that matches a compiled one never takes it, and another
    specialisation of the same kernel does not wait for it."""
    import fcntl
    import threading

    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))  # where the locks live
    x = np.arange(3.0)
    lock = tmp_path / f"{_jit.specialisation_name(_add_one, (x,))}.compile-lock"
    assert lock.name.startswith(f"{_add_one.py_func.__qualname__}.")
    done = []
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as another process compiling it would
        caller = threading.Thread(target=lambda: done.append(_add_one(x)))
        caller.start()
        caller.join(1.0)
        assert caller.is_alive() and not done  # waiting for the lock, not compiling
        # another specialisation (int64) compiles meanwhile
        assert _add_one(np.arange(2)).tolist() == [1, 2]
        fcntl.flock(held, fcntl.LOCK_UN)
    caller.join(60)
    assert not caller.is_alive() and done[0].tolist() == [1.0, 2.0, 3.0]
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert _add_one(np.arange(2.0)).tolist() == [1.0, 2.0]  # compiled: no lock wanted
