"""Training on a LocalCluster of worker processes: zarr datasets and dask arrays."""

from __future__ import annotations

import time

import dask.array as da
import numpy as np
import pytest

import dsvm
from dsvm import SVMClassifier

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6000, 12))
    w = rng.normal(size=12)
    y = np.where(X @ w + 0.5 + 0.3 * rng.normal(size=6000) > 0, 1.0, -1.0)
    return X, y


def test_one_chunk_on_one_worker_equals_in_process(problem, tmp_path, local_client):
    X, y = problem
    ds = dsvm.write_arrays(tmp_path / "one.zarr", X, y, chunk_rows=len(X), dtype="float64")
    assert ds.n_chunks == 1
    kw = dict(solver="sgd", alpha=1e-4, max_epochs=3, tol=None, random_state=11, n_streams=1)
    remote = SVMClassifier(client=local_client, **kw).fit(ds)
    local = SVMClassifier(chunk_rows=len(X), **kw).fit(X, y)
    np.testing.assert_array_equal(remote.coef_, local.coef_)
    np.testing.assert_array_equal(remote.intercept_, local.intercept_)


def test_many_chunks_two_streams_deterministic_and_equal_to_in_process(problem, tmp_path,
                                                                       local_client):
    X, y = problem
    ds = dsvm.write_arrays(tmp_path / "many.zarr", X, y, chunk_rows=500, dtype="float64")
    kw = dict(alpha=1e-4, max_epochs=4, tol=None, random_state=2, n_streams=2)
    a = SVMClassifier(client=local_client, **kw).fit(ds)
    b = SVMClassifier(client=local_client, **kw).fit(str(ds.url))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # The same streams run in-process give the same model: the cluster changes nothing.
    local = SVMClassifier(chunk_rows=500, **kw).fit(X, y)
    np.testing.assert_allclose(a.coef_, local.coef_, rtol=1e-12, atol=1e-12)
    assert a.score(ds) > 0.9
    assert [h["n_rows"] for h in a.history_] == [6000] * 4


def test_epochs_run_ahead_but_never_past_the_one_that_stops_the_fit(problem, tmp_path,
                                                                    local_client, monkeypatch):
    """On a cluster the next epoch is submitted while one runs (training.loop.RUN_AHEAD),
    only when it will run anyway: a fit that stops on ``tol`` submits no epoch after the one
    that stops it, and gives the model of the same fit in this process."""
    from dsvm.training import loop

    X, y = problem
    ds = dsvm.write_arrays(tmp_path / "stops.zarr", X, y, chunk_rows=500, dtype="float64")
    events: list[str] = []
    submit, record = loop.submit_epoch, loop.epoch_record

    def submitted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        events.append(f"submit {args[7] + 1}")
        return submit(*args, **kwargs)

    def recorded(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        out = record(*args, **kwargs)
        events.append(f"record {out['epoch']}")
        return out

    monkeypatch.setattr(loop, "submit_epoch", submitted)
    monkeypatch.setattr(loop, "epoch_record", recorded)
    # a tol no epoch meets: the fit stops after n_iter_no_change epochs without a gain
    kw = dict(solver="pegasos", alpha=1e-4, max_epochs=20, tol=0.5, n_iter_no_change=3,
              random_state=4, n_streams=2)
    remote = SVMClassifier(client=local_client, **kw).fit(ds)
    n = len(remote.history_)
    assert 3 <= n < 20
    assert sorted(e for e in events if e.startswith("submit")) == sorted(
        f"submit {k}" for k in range(1, n + 1))  # each epoch once, none after the last
    ahead = [k for k in range(1, n) if events.index(f"submit {k + 1}") <
             events.index(f"record {k}")]
    # epoch k + 1 ran ahead exactly when, with the records before epoch k, epoch k could not
    # stop the fit (fewer than n_iter_no_change - 1 epochs without a gain behind it): with
    # this seed every epoch but 5 (two epochs without a gain before it; it gained) and the last
    assert n <= loop.ANCHOR_EPOCHS  # (the epoch that sends the model again never runs ahead)
    could_stop = [loop.StoppingRule(kw["tol"], kw["n_iter_no_change"], remote.history_[:k - 1])
                  .may_stop_next() for k in range(1, n + 1)]
    assert ahead == [k for k in range(1, n) if not could_stop[k - 1]], (events, could_stop)
    assert could_stop[-1] and len(ahead) >= n // 2  # the last could stop it, and did
    monkeypatch.undo()
    local = SVMClassifier(chunk_rows=500, **kw).fit(X, y)
    assert len(local.history_) == n
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-12, atol=1e-12)


def test_an_epoch_run_ahead_is_released_when_the_fit_stops_on_an_error(problem, tmp_path,
                                                                      local_client):
    """A hook that stops the fit (a cancelled job's, dsvm.distributed.jobs) leaves no epoch
    running ahead on the cluster: the one submitted while epoch 1 ran is cancelled, even while
    the error, and with it the loop's frame and its futures, is still referenced."""
    from dsvm.engine.hooks import epoch_hook

    X, y = problem
    ds = dsvm.write_arrays(tmp_path / "stopped.zarr", X, y, chunk_rows=500, dtype="float64")

    def stop_after_the_first(spec, state, history, converged):  # noqa: ANN001, ANN202
        raise KeyboardInterrupt("stopped by the test")

    def epochs_known(dask_scheduler):  # noqa: ANN001, ANN202
        """The epochs (the summary tasks) the scheduler still holds for this fit."""
        return sorted(str(k) for k in dask_scheduler.tasks if str(k).startswith("dsvm-summary"))

    with epoch_hook(stop_after_the_first), pytest.raises(KeyboardInterrupt) as stopped:
        SVMClassifier(client=local_client, solver="pegasos", alpha=1e-4, max_epochs=5,
                      tol=None, random_state=0, n_streams=2).fit(ds)
    assert stopped.value is not None  # (the traceback keeps the loop's frame alive)
    deadline = time.monotonic() + 20
    while len(local_client.run_on_scheduler(epochs_known)) > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    # epoch 1's outcome is still referenced by the frame; epoch 2's was released
    assert len(local_client.run_on_scheduler(epochs_known)) == 1, \
        local_client.run_on_scheduler(epochs_known)


def test_dask_arrays_in_dask_out(problem, local_client):
    X, y = problem
    dX = da.from_array(X, chunks=(1000, 12))
    dy = da.from_array(y, chunks=1000)
    clf = SVMClassifier(alpha=1e-4, max_epochs=3, tol=None, random_state=0, client=local_client)
    clf.fit(dX, dy)
    pred = clf.predict(dX)
    scores = clf.decision_function(dX)
    assert isinstance(pred, da.Array) and isinstance(scores, da.Array)
    assert scores.shape == (6000,)
    np.testing.assert_array_equal(pred.compute(), clf.predict(X))
    assert clf.score(dX, dy) > 0.9
    # the same chunks and seed as a zarr dataset give the same model
    local = SVMClassifier(alpha=1e-4, max_epochs=3, tol=None, random_state=0,
                          n_streams=clf.n_streams_, chunk_rows=1000).fit(X, y)
    np.testing.assert_allclose(clf.coef_, local.coef_, rtol=1e-12, atol=1e-12)


def test_validation_dataset_and_multiclass(tmp_path, local_client):
    rng = np.random.default_rng(1)
    centers = rng.normal(scale=4, size=(4, 6))
    lab = rng.integers(0, 4, size=4000)
    X = centers[lab] + rng.normal(size=(4000, 6))
    train = dsvm.write_arrays(tmp_path / "tr.zarr", X[:3000], lab[:3000].astype(float),
                              chunk_rows=400, dtype="float32")
    val = dsvm.write_arrays(tmp_path / "va.zarr", X[3000:], lab[3000:].astype(float),
                            chunk_rows=400, dtype="float32")
    clf = SVMClassifier(alpha=1e-3, max_epochs=3, tol=None, random_state=0, client=local_client)
    clf.fit(train, validation=val)
    assert clf.coef_.shape == (4, 6) and clf.coef_.dtype == np.float32
    assert clf.history_[-1]["val_accuracy"] == pytest.approx(clf.score(val))
    assert clf.score(val) > 0.9


def test_labels_outside_classes_name_the_chunk(tmp_path, local_client, problem):
    X, y = problem
    ds = dsvm.write_arrays(tmp_path / "a.zarr", X, y, chunk_rows=1000)
    clf = SVMClassifier(max_epochs=1, tol=None, client=local_client)
    clf.partial_fit(ds, classes=[-1.0, 1.0])
    y2 = y.copy()
    y2[2500] = 7.0
    ds2 = dsvm.write_arrays(tmp_path / "b.zarr", X, y2, chunk_rows=1000)
    with pytest.raises(ValueError, match=r"chunk 2: row 500 has label 7.0"):
        clf.partial_fit(ds2)


def test_workers_open_the_dataset_by_fsspec_url(problem, tmp_path, local_client):
    X, y = problem
    dsvm.write_arrays(tmp_path / "u.zarr", X, y, chunk_rows=1000)
    url = (tmp_path / "u.zarr").as_uri()  # file:///...: what s3:// or gs:// would look like
    assert dsvm.open_dataset(url).n_samples == 6000
    clf = SVMClassifier(alpha=1e-4, max_epochs=2, tol=None, random_state=0, client=local_client)
    assert clf.fit(url).score(url) > 0.9
