"""Detached jobs on real processes: the driver runs on the cluster, the submitting client goes
away, another client (or the shell) attaches, follows the history and gets the model."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

import dsvm

pytestmark = [pytest.mark.distributed, pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("jobs")
    return dsvm.write_synthetic(root / "s.zarr", 40_000, 10, chunk_rows=2000, seed=1)


def _dsvm(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "dsvm", *args], capture_output=True, text=True,
                          timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def _clf(**kw):
    params = dict(max_epochs=3, tol=None, random_state=0, n_streams=2)
    params.update(kw)
    return dsvm.SVMClassifier(**params)


def test_submit_then_attach_from_another_client(process_cluster, dataset, tmp_path):
    from distributed import Client

    direct = _clf(client=process_cluster.address).fit(dataset)
    out = tmp_path / "job.dsvm"
    with Client(process_cluster.address) as submitter:
        # an estimator holding the notebook's live client: the job uses the cluster's own
        job = dsvm.submit(_clf(client=submitter), dataset, client=submitter, out=str(out))
        job_id = job.id
    # the submitting client is gone; the job lives on the scheduler
    with Client(process_cluster.address) as client:
        job = dsvm.attach(job_id, client=client)
        fitted = job.result(timeout=120)
        assert job.status == "finished" and job.epoch == 3
        assert [h["epoch"] for h in job.history()] == [1, 2, 3]
        assert job_id in [r["id"] for r in dsvm.jobs(client)]
        assert "finished" in job._repr_html_()
        with pytest.raises(ValueError, match="No dsvm job 'nope'"):
            dsvm.attach("nope", client=client)
    # the job ran the same fit as the notebook would have: the same model
    np.testing.assert_array_equal(fitted.coef_, direct.coef_)
    np.testing.assert_array_equal(dsvm.load(out).coef_, direct.coef_)


def test_shell_detach_jobs_attach(process_cluster, dataset, tmp_path):
    addr = process_cluster.address
    proc = _dsvm("train", str(dataset.url), "--out", str(tmp_path / "m.dsvm"), "--epochs", "2",
                 "--seed", "0", "--streams", "2", "--scheduler", addr, "--detach")
    job_id = proc.stdout.strip().splitlines()[0]
    listing = _dsvm("jobs", "--scheduler", addr).stdout
    assert job_id in listing
    attached = _dsvm("attach", job_id, "--scheduler", addr, "--out", str(tmp_path / "a.dsvm"),
                     "--timeout", "100")
    assert "epoch   2" in attached.stdout and "saved" in attached.stdout
    expected = _clf(max_epochs=2, client=addr).fit(dataset).coef_
    np.testing.assert_array_equal(dsvm.load(tmp_path / "m.dsvm").coef_, expected)
    np.testing.assert_array_equal(dsvm.load(tmp_path / "a.dsvm").coef_, expected)
    from dsvm.cli import main

    assert main(["attach", "nope", "--scheduler", addr]) == 2  # "No dsvm job 'nope' ..."
    # another model at --out is replaced only with --overwrite, as everywhere else (it was
    # replaced silently), and checked before the job is followed
    again = _dsvm("attach", job_id, "--scheduler", addr, "--out", str(tmp_path / "a.dsvm"),
                  check=False)
    assert again.returncode == 2 and "already exists; pass --overwrite" in again.stderr
    _dsvm("attach", job_id, "--scheduler", addr, "--out", str(tmp_path / "a.dsvm"),
          "--overwrite")
    # cancelling a finished job said "cancelled ... (it stops after its current epoch)"
    cancelled = _dsvm("cancel", job_id, "--scheduler", addr).stdout
    assert f"dsvm job {job_id} had finished already: its result is dropped" in cancelled


def test_submit_checks_first_what_would_fail_the_job_on_the_cluster(process_cluster, dataset,
                                                                     tmp_path, monkeypatch):
    """``out=`` a dataset ran the whole fit, then failed to save (the model lost); a missing
    validation set or a bad parameter failed on the cluster; a relative ``validation`` path
    was resolved in the worker's directory (X, out and checkpoint were resolved here)."""
    from distributed import Client

    monkeypatch.chdir(os.path.dirname(dataset.url))
    data = os.path.basename(dataset.url)
    with Client(process_cluster.address) as client:
        before = len(dsvm.jobs(client))
        with pytest.raises(ValueError, match="is the input .* dsvm never overwrites an input"):
            dsvm.submit(_clf(), data, client=client, out=data)
        with pytest.raises(FileNotFoundError, match="No dataset at .*nothere.zarr"):
            dsvm.submit(_clf(), data, client=client, validation="nothere.zarr")
        with pytest.raises(ValueError, match="'alpha' parameter"):
            dsvm.submit(_clf(alpha=-1.0), data, client=client)
        assert len(dsvm.jobs(client)) == before  # none of them was submitted
        job = dsvm.submit(_clf(max_epochs=1), data, client=client, validation=data,
                          out=str(tmp_path / "v.dsvm"))
        assert job.result(timeout=120).history_[-1]["val_accuracy"] > 0.5


def test_cancel_stops_a_running_job(process_cluster, dataset):
    from distributed import Client

    addr = process_cluster.address
    with Client(addr) as client:
        job = dsvm.submit(_clf(max_epochs=10_000), dataset, client=client)
        deadline = time.monotonic() + 60
        while job.epoch < 1:
            assert time.monotonic() < deadline, job.info()
            time.sleep(0.2)
        _dsvm("cancel", job.id, "--scheduler", addr)
        assert job.status == "cancelled"
        # the fit notices after its current epoch and the cluster goes idle
        deadline = time.monotonic() + 30
        while any(client.processing().values()):
            assert time.monotonic() < deadline, client.processing()
            time.sleep(0.2)
        epoch = job.epoch
        time.sleep(1.0)
        assert job.epoch == epoch < 10_000


def test_job_survives_the_death_of_its_worker(dataset, tmp_path):
    """The worker running the job's driver is SIGKILLed: the scheduler re-runs the job on the
    survivor, which resumes from the checkpoint and ends with the uninterrupted fit's model."""
    import os
    import signal

    from distributed import Client

    from tests.conftest import ProcessCluster

    cluster = ProcessCluster(n_workers=2, memory_limit="1GiB")
    try:
        with Client(cluster.address) as client:
            expected = _clf(max_epochs=4, client=client).fit(dataset)
            pids = client.run(os.getpid)
            ckpt = tmp_path / "job.ckpt"
            job = dsvm.submit(_clf(max_epochs=4, checkpoint=str(ckpt)), dataset, client=client)
            deadline = time.monotonic() + 60
            while job.epoch < 2:
                assert time.monotonic() < deadline, job.info()
                time.sleep(0.05)
            info = job.info()
            runner, before = info["worker"], list(info["history"])
            os.kill(pids[runner], signal.SIGKILL)
            fitted = job.result(timeout=120)
            assert job.info()["worker"] != runner  # re-run elsewhere
            assert fitted.n_iter_ == 4
            # it resumed: the epochs before the kill come from the checkpoint, not a re-run
            # (a re-run would have measured different epoch times)
            assert fitted.history_[:len(before)] == before
            assert dsvm.load_checkpoint(ckpt).epoch == 4
            np.testing.assert_array_equal(fitted.coef_, expected.coef_)
    finally:
        cluster.close()


def test_a_failed_fit_ends_failed_and_saves_nothing(process_cluster, tmp_path):
    """A detached fit no better than a constant model (a column of ~1e9 values: unscaled) is
    not saved as if it succeeded: the job ends "failed" with the reason, and only
    keep_failed=True writes the model."""
    from distributed import Client

    rng = np.random.default_rng(2)
    X = rng.normal(size=(4000, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=4000) > 0, 1.0, -1.0)
    X[:, 3] = rng.normal(scale=1e9, size=4000)
    unscaled = dsvm.write_arrays(tmp_path / "u.zarr", X, y, chunk_rows=1000)
    with Client(process_cluster.address) as client:
        for keep in (False, True):
            out = tmp_path / f"model-{keep}.dsvm"
            job = dsvm.submit(_clf(max_epochs=2, solver="pegasos", scale=False), unscaled,
                              client=client, out=str(out),
                              keep_failed=keep)
            fitted = job.result(timeout=120)
            assert fitted.outcome_.failed
            info = job.info()
            assert info["status"] == "failed" and "the fit failed" in info["error"]
            assert out.exists() == keep
