"""The command line as a new user meets it (issue #14): one line and exit code 2 for every
mistake, naming the flag typed; outputs checked before any work; no input ever overwritten."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import dsvm
from tests.conftest import _dask_cmd, _free_port


def _dsvm(*args, timeout=120, env=None):
    return subprocess.run([sys.executable, "-m", "dsvm", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env)


def _one_line_error(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = [ln for ln in proc.stderr.strip().splitlines() if "warning" not in ln]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


class _Run:
    """``dsvm ARGS`` in this process (the command's own main): returncode and stderr."""

    def __init__(self, capsys, *args):
        from dsvm.cli import main

        capsys.readouterr()
        self.returncode = main([str(a) for a in args])
        self.stderr = capsys.readouterr().err


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5)).astype(np.float32)
    y = np.where(X[:, 0] > 0, 1, -1)
    train = dsvm.write_arrays(root / "train.zarr", X, y, chunk_rows=100)
    wide = dsvm.write_arrays(root / "wide.zarr", np.hstack([X, X]), y, chunk_rows=100)
    model = root / "m.dsvm"
    dsvm.SVMClassifier(max_epochs=2, tol=None, random_state=0).fit(X, y).save(model)
    return root, str(train.url), str(wide.url), model


def test_outputs_are_checked_before_any_work(small, tmp_path, capsys):
    root, train, _, model = small

    def _dsvm(*args):
        return _Run(capsys, *args)

    # a model file that exists is not replaced without --overwrite
    existing = tmp_path / "m.dsvm"
    existing.write_bytes(b"keep me")
    _one_line_error(_dsvm("train", train, "--out", existing), "--out", "--overwrite")
    assert existing.read_bytes() == b"keep me"
    # a folder that does not exist fails at once, not after the fit
    tic = time.monotonic()
    _one_line_error(_dsvm("train", train, "--out", tmp_path / "missing" / "m.dsvm"),
                    "--out", "does not exist")
    assert time.monotonic() - tic < 20
    # a checkpoint that exists is neither resumed nor replaced unless asked
    ckpt = tmp_path / "run.ckpt"
    ckpt.write_bytes(b"old")
    _one_line_error(_dsvm("train", train, "--out", tmp_path / "n.dsvm", "--checkpoint", ckpt),
                    "--checkpoint", "exists")
    # predictions never replace the input, even with --overwrite
    _one_line_error(_dsvm("predict", model, train, "--out", train, "--overwrite"),
                    "--out", "input")
    assert dsvm.open_dataset(train).n_samples == 400
    out = tmp_path / "p.npy"
    out.write_bytes(b"x")
    _one_line_error(_dsvm("predict", model, train, "--out", out), "--out", "--overwrite")
    _one_line_error(_dsvm("predict", model, train, "--out", tmp_path / "p.xyz"), "--out",
                    "unknown output type")


def test_predictions_to_parquet(small, tmp_path):
    import pyarrow.parquet as pq

    _, train, _, model = small
    proc = _dsvm("predict", model, train, "--out", tmp_path / "p.parquet")
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(tmp_path / "p.parquet")
    expected = dsvm.load(model).predict(train)
    np.testing.assert_array_equal(table.column("label").to_numpy(), expected)


def test_messages_name_the_flags_typed(small, tmp_path, capsys):
    _, train, wide, _ = small

    def _dsvm(*args):
        return _Run(capsys, *args)

    _one_line_error(_dsvm("train", train, "--out", tmp_path / "a.dsvm", "--epochs", "0"),
                    "--epochs must be")
    _one_line_error(_dsvm("train", train, "--out", tmp_path / "b.dsvm", "--validation", wide,
                          "--epochs", "1"), "validation", "10 features", "5")
    # eval and predict name the dataset and the model typed ("X has 10 features, but
    # SVMClassifier is expecting 5" named neither)
    model = small[3]
    for command, extra in (("eval", []), ("predict", ["--out", tmp_path / "p.npy"])):
        _one_line_error(_dsvm(command, model, wide, *extra),
                        f"{wide} has 10 features, but the model {model} was trained on 5")
    assert not (tmp_path / "p.npy").exists()


def test_storage_without_credentials_is_one_line(small):
    """An s3:// URL without credentials: botocore's NoCredentialsError is the user's to fix
    (it was a 70-line traceback); the one line names the URL and what to set. (In a process of
    its own: s3fs caches its clients, and one made without credentials would outlive the test.)"""
    pytest.importorskip("s3fs")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_EC2_METADATA_DISABLED="true",  # no wait for an instance role
               AWS_SHARED_CREDENTIALS_FILE="/nonexistent", AWS_CONFIG_FILE="/nonexistent")
    url = "s3://dsvm-test-no-such-bucket/x.zarr"
    line = _one_line_error(_dsvm("info", url, env=env), url, "NoCredentialsError",
                           "AWS_ACCESS_KEY_ID")
    assert line.startswith("dsvm info: error:"), line
    # what is not a storage or user error still shows its traceback (a bug to report)
    from dsvm.cli.common import storage_error

    assert storage_error(ZeroDivisionError("x"), [url]) is None


def test_debug_shows_the_traceback(small, tmp_path):
    _, train, _, _ = small
    proc = _dsvm("--debug", "train", train, "--out", tmp_path / "c.dsvm", "--epochs", "0")
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def _dsvm_started(*args, env=None):
    """``dsvm ARGS`` started, not waited for (see :func:`_finished`)."""
    return subprocess.Popen([sys.executable, "-m", "dsvm", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _finished(proc, timeout):
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.slow
@pytest.mark.distributed
def test_scheduler_mistakes_are_one_line_and_quick(small, tmp_path):
    """An unreachable scheduler, the dashboard's HTTP port given by mistake (it used to hang
    until killed), a scheduler file that does not exist, one its scheduler left behind when it
    stopped and one that is not a scheduler file (the last two: tracebacks of OSError and
    AssertionError from distributed). The commands run at once: most of their time is
    waiting for an answer that does not come."""
    from distributed import LocalCluster

    _, train, _, _ = small
    env = dict(os.environ, DASK_DSVM__CONNECT_TIMEOUT="3s")  # the default is 10 s
    with LocalCluster(n_workers=1, processes=False, dashboard_address="127.0.0.1:0") as cluster:
        port = int(cluster.dashboard_link.split(":")[2].split("/")[0])
        tic = time.monotonic()
        unreachable = _dsvm_started("train", train, "--out", tmp_path / "a.dsvm", "--scheduler",
                                    f"tcp://127.0.0.1:{_free_port()}", env=env)
        no_file = _dsvm_started("train", train, "--out", tmp_path / "b.dsvm", "--scheduler",
                                tmp_path / "sched.json")
        dashboard = _dsvm_started("train", train, "--out", tmp_path / "c.dsvm", "--scheduler",
                                  f"tcp://127.0.0.1:{port}", env=env)
        stale, broken = tmp_path / "stale.json", tmp_path / "broken.json"
        stale.write_text(json.dumps({"type": "Scheduler",
                                     "address": f"tcp://127.0.0.1:{_free_port()}"}))
        broken.write_text("\n")
        left = _dsvm_started("train", train, "--out", tmp_path / "d.dsvm", "--scheduler", stale,
                             env=env)
        not_one = _dsvm_started("train", train, "--out", tmp_path / "e.dsvm", "--scheduler",
                                broken)
        _one_line_error(_finished(unreachable, 120), "Could not connect to a Dask scheduler")
        _one_line_error(_finished(no_file, 120), "No scheduler file")
        _one_line_error(_finished(left, 120), "Could not connect to a Dask scheduler at tcp://",
                        "(the address in the scheduler file ",
                        "stale.json, which a scheduler that stopped leaves behind)")
        _one_line_error(_finished(not_one, 120), "broken.json is not a Dask scheduler file")
        _one_line_error(_finished(dashboard, 60), "did not answer as a Dask scheduler")
        assert time.monotonic() - tic < 30


@pytest.mark.slow
@pytest.mark.distributed
def test_a_cluster_without_workers_is_one_line(small, tmp_path):
    _, train, _, _ = small
    port = _free_port()
    scheduler = subprocess.Popen(_dask_cmd() + ["scheduler", "--host", "127.0.0.1", "--port",
                                                str(port), "--no-dashboard"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # started with the scheduler: the command retries its connection until the scheduler
        # listens
        env = dict(os.environ, DASK_DSVM__NO_WORKERS_TIMEOUT="2s",
                   DASK_DSVM__CONNECT_TIMEOUT="60s")
        _one_line_error(_dsvm("train", train, "--out", tmp_path / "m.dsvm", "--scheduler",
                              f"tcp://127.0.0.1:{port}", env=env), "No Dask workers")
    finally:
        scheduler.terminate()
        scheduler.wait(10)


def test_a_reader_that_goes_away_is_not_a_traceback(small):
    """``dsvm info x.zarr | head -1`` printed a BrokenPipeError traceback once head had quit."""
    _, train, _, _ = small
    proc = subprocess.Popen([sys.executable, "-m", "dsvm", "info", train],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before the command has started: its first print meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == "", err


def test_cocoa_from_the_command_line(small, tmp_path, capsys):
    """--solver cocoa and --local-iters reach the estimator; a bad value names the flag."""
    import argparse

    from dsvm.cli import build_parser
    from dsvm.cli.train import make_estimator

    _, train, _, _ = small
    args = build_parser().parse_args(["train", train, "--out", str(tmp_path / "c.dsvm"),
                                      "--solver", "cocoa", "--local-iters", "20"])
    assert isinstance(args, argparse.Namespace)
    est = make_estimator(args, "classification", client=None)
    assert (est.solver, est.local_iters) == ("cocoa", 20.0)
    run = _Run(capsys, "train", train, "--out", tmp_path / "c.dsvm", "--solver", "cocoa",
               "--local-iters", "-1")
    _one_line_error(run, "--local-iters", "-1")
    assert not (tmp_path / "c.dsvm").exists()


def _parsers():
    """("dsvm", the top parser), then ("dsvm COMMAND", its parser) for every command."""
    from dsvm.cli import build_parser

    top = build_parser()
    yield "dsvm", top
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, parser in action.choices.items():
                parser.format_help()  # adds the flags read from the estimators (deferred)
                yield f"dsvm {name}", parser


def test_every_flag_has_help_and_shows_its_default():
    """#25: ``dsvm train --help`` left 8 of its 41 flags without a word, ``convert`` 9 of 19,
    and no default was shown. Every argument of every command says what it is; an option
    that takes a value says its default (in words, or argparse's "(default: X)")."""
    faults = []
    for name, parser in _parsers():
        parser.format_help()  # a stray "%" in a help text would raise here
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            text = formatter._expand_help(action) if action.help else ""
            what = f"{name} {'/'.join(action.option_strings) or action.dest}"
            if not text.strip():
                faults.append(f"{what}: no help")
            elif action.option_strings and action.nargs != 0 and not action.required \
                    and "default" not in text:
                faults.append(f"{what}: its default is not shown ({text!r})")
    assert not faults, "\n".join(faults)
    train = dict(_parsers())["dsvm train"]
    epochs = next(a for a in train._actions if "--epochs" in a.option_strings)
    assert train._get_formatter()._expand_help(epochs).endswith("(default: 10)")


def test_info_describes_a_saved_model(small, capsys):
    """#25: ``dsvm info model.dsvm`` failed ("not a zarr group"); it describes the model."""
    from dsvm.cli import main

    _, _, _, model = small
    capsys.readouterr()
    assert main(["info", str(model)]) == 0
    lines = dict(line.strip().split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert lines["kind"] == "dsvm model: SVMClassifier, binary classification"
    assert (lines["classes"], lines["n_features"], lines["solver"]) == ("[-1, 1]", "5",
                                                                "cocoa (chosen by solver='auto')")
    assert "alpha=0.0001" in lines["parameters"] and lines["epochs_trained"] == "2"
    assert lines["last_epoch"].startswith("epoch   2  objective ")
    assert lines["hashing"] == "none"
    assert main(["info", str(model), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["classes"] == [-1, 1] and info["n_features"] == 5
    assert info["parameters"]["max_epochs"] == 2 and info["last_epoch"]["epoch"] == 2
    assert info["coef"]["shape"] == [1, 5] and info["hashing"] is None


def test_a_file_that_is_not_a_model_is_named(small, tmp_path, capsys):
    """#25: a text file given as the model got NumPy's allow_pickle hint; a dataset given
    first, "No model file". One line naming the file and what it looks like, exit 2."""
    _, train, _, _ = small
    notes = tmp_path / "notes.txt"
    notes.write_text("+1 1:0.5 3:1\n-1 2:1\n")
    line = _one_line_error(_Run(capsys, "eval", notes, train), "notes.txt is not a dsvm model",
                           "svmlight/libsvm text")
    assert "pickle" not in line
    table = tmp_path / "table.csv"
    table.write_text("label,a,b\n1,0.5,2\n")
    _one_line_error(_Run(capsys, "predict", table, train, "--out", tmp_path / "p.npy"),
                    "table.csv is not a dsvm model", "CSV/TSV text")
    _one_line_error(_Run(capsys, "eval", train, notes), "is a folder (a zarr store",
                    "not a dsvm model")


def test_a_first_fit_says_it_compiles(tmp_path, capsys):
    """#25: a first run compiled for a minute or two without a word. Before a fit the command
    says so while numba's cache holds no compiled pass kernel (its index files, .nbi), once
    the parameters are known valid: a bad flag stays one line."""
    from dsvm.cli.common import say_if_compiling
    from dsvm.kernels._jit import kernels_not_compiled

    capsys.readouterr()
    with pytest.raises(ValueError, match="max_epochs"):
        say_if_compiling("train", dsvm.SVMClassifier(max_epochs=0), tmp_path)
    assert capsys.readouterr().err == ""
    say_if_compiling("train", dsvm.SVMClassifier(), tmp_path)  # nothing compiled yet
    assert capsys.readouterr().err == ("dsvm train: compiling dsvm's kernels for this machine "
                                       "(once, a minute or two)...\n")
    (tmp_path / "losses.hinge_loss-87.py311.nbi").write_bytes(b"")  # eager leaves: not a fit
    assert kernels_not_compiled(tmp_path)
    (tmp_path / "passes.pegasos_pass-87.py311.nbi").write_bytes(b"")
    say_if_compiling("train", dsvm.SVMClassifier(), tmp_path)
    assert capsys.readouterr().err == ""


def test_a_first_fit_in_python_says_it_compiles(tmp_path, monkeypatch, caplog):
    """In a notebook the first fit compiled for a minute or two in silence: the fit of a
    process says it once (a logging warning, printed to stderr where logging is not set up),
    while the kernels' cache holds no compiled pass kernel; never when compiled already."""
    import logging

    from dsvm.kernels import _jit
    from dsvm.training import engines

    X, y = np.random.default_rng(0).normal(size=(60, 3)), np.arange(60) % 2
    monkeypatch.setattr(engines, "_COMPILING", {"said": False})
    monkeypatch.setattr(_jit, "_KERNELS_DIR", tmp_path)  # a fresh install's empty cache
    with caplog.at_level(logging.WARNING, logger="dsvm"):
        dsvm.SVMClassifier(max_epochs=2, tol=None).fit(X, y)
        dsvm.SVMClassifier(max_epochs=2, tol=None).fit(X, y)
    said = [r.getMessage() for r in caplog.records if "compiling" in r.getMessage()]
    assert said == ["dsvm: compiling its kernels for this machine (once per installation, "
                    "a minute or two)..."]
    caplog.clear()
    monkeypatch.setattr(engines, "_COMPILING", {"said": False})
    (tmp_path / "__pycache__").mkdir(exist_ok=True)
    (tmp_path / "__pycache__" / "passes.sgd_pass-87.py311.nbi").write_bytes(b"")
    with caplog.at_level(logging.WARNING, logger="dsvm"):
        dsvm.SVMClassifier(max_epochs=2, tol=None).fit(X, y)
    assert not [r for r in caplog.records if "compiling" in r.getMessage()]


@pytest.fixture(scope="module")
def criteo(tmp_path_factory):
    """Raw Criteo rows (the head of the real sample's train and dev files) and the train rows
    converted as ``dsvm convert --format criteo --hash-bits 12`` converts them."""
    import lzma

    from tests.conftest import shared_file

    root = tmp_path_factory.mktemp("criteo")
    for name, rows in (("train", 600), ("dev", 200)):
        with lzma.open(shared_file(f"criteo_sample/criteo_kaggle_head8000_{name}.txt.xz"),
                       "rt") as f:
            (root / f"{name}.txt").write_text("".join(next(f) for _ in range(rows)))
    train = dsvm.convert(root / "train.txt", root / "train.zarr", format="criteo", hash_bits=12)
    return root, str(train.url)


@pytest.mark.slow
def test_eval_takes_the_raw_rows_predict_takes(criteo, capsys):
    """#25: ``dsvm eval`` refused the raw Criteo rows that ``dsvm predict`` converts with a
    hashed model's hashing; it takes them the same way. (And ``dsvm info`` names the
    hashing.)"""
    from dsvm.cli import main

    root, train = criteo
    model = root / "c.dsvm"
    # (alpha 1e-2: two epochs of Pegasos at the default 1e-4 on 600 rows end no better than
    # the majority class, a failed fit that the command refuses to save)
    run = _Run(capsys, "train", train, "--out", model, "--epochs", "2", "--alpha", "1e-2")
    assert run.returncode == 0, run.stderr
    assert main(["info", str(model)]) == 0
    assert "hashing: criteo rows: 13 numeric columns, 26 hashed into 2**12 features" in \
        capsys.readouterr().out
    raw = root / "dev.txt"
    assert main(["eval", str(model), str(raw), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert main(["predict", str(model), str(raw), "--out", str(root / "p.npy")]) == 0
    labels = np.loadtxt(raw, delimiter="\t", usecols=0)
    assert result["n_samples"] == 200
    assert result["accuracy"] == pytest.approx(np.mean(np.load(root / "p.npy") == labels))


def _svmlight(path, X, y):
    path.write_text("".join(f"{label:+d} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in
                                                      enumerate(x) if v) + "\n"
                            for x, label in zip(X, y)))
    return path


def test_an_svmlight_test_set_whose_rows_stop_short_scores_as_its_raw_file(tmp_path, capsys):
    """LIBSVM's a9a has 123 features and a9a.t 122: a converted svmlight file's width is its
    largest index, so the converted test set was refused by eval, predict, --validation and
    score ("has 122 features, but the model was trained on 123"), while the raw file,
    converted with the model's width, scored. The features it lacks are zeros."""
    from dsvm.cli import main

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 6))
    y = np.where(X[:, 0] + X[:, 5] > 0, 1, -1)
    test = X.copy()
    test[:, 5] = 0.0  # no test row uses the last feature
    _svmlight(tmp_path / "tr.svm", X, y)
    _svmlight(tmp_path / "te.svm", test, y)
    model, out = str(tmp_path / "m.dsvm"), tmp_path / "p.npy"
    for name in ("tr", "te"):
        assert main(["convert", str(tmp_path / f"{name}.svm"), str(tmp_path / f"{name}.zarr")]) == 0
    assert dsvm.open_dataset(tmp_path / "te.zarr").n_features == 5
    assert main(["train", str(tmp_path / "tr.zarr"), "--out", model, "--validation",
                 str(tmp_path / "te.zarr")]) == 0, capsys.readouterr().err
    clf = dsvm.load(model)
    expected = clf.predict(np.hstack([test[:, :5], np.zeros((300, 1))]))
    assert clf.score(str(tmp_path / "te.zarr")) == pytest.approx(np.mean(expected == y))
    assert clf.history_[-1]["val_accuracy"] == pytest.approx(np.mean(expected == y))
    for rows in ("te.zarr", "te.svm"):
        capsys.readouterr()
        assert main(["predict", model, str(tmp_path / rows), "--out", str(out),
                     "--overwrite"]) == 0, capsys.readouterr().err
        np.testing.assert_array_equal(np.load(out), expected)
    # rows of columns (not svmlight's numbered features) keep their width
    dsvm.write_arrays(tmp_path / "dense.zarr", test[:, :5], y)
    _one_line_error(_Run(capsys, "eval", model, tmp_path / "dense.zarr"),
                    "has 5 features, but the model")


def test_eval_and_predict_take_a_raw_svmlight_file(small, tmp_path, capsys):
    """#25: a raw svmlight file (LIBSVM's test files, a9a.t) needs nothing but the model's
    number of features: eval and predict both convert it; other raw rows for a model trained
    without hashing get one line from both (convert them first)."""
    from dsvm.cli import main

    _, _, _, model = small
    X = np.random.default_rng(1).normal(size=(60, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    rows = tmp_path / "rows.t"
    rows.write_text("".join(f"{label:+d} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in
                                                       enumerate(x)) + "\n"
                            for x, label in zip(X, y)))
    capsys.readouterr()
    assert main(["eval", str(model), str(rows), "--json"]) == 0, capsys.readouterr().err
    result = json.loads(capsys.readouterr().out)
    assert main(["predict", str(model), str(rows), "--out", str(tmp_path / "p.npy")]) == 0
    assert result["n_samples"] == 60
    assert result["accuracy"] == pytest.approx(np.mean(np.load(tmp_path / "p.npy") == y))
    assert result["accuracy"] > 0.9
    table = tmp_path / "rows.tsv"
    table.write_text("y\ta\n1\t0.5\n")
    for command in (["eval", model, table], ["predict", model, table, "--out",
                                             tmp_path / "q.npy"]):
        _one_line_error(_Run(capsys, *command), "rows.tsv is not a dsvm dataset",
                        "convert it first")
    assert not list(tmp_path.glob(".dsvm-*"))
