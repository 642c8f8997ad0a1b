"""NESVM with checkpoint and resume (#26's capability matrix: it refused both). The run's whole
state (the iterate, Eq. 33-35's running sums, theta^k-1, the step factor and its safeguard, the
homotopy stage) is written after every pass, and a fit stopped after pass 2 goes on to the
model the uninterrupted fit makes, bit for bit, in Python and from the CLI."""

from __future__ import annotations

import numpy as np
import pytest

import dsvm
from dsvm.engine.hooks import epoch_hook


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 12))
    y = np.where(X @ rng.normal(size=12) + 0.5 * rng.normal(size=3000) > 0, 1, -1)
    return X, y


def _nesvm(**kw):
    params = dict(solver="nesvm", alpha=1e-3, max_epochs=12, tol=None, chunk_rows=500,
                  n_streams=2, random_state=0)
    params.update(kw)
    return dsvm.SVMClassifier(**params)


def _stop_during_pass(n):
    def hook(spec, state, history, converged):  # noqa: ANN001, ANN202
        if len(history) == n:
            raise KeyboardInterrupt(f"the driver stops during pass {n}")

    return hook


@pytest.mark.parametrize("kw", [{}, {"mu0": 0.3}, {"fit_intercept": False, "mu": 0.01}],
                         ids=["plain", "homotopy", "no-intercept"])
def test_a_stopped_nesvm_fit_resumes_to_the_uninterrupted_model(problem, tmp_path, kw):
    X, y = problem
    whole = _nesvm(**kw).fit(X, y)
    ckpt = tmp_path / "nesvm.ckpt"
    with epoch_hook(_stop_during_pass(3)), pytest.raises(KeyboardInterrupt):
        _nesvm(checkpoint=ckpt, **kw).fit(X, y)
    assert dsvm.load_checkpoint(ckpt).epoch == 2  # written after pass 2
    resumed = _nesvm(checkpoint=ckpt, **kw).fit(X, y, resume=True)
    assert resumed.n_iter_ == whole.n_iter_ == 12
    np.testing.assert_array_equal(resumed.coef_, whole.coef_)
    np.testing.assert_array_equal(resumed.intercept_, whole.intercept_)
    assert [h["objective"] for h in resumed.history_] == [h["objective"]
                                                          for h in whole.history_]
    assert dsvm.load_checkpoint(ckpt).epoch == 12


def test_a_converged_checkpoint_returns_its_model_without_a_pass(problem, tmp_path):
    X, y = problem
    ckpt = tmp_path / "done.ckpt"
    first = _nesvm(tol=1e-2, max_epochs=60, checkpoint=ckpt).fit(X, y)
    assert first.n_iter_ < 60 and dsvm.load_checkpoint(ckpt).converged
    again = _nesvm(tol=1e-2, max_epochs=60, checkpoint=ckpt).fit(X, y, resume=True)
    np.testing.assert_array_equal(again.coef_, first.coef_)
    assert again.n_iter_ == first.n_iter_


def test_a_checkpoint_of_another_mu0_is_refused(problem, tmp_path):
    X, y = problem
    ckpt = tmp_path / "m.ckpt"
    _nesvm(max_epochs=2, checkpoint=ckpt).fit(X, y)
    with pytest.raises(ValueError, match="mu0"):
        _nesvm(mu0=0.3, checkpoint=ckpt).fit(X, y, resume=True)


@pytest.mark.distributed
def test_cli_nesvm_resumes_on_a_cluster_to_the_uninterrupted_model(process_cluster, tmp_path):
    import subprocess
    import sys

    ds = dsvm.write_synthetic(tmp_path / "s.zarr", 20_000, 10, chunk_rows=2000, seed=3)
    common = [str(ds.url), "--seed", "0", "--streams", "2", "--quiet", "--solver", "nesvm",
              "--tol", "none", "--scheduler", process_cluster.address]
    ckpt = tmp_path / "fit.ckpt"
    for epochs, extra in (("2", []), ("6", ["--resume", "--overwrite"])):
        proc = subprocess.run([sys.executable, "-m", "dsvm", "train", *common, "--out",
                               str(tmp_path / "r.dsvm"), "--epochs", epochs, "--checkpoint",
                               str(ckpt), *extra], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert dsvm.load_checkpoint(ckpt).epoch == int(epochs)
    full = dsvm.SVMClassifier(solver="nesvm", max_epochs=6, tol=None, random_state=0,
                              n_streams=2, client=process_cluster.address).fit(ds)
    resumed = dsvm.load(tmp_path / "r.dsvm")
    np.testing.assert_array_equal(resumed.coef_, full.coef_)
    assert len(resumed.history_) == 6
