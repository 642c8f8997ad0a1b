"""`dsvm train --checkpoint/--resume` against separate-process workers."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import dsvm

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(180)]


def _dsvm(*args):
    return subprocess.run([sys.executable, "-m", "dsvm", *args], capture_output=True, text=True,
                          timeout=120)


def test_train_resume_equals_uninterrupted(process_cluster, tmp_path):
    ds = dsvm.write_synthetic(tmp_path / "s.zarr", 20_000, 10, chunk_rows=2000, seed=3)
    common = [str(ds.url), "--seed", "0", "--streams", "2", "--quiet", "--solver", "sgd",
              "--scheduler", process_cluster.address]
    ckpt = tmp_path / "fit.ckpt"
    for epochs in ("2", "4"):
        # the second run replaces the first run's model: --overwrite, or it refuses (#14)
        extra = ["--resume", "--overwrite"] if epochs == "4" else []
        proc = _dsvm("train", *common, "--out", str(tmp_path / "r.dsvm"), "--epochs", epochs,
                     "--checkpoint", str(ckpt), *extra)
        assert proc.returncode == 0, proc.stderr
        assert dsvm.load_checkpoint(ckpt).epoch == int(epochs)
    # the uninterrupted fit with the CLI's settings
    full = dsvm.SVMClassifier(solver="sgd", max_epochs=4, tol=None, random_state=0, n_streams=2,
                              client=process_cluster.address).fit(ds)
    resumed = dsvm.load(tmp_path / "r.dsvm")
    np.testing.assert_array_equal(resumed.coef_, full.coef_)
    assert len(resumed.history_) == 4


def test_resume_needs_a_checkpoint(tmp_path, capsys):
    from dsvm.cli import main

    ds = dsvm.write_synthetic(tmp_path / "s.zarr", 100, 3, seed=0)
    assert main(["train", str(ds.url), "--out", str(tmp_path / "m"), "--resume"]) == 2
    assert "--resume needs --checkpoint" in capsys.readouterr().err
