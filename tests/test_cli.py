"""The dsvm command: return codes, one-line errors, and the convert/info/train/eval/predict path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from dsvm.cli import main


def _write_libsvm(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            toks = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row) if v != 0)
            f.write(f"{label:+d} {toks}\n")


@pytest.fixture
def libsvm_file(tmp_path, blobs):
    X, y = blobs
    path = tmp_path / "train.svm"
    _write_libsvm(path, X, y)
    return path


def test_convert_info_train_eval_predict(tmp_path, libsvm_file, capsys, blobs):
    X, y = blobs
    zarr_path = tmp_path / "train.zarr"
    assert main(["convert", str(libsvm_file), str(zarr_path), "--chunk-rows", "128"]) == 0
    assert main(["info", str(zarr_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert info["n_samples"] == 600 and info["n_features"] == 8
    model = tmp_path / "m.dsvm"
    assert main(["train", str(zarr_path), "--out", str(model), "--alpha", "1e-3", "--epochs", "3",
                 "--workers", "2"]) == 0
    # 5 chunks for 2 streams: a window holds a stream's 3 chunks, not the default's 8 (it said
    # "8 chunks (960 rows": twice the data)
    err = capsys.readouterr().err
    assert "shuffle window: 3 chunks (360 rows" in err and "2 streams" in err, err
    assert main(["eval", str(model), str(zarr_path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["accuracy"] > 0.9 and result["objective"] > 0 and result["n_samples"] == 600
    out = tmp_path / "pred.npy"
    assert main(["predict", str(model), str(zarr_path), "--out", str(out)]) == 0
    pred = np.load(out)
    assert pred.shape == (600,) and np.mean(pred == y) == pytest.approx(result["accuracy"])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["info", "/nonexistent/data.zarr"], "data.zarr"),
        (["eval", "/nonexistent/model.dsvm", "/nonexistent/d.zarr"], "model.dsvm"),
    ],
)
def test_user_errors_exit_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv, named",
    [
        (["train", "d.zarr", "--out", "m.dsvm", "--epochz", "5"], "--epochz 5"),
        (["train", "d.zarr"], "--out"),
        (["train", "d.zarr", "--out", "m.dsvm", "--solver", "pegasus"], "'pegasus'"),
        (["trian", "d.zarr"], "'trian'"),
        (["-v", "d.zarr"], "'d.zarr'"),
    ],
)
def test_a_mistyped_command_line_is_one_line_naming_what_was_typed(argv, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and named in err and "--help" in err, err


def test_bad_libsvm_line_is_named_without_traceback(tmp_path):
    bad = tmp_path / "bad.svm"
    bad.write_text("+1 1:0.5 2:1\n-1 1:0.5 2:x\n")
    proc = subprocess.run([sys.executable, "-m", "dsvm", "convert", str(bad),
                           str(tmp_path / "bad.zarr")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "bad.svm" in proc.stderr and "line 2" in proc.stderr
    assert not (tmp_path / "bad.zarr").exists()


def test_bad_parameter_exits_2(tmp_path, libsvm_file, capsys):
    zarr_path = tmp_path / "t.zarr"
    assert main(["convert", str(libsvm_file), str(zarr_path)]) == 0
    assert main(["train", str(zarr_path), "--out", str(tmp_path / "m"), "--alpha", "-1"]) == 2
    # the flag the user typed, not the Python parameter behind it (issue #14)
    assert "--alpha must be a float" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.distributed
@pytest.mark.timeout(300)
def test_demo_runs_on_the_bundled_data():
    proc = subprocess.run([sys.executable, "-m", "dsvm", "demo", "--epochs", "3", "--workers", "2"],
                          capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    assert "epoch   3" in out and "test accuracy" in proc.stdout
    acc = float(proc.stdout.rsplit("test accuracy:", 1)[1].split()[0])
    assert acc > 0.83


@pytest.mark.parametrize("argv, starts", [
    (["train", "a.zarr", "--out", "m.dsvm", "--workers", "2"], True),
    (["--log-level", "INFO", "train", "a.zarr", "--workers=2"], True),
    (["demo", "--workers", "2"], True),
    (["train", "a.zarr", "--workers", "2", "--scheduler", "tcp://h:8786"], False),
    (["train", "a.zarr"], False),  # a small dataset trains in the command's own process
    (["eval", "m.dsvm", "a.zarr"], False),
])
def test_a_command_that_starts_a_cluster_starts_its_workers_server_first(argv, starts):
    """The embedded cluster's workers are forked from a server that imports dsvm (3 s here):
    started before the command parses its arguments (which imports the estimators), the two
    import side by side instead of one after the other."""
    from dsvm.cli import starts_a_cluster

    assert starts_a_cluster(argv) is starts


def test_the_raw_argument_check_knows_every_command():
    """starts_a_cluster finds the command word among the raw arguments by name (before the
    parser runs): its list is the parser's."""
    import argparse

    from dsvm.cli import COMMANDS, build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(COMMANDS) == sorted(sub.choices)


def test_the_workers_server_starts_at_once_as_a_nanny_would_start_it(tmp_path):
    """Started early, the server still gets what a nanny gives the workers it starts (dask's
    pre-spawn environment, the fixed hash seed): a forked worker keeps its server's."""
    code = ("import os, time\n"
            "from multiprocessing import forkserver\n"
            "from dsvm.training.cluster import start_workers_early\n"
            "tic = time.perf_counter(); start_workers_early(); took = time.perf_counter() - tic\n"
            "server = forkserver._forkserver\n"
            # until the server has run exec, its /proc files show this process's memory
            "proc = f'/proc/{server._forkserver_pid}'\n"
            "while b'forkserver' not in open(f'{proc}/cmdline', 'rb').read():\n"
            "    time.sleep(0.01)\n"
            "with open(f'{proc}/environ', 'rb') as f:\n"
            "    env = dict(v.split(b'=', 1) for v in f.read().split(b'\\0') if b'=' in v)\n"
            "import dask\n"
            "dask.config.get('distributed.comm.require-encryption')\n"  # its config intact
            "print(took, 'dsvm.estimators' in server._preload_modules,\n"
            "      env.get(b'OMP_NUM_THREADS'), env.get(b'PYTHONHASHSEED'),\n"
            "      os.environ.get('OMP_NUM_THREADS'))\n")
    # to a file: the server holds the pipes it inherited until its imports are done
    out = tmp_path / "out.txt"
    # a user's environment: no DASK_ variables (the suite's give dask a "distributed" config
    # section before distributed is imported, which hid a start that dropped its defaults)
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "PYTHONHASHSEED") and not k.startswith("DASK_")}
    with open(out, "w") as f:
        proc = subprocess.run([sys.executable, "-c", code], stdout=f, stderr=subprocess.STDOUT,
                              timeout=120, env=env)
    assert proc.returncode == 0, out.read_text()
    took, preloads, omp, seed, here = out.read_text().split()
    assert preloads == "True"
    assert (omp, seed) == ("b'1'", "b'6640'")  # the server's environment, as a nanny's
    assert here == "None"  # this process's own environment is left as it was
    # it does not wait for the server's imports: well under what they take in a process of
    # their own, timed now under the same load (~0.5 s against ~3 s on an idle 2-core VM)
    tic = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import dsvm.estimators"], check=True, env=env)
    assert float(took) < 0.75 * (time.perf_counter() - tic), took


def test_version_and_help():
    proc = subprocess.run([sys.executable, "-m", "dsvm", "--version"], capture_output=True,
                          text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("dsvm ")


@pytest.fixture
def no_s3fs(monkeypatch):
    """The base install: s3fs not importable (fsspec forgets a class it already loaded)."""
    import fsspec.registry  # noqa: F401 - the module; fsspec.registry is its read-only view

    monkeypatch.setitem(sys.modules, "s3fs", None)
    monkeypatch.delitem(sys.modules["fsspec.registry"]._registry, "s3", raising=False)


def test_remote_url_without_its_extra_names_the_extra(no_s3fs, tmp_path, capsys):
    import dsvm

    url = "s3://bucket/logs/*.parquet"
    assert main(["convert", url, str(tmp_path / "o.zarr")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and url in err and "pip install 'dsvm[s3]'" in err
    for call in (lambda: dsvm.convert("s3://bucket/x.txt", tmp_path / "o.zarr"),
                 lambda: dsvm.open_dataset("s3://bucket/d.zarr")):
        with pytest.raises(ImportError, match=r"s3://bucket/.*dsvm\[s3\]"):
            call()
    assert not (tmp_path / "o.zarr").exists()


def test_debug_shows_the_traceback_and_exits_2(tmp_path, capsys):
    assert main(["--debug", "info", str(tmp_path / "missing.zarr")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("dsvm info: error:")


def test_one_class_file_converts_with_a_warning(tmp_path, capsys):
    # a test shard can be one class: converted, with a one-line warning (a fit on it alone
    # still refuses: tests/test_validation.py)
    one = tmp_path / "shard.svm"
    one.write_text("1 1:1\n1 2:1\n1.0 3:1\n")
    assert main(["convert", str(one), str(tmp_path / "shard.zarr")]) == 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "warning: " in err and "all 3 samples" in err


def test_an_interrupted_fit_with_a_checkpoint_says_how_to_go_on(tmp_path, libsvm_file, capsys,
                                                                 monkeypatch):
    """Ctrl-C said only "interrupted"; the same command again said "--checkpoint ... already
    exists; pass --overwrite to replace it" (which throws the epochs away), and ``dsvm info``
    of the checkpoint "is not a dsvm model: it lacks ['coef', 'intercept']"."""
    import dsvm.cli.train as train

    data, ckpt, model = tmp_path / "d.zarr", str(tmp_path / "ck"), str(tmp_path / "m.dsvm")
    assert main(["convert", str(libsvm_file), str(data), "--chunk-rows", "128"]) == 0
    command = ["train", str(data), "--out", model, "--solver", "sgd", "--epochs", "2",
               "--checkpoint", ckpt]
    fit = train.cmd_train

    def fit_then_ctrl_c(args):  # (the checkpoint of 2 epochs written, the model not yet)
        fit(args)
        os.remove(model)
        raise KeyboardInterrupt

    monkeypatch.setattr(train, "cmd_train", fit_then_ctrl_c)
    assert main(command) == 130
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"dsvm train: interrupted; --checkpoint {ckpt} holds the epochs done: the same command "
        "with --resume continues from there")
    monkeypatch.undo()
    assert main(command) == 2
    assert capsys.readouterr().err.strip() == (
        f"dsvm train: error: --checkpoint {ckpt} holds an earlier fit: pass --resume to "
        "continue it, or --overwrite to start over")
    assert main(["info", ckpt, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["kind"] == "dsvm checkpoint of a SVMClassifier fit" and info["epochs_done"] == 2
    assert main([*command, "--resume"]) == 0 and os.path.exists(model)
