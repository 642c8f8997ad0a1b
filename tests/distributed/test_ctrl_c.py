"""Ctrl-C in a terminal sends SIGINT to the whole foreground process group: the command, and
the forkserver and worker processes of dsvm's own LocalCluster. It printed a KeyboardInterrupt
traceback from every worker (and one from the server, or distributed's failed close of a
cluster interrupted while it started) below ``dsvm train: interrupted``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import dsvm
from dsvm.distributed.client import interrupts_after

pytestmark = [pytest.mark.distributed, pytest.mark.slow, pytest.mark.timeout(180)]


def _in_a_terminal(*args: str, cwd) -> subprocess.Popen:
    """``dsvm ARGS`` as a terminal runs it: a process group of its own, SIGINT not ignored (a
    shell's background jobs ignore it)."""
    return subprocess.Popen([sys.executable, "-m", "dsvm", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_ctrl_c_during_a_fit_on_dsvms_own_cluster_is_one_line(tmp_path):
    dsvm.write_synthetic(tmp_path / "d.zarr", 200_000, 20, chunk_rows=5000, seed=0)
    proc = _in_a_terminal("train", "d.zarr", "--out", "m.dsvm", "--workers", "2", "--solver",
                          "sgd", "--epochs", "2000", "--tol", "none", cwd=tmp_path)
    said = []
    # Until the third epoch's line: the workers are then in their passes, every kernel of an
    # epoch compiled (the pass in epoch 1, the probe of its model in epoch 2). (Interrupted
    # while they compiled, as on a fresh machine, a worker holding the GIL for its 10-20 s
    # compile answered its close late, and the compile was lost to the rest of the suite: 61 s
    # for this test in a fresh-clone run against 13 s, waiting for epoch 1's line; and once,
    # on a loaded machine, no exit within the 60 s below.)
    for line in proc.stderr:
        said.append(line)
        if line.startswith("epoch   3"):
            break
    assert said and said[-1].startswith("epoch   3"), "".join(said)
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGINT)  # the command, the forkserver and the workers
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.splitlines()[-1] == "dsvm train: interrupted" and "Traceback" not in err, err
    assert not (tmp_path / "m.dsvm").exists()
    for _ in range(40):  # (the forkserver and the resource tracker see their parent go)
        left = subprocess.run(["pgrep", "-a", "-s", str(proc.pid)], capture_output=True,
                              text=True).stdout
        if not left:
            break
        time.sleep(0.25)
    assert left == "", f"processes of the command left running: {left}"


def test_an_interrupt_while_a_cluster_starts_comes_once_it_has_started():
    """The start itself is not cut: a cluster half made was left to distributed's exit
    handler, which failed to close it (AssertionError: Status.init)."""
    done = []
    # (as in a command or a notebook; a pytest-xdist worker ignores SIGINT, and there nothing
    # is deferred)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupts_after():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.2)  # (a signal is handled between bytecodes: it has come now)
                done.append(True)
        assert done == [True]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)
