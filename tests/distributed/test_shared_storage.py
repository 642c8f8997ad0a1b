"""Workers open datasets by URL from shared storage: an S3-compatible server (moto's, in this
process, on loopback) and file:// URLs, with scheduler and workers as separate processes."""

from __future__ import annotations

import numpy as np
import pytest

import dsvm
from tests.conftest import _free_port

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def s3():
    pytest.importorskip("s3fs")
    moto_server = pytest.importorskip("moto.server")
    boto3 = pytest.importorskip("boto3")
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="test",
                 aws_secret_access_key="test", region_name="us-east-1").create_bucket(
        Bucket="dsvm")
    options = {"key": "test", "secret": "test", "client_kwargs": {"endpoint_url": endpoint,
                                                                 "region_name": "us-east-1"}}
    yield endpoint, options
    server.stop()


def _fit(data, address, **kw):
    # (Pegasos: CoCoA+ keeps its duals next to the checkpoint, written by the workers, whose
    # environment has no S3 credentials here)
    return dsvm.SVMClassifier(solver="pegasos", max_epochs=2, tol=None, random_state=0,
                              n_streams=2, client=address, **kw).fit(data)


def test_workers_read_an_s3_dataset(s3, process_cluster, tmp_path, monkeypatch):
    endpoint, options = s3
    remote = dsvm.write_synthetic("s3://dsvm/s.zarr", 8_000, 10, chunk_rows=2000, seed=4,
                                  storage_options=options)
    local = dsvm.write_synthetic(tmp_path / "s.zarr", 8_000, 10, chunk_rows=2000, seed=4)
    # the workers get the URL and the options, never the rows, and read the chunks themselves
    ds = dsvm.open_dataset("s3://dsvm/s.zarr", storage_options=options)
    assert ds.n_chunks == 4
    # a checkpoint by s3:// URL too (credentials and endpoint from the environment)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    from_s3 = _fit(ds, process_cluster.address, checkpoint="s3://dsvm/fit.ckpt")
    from_disk = _fit(local, process_cluster.address)
    np.testing.assert_array_equal(from_s3.coef_, from_disk.coef_)
    assert dsvm.load_checkpoint("s3://dsvm/fit.ckpt").epoch == 2
    assert remote.n_samples == 8_000


def test_workers_read_a_file_url(process_cluster, tmp_path):
    local = dsvm.write_synthetic(tmp_path / "f.zarr", 8_000, 10, chunk_rows=2000, seed=5)
    by_url = _fit(f"file://{tmp_path / 'f.zarr'}", process_cluster.address)
    np.testing.assert_array_equal(by_url.coef_, _fit(local, process_cluster.address).coef_)


def test_a_dual_store_by_s3_url(s3, monkeypatch):
    """CoCoA+'s duals next to an s3:// checkpoint: a .npy file per chunk and version, written,
    read back exactly, refused clearly when missing, and dropped a version at a time."""
    from dsvm.data.duals import DualStore

    endpoint, _ = s3
    for name, value in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test"),
                        ("AWS_ENDPOINT_URL", endpoint), ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(name, value)
    store = DualStore("s3://dsvm/fit.ckpt.duals", 2)
    duals = np.random.default_rng(0).random((300, 2))
    for version in (1, 2):
        for chunk in (0, 1):
            store.write(chunk, version, duals + version + chunk)
    assert store.versions() == [1, 2]
    np.testing.assert_array_equal(store.read(1, 2, 300), duals + 3)
    store.drop(1)
    assert store.versions() == [2]
    with pytest.raises(FileNotFoundError, match="chunk 0 after epoch 1 are missing"):
        store.read(0, 1, 300)
    with pytest.raises(FileNotFoundError, match=r"of shape \(300, 2\); expected \(200, 2\)"):
        store.read(0, 2, 200)
