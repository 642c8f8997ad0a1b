"""Dask TLS: a scheduler and workers started as separate processes with a self-signed CA on
loopback; dsvm connects with ``--tls-*`` flags (shell) or a dask ``Security`` (Python)."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import dsvm
from tests.conftest import REPO, _dask_cmd, _free_port, stop_cluster_processes

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(180)]


def _write_pki(root):
    """A self-signed CA and one certificate it signs (used by scheduler, workers and client)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def name(cn):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def pem_key(key):
        return key.private_bytes(serialization.Encoding.PEM,
                                 serialization.PrivateFormat.TraditionalOpenSSL,
                                 serialization.NoEncryption())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("dsvm test CA"))
          .issuer_name(name("dsvm test CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(name("localhost")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = {"ca": root / "ca.pem", "cert": root / "cert.pem", "key": root / "key.pem"}
    paths["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths["cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths["key"].write_bytes(pem_key(key))
    return {k: str(v) for k, v in paths.items()}


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    pki = _write_pki(tmp_path_factory.mktemp("pki"))
    tls = ["--tls-ca-file", pki["ca"], "--tls-cert", pki["cert"], "--tls-key", pki["key"]]
    port = _free_port()
    address = f"tls://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen(
        _dask_cmd() + ["scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port",
                       str(port), "--no-dashboard", *tls],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)]
    for _ in range(2):
        procs.append(subprocess.Popen(
            _dask_cmd() + ["worker", address, "--nthreads", "1", "--memory-limit", "1GiB",
                           "--no-dashboard", "--host", "127.0.0.1", *tls],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
    from distributed import Client
    from distributed.security import Security

    security = Security(tls_ca_file=pki["ca"], tls_client_cert=pki["cert"],
                        tls_client_key=pki["key"], require_encryption=True)
    deadline = time.time() + 60
    while True:
        try:
            with Client(address, security=security, timeout=5) as c:
                c.wait_for_workers(2, timeout=max(1, deadline - time.time()))
                break
        except (OSError, TimeoutError):
            if time.time() > deadline:
                raise
    yield address, pki, security, tls
    stop_cluster_processes(procs)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return dsvm.write_synthetic(tmp_path_factory.mktemp("tls") / "s.zarr", 20_000, 10,
                                chunk_rows=2000, seed=2)


def _dsvm(*args):
    return subprocess.run([sys.executable, "-m", "dsvm", *args], capture_output=True, text=True,
                          timeout=120)


def test_python_client_with_a_security_object(tls_cluster, dataset):
    from distributed import Client

    address, _pki, security, _ = tls_cluster
    with Client(address, security=security) as client:
        assert client.scheduler.address.startswith("tls://")
        clf = dsvm.SVMClassifier(max_epochs=2, tol=None, random_state=0, n_streams=2,
                                 client=client).fit(dataset)
        assert clf.score(dataset) > 0.9
        assert not client.status == "closed"  # a given client is the caller's to close


def test_shell_with_tls_flags(tls_cluster, dataset, tmp_path):
    address, _pki, security, tls = tls_cluster
    model = tmp_path / "m.dsvm"
    proc = _dsvm("train", str(dataset.url), "--out", str(model), "--epochs", "2", "--seed", "0",
                 "--streams", "2", "--quiet", "--scheduler", address, *tls)
    assert proc.returncode == 0, proc.stderr
    proc = _dsvm("eval", str(model), str(dataset.url), "--json", "--scheduler", address, *tls)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["accuracy"] > 0.9
    # the same fit in Python over TLS gives the same model
    from distributed import Client

    with Client(address, security=security) as client:
        clf = dsvm.SVMClassifier(max_epochs=2, tol=None, random_state=0, n_streams=2,
                                 client=client).fit(dataset)
    np.testing.assert_array_equal(dsvm.load(model).coef_, clf.coef_)


def test_tls_scheduler_without_certificates_is_a_clear_error(tls_cluster, dataset, tmp_path):
    address = tls_cluster[0]
    proc = _dsvm("train", str(dataset.url), "--out", str(tmp_path / "m.dsvm"), "--scheduler",
                 address)
    assert proc.returncode == 2
    assert "TLS needs --tls-ca-file" in proc.stderr
