"""The LocalCluster dsvm starts itself forks its workers from a forkserver that imported dsvm
(dsvm/distributed/start_method.py), and they still get dask's pre-spawn environment."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys

import pytest

# Run as a fresh process: in the test process a shared Client may be current, which
# cluster_client(None) would use instead of starting a cluster.
SCRIPT = """
import json, os, sys

def probe():
    import os, sys
    return ["dsvm.engine.tasks" in sys.modules, os.environ.get("OMP_NUM_THREADS"),
            os.getppid()]

if __name__ == "__main__":
    from dsvm.distributed.client import cluster_client

    with cluster_client(None, n_workers=2) as client:
        found = list(client.run(probe).values())
    print(json.dumps({"workers": found, "me": os.getpid()}))
"""


@pytest.mark.distributed
@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(),
                    reason="no forkserver on this platform: dask's start method stands")
def test_dsvm_own_cluster_forks_its_workers_with_dsvm_imported(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    report = json.loads(out.strip().splitlines()[-1])
    workers = report["workers"]
    assert len(workers) == 2
    # dsvm was imported before any task ran (spawned workers import it on their first task)
    assert all(preloaded for preloaded, _, _ in workers), workers
    # dask's pre-spawn environment reached them (set before the forkserver started)
    assert all(omp == "1" for _, omp, _ in workers), workers
    # both forked from the same server, not from this script (spawn: the script is the parent)
    parents = {parent for _, _, parent in workers}
    assert len(parents) == 1 and report["me"] not in parents, report
