"""cluster/: the local-processes recipe is run for real; the others are checked for syntax (no
SSH hosts, SLURM, Kubernetes or Docker here)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import dsvm

CLUSTER = Path(__file__).resolve().parents[1] / "cluster"
REPO = CLUSTER.parent


@pytest.mark.distributed
@pytest.mark.timeout(180)
@pytest.mark.slow
def test_local_processes_recipe_trains_and_stops(tmp_path):
    run_dir = tmp_path / "cluster"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    started = subprocess.run(["bash", str(CLUSTER / "local" / "start-cluster.sh"), str(run_dir),
                              "2", "1GiB"], capture_output=True, text=True, env=env, timeout=120)
    try:
        assert started.returncode == 0, started.stderr
        assert started.stdout.strip().startswith("tcp://127.0.0.1:")
        pids = [int(p) for p in (run_dir / "pids").read_text().split()]
        assert len(pids) == 3
        ds = dsvm.write_synthetic(tmp_path / "s.zarr", 20_000, 10, chunk_rows=2000, seed=6)
        # a scheduler file is an address for dsvm (as for `dsvm train --scheduler FILE`)
        clf = dsvm.SVMClassifier(max_epochs=2, tol=None, random_state=0,
                                 client=str(run_dir / "scheduler.json")).fit(ds)
        assert clf.n_iter_ == 2 and clf.n_streams_ == 2  # both workers of the recipe
    finally:
        stopped = subprocess.run(["bash", str(CLUSTER / "local" / "stop-cluster.sh"),
                                  str(run_dir)], capture_output=True, text=True, timeout=60)
    assert stopped.returncode == 0, stopped.stderr
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or \
            Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


@pytest.mark.parametrize("rel", ["kubernetes/helm-values.yaml", "kubernetes/dask-cluster.yaml",
                                 "docker/compose.yaml"])
def test_manifests_parse(rel):
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load((CLUSTER / rel).read_text())
    assert isinstance(doc, dict)
    if rel == "docker/compose.yaml":
        assert {"scheduler", "worker", "jupyter"} <= set(doc["services"])
        assert doc["services"]["jupyter"]["environment"]["DSVM_SCHEDULER"].startswith("tcp://")


def test_scripts_are_valid():
    compile((CLUSTER / "slurm" / "slurm_cluster.py").read_text(), "slurm_cluster.py", "exec")
    for script in ["local/start-cluster.sh", "local/stop-cluster.sh", "slurm/train.sbatch"]:
        proc = subprocess.run(["bash", "-n", str(CLUSTER / script)], capture_output=True,
                              text=True)
        assert proc.returncode == 0, (script, proc.stderr)
