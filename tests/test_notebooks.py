"""The example notebooks, executed with nbclient against a scheduler and workers started as
separate processes (the notebooks read its address from DSVM_SCHEDULER)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = [pytest.mark.distributed, pytest.mark.slow, pytest.mark.timeout(300)]

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
REPO = EXAMPLES.parent


def _run(name, env, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("matplotlib")
    nb = nbformat.read(EXAMPLES / f"{name}.ipynb", as_version=4)
    old = dict(os.environ)
    os.environ.update(env)
    os.environ["PYTHONPATH"] = str(REPO) + os.pathsep + old.get("PYTHONPATH", "")
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    try:
        nbclient.NotebookClient(nb, timeout=240, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    return nb


def _outputs(nb, mime):
    return [o["data"][mime] for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if mime in o.get("data", {})]


@pytest.mark.parametrize("name", ["quickstart", "kernel_svm"])
def test_notebook_trains_and_plots(name, process_cluster, tmp_path):
    nb = _run(name, {"DSVM_SCHEDULER": process_cluster.address,
                     "DSVM_DATA_DIR": str(tmp_path)}, tmp_path)
    assert _outputs(nb, "image/png"), "no history plot was shown"
    html = _outputs(nb, "text/html")
    assert any("dsvm-estimator" in h and "fitted:" in h for h in html), html
    # the notebook really used the separate-process scheduler
    assert any(process_cluster.address.split("//")[1] in "".join(t)
               for t in _outputs(nb, "text/html") + _outputs(nb, "text/plain"))


def test_quickstart_passes_on_one_worker_too(tmp_path):
    """Its own assertion (test accuracy > 0.84) held on 2 workers and failed on 1 (0.8335):
    the stream count followed the workers. It is fixed in the notebook now."""
    from tests.conftest import ProcessCluster

    cluster = ProcessCluster(n_workers=1)
    try:
        _run("quickstart", {"DSVM_SCHEDULER": cluster.address, "DSVM_DATA_DIR": str(tmp_path)},
             tmp_path)
    finally:
        cluster.close()


def test_out_of_core_notebook_checkpoints_and_resumes(process_cluster, tmp_path):
    nb = _run("out_of_core", {"DSVM_SCHEDULER": process_cluster.address,
                              "DSVM_DATA_DIR": str(tmp_path), "DSVM_EXAMPLE_ROWS": "200000"},
              tmp_path)
    assert _outputs(nb, "image/png")
    assert (tmp_path / "big.ckpt").is_file()
    import dsvm

    assert dsvm.load_checkpoint(tmp_path / "big.ckpt").epoch == 4
