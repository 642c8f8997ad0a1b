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


# A user's script as typed, without the main guard.
UNGUARDED = """import dask.array as da
import dsvm

X = da.random.random((400, 3), chunks=100)
clf = dsvm.SVMClassifier(max_epochs=1).fit(X, X[:, 0] > 0.5)
"""


@pytest.mark.distributed
def test_a_script_without_the_main_guard_is_told_the_line_before_any_worker_starts(tmp_path):
    """Its workers would run the script again, reach the fit and fail: the user saw
    thousands of lines of multiprocessing's bootstrapping error and "Nanny failed to start"."""
    script = tmp_path / "train.py"
    script.write_text(UNGUARDED)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"dsvm.exceptions.UnguardedScriptError: {script}, line 5: "), last
    assert 'if __name__ == "__main__":' in last
    assert "Nanny" not in run.stderr and "bootstrapping" not in run.stderr


def _probe_as_main(tmp_path, monkeypatch, source, spec_name=None):
    """What unguarded_call says inside ``source`` run as the main script (``probe()``)."""
    import types

    from dsvm.distributed.start_method import unguarded_call

    path = tmp_path / "script.py"
    path.write_text(source)
    main = types.ModuleType("__main__")
    main.__file__ = str(path)
    main.__spec__ = None if spec_name is None else types.SimpleNamespace(name=spec_name)
    monkeypatch.setitem(sys.modules, "__main__", main)
    found = []
    main.probe = lambda: found.append(unguarded_call())
    exec(compile(source, str(path), "exec"), vars(main))
    return found, str(path)


@pytest.mark.parametrize("source, line", [
    ("probe()\n", 1),
    ("def main():\n    probe()\n\n\nmain()\n", 5),
    ("if __name__ == '__main__':\n    probe()\n", None),
    ("import sys\n\ntry:\n    if '__main__' == __name__ and sys.argv:\n        probe()\n"
     "except KeyboardInterrupt:\n    pass\n", None),
    ("def main():\n    probe()\n\n\nif __name__ == '__main__':\n    main()\n", None),
])
def test_the_call_outside_the_main_guard_is_found_by_its_line(tmp_path, monkeypatch, source,
                                                              line):
    found, path = _probe_as_main(tmp_path, monkeypatch, source)
    assert found == [None if line is None else (path, line)]


def test_a_package_main_module_is_not_run_again_and_passes(tmp_path, monkeypatch):
    found, _ = _probe_as_main(tmp_path, monkeypatch, "probe()\n", spec_name="tool.__main__")
    assert found == [None]


def test_a_script_read_from_stdin_is_not_run_again_by_the_workers(monkeypatch, tmp_path):
    """``python - <<EOF`` (or ``cat fit.py | python``): multiprocessing told each new worker
    to run the main script ``<stdin>`` from the starting folder, every worker failed
    (FileNotFoundError: .../<stdin>, then "Nanny failed to start") in a fit on a Dask
    DataFrame, which starts dsvm's own cluster unasked."""
    from multiprocessing import spawn

    from dsvm.distributed.start_method import forked_workers

    main = sys.modules["__main__"]
    monkeypatch.setattr(main, "__file__", "<stdin>", raising=False)
    monkeypatch.setattr(main, "__spec__", None, raising=False)
    assert spawn.get_preparation_data("w")["init_main_from_path"].endswith("/<stdin>")
    with forked_workers():
        assert "init_main_from_path" not in spawn.get_preparation_data("w")
    assert main.__file__ == "<stdin>"
    script = tmp_path / "fit.py"  # a script that is a file is run again, as Python does
    script.write_text("")
    monkeypatch.setattr(main, "__file__", str(script))
    with forked_workers():
        assert spawn.get_preparation_data("w")["init_main_from_path"] == str(script)
