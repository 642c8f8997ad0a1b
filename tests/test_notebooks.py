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


def _trained_and_plotted(nb, address: str) -> None:
    assert _outputs(nb, "image/png"), "no history plot was shown"
    html = _outputs(nb, "text/html")
    assert any("dsvm-estimator" in h and "fitted:" in h for h in html), html
    # the notebook really used the separate-process scheduler
    assert any(address.split("//")[1] in "".join(t)
               for t in _outputs(nb, "text/html") + _outputs(nb, "text/plain"))


def test_kernel_svm_notebook_trains_and_plots(process_cluster, tmp_path):
    nb = _run("kernel_svm", {"DSVM_SCHEDULER": process_cluster.address,
                             "DSVM_DATA_DIR": str(tmp_path)}, tmp_path)
    _trained_and_plotted(nb, process_cluster.address)


def test_quickstart_trains_and_plots_on_one_worker(tmp_path):
    """On one worker: its own assertion (test accuracy > 0.84) held on 2 workers and failed
    on 1 (0.8335) while the stream count followed the workers; the notebook fixes
    ``n_streams=2`` now, and a fit's model depends on its streams, not on the workers they
    run on (bit for bit: tests/distributed/test_failures.py), so this one run stands for
    both (it ran on each, 15-20 s apiece)."""
    from tests.conftest import ProcessCluster

    cluster = ProcessCluster(n_workers=1)
    try:
        nb = _run("quickstart", {"DSVM_SCHEDULER": cluster.address,
                                 "DSVM_DATA_DIR": str(tmp_path)}, tmp_path)
        _trained_and_plotted(nb, cluster.address)
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
