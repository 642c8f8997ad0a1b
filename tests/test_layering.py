"""The package's shape: one-way layers, no import cycles, numba and distributed where they belong,
and modules, classes and functions small enough to read in one sitting (issue #15).

Layers, lowest first (a module may import its own layer and the ones below, never above):
utilities (``_config``, ``_validation``, ``exceptions``) <- kernels <- data, io <- solvers,
features <- combine <- engine <- distributed <- training <- estimators <- cli.
``dsvm/__init__.py`` (lazy public names) and ``dsvm/__main__.py`` stand above them all.

Within that order, narrower rules (issue #26): the estimators import only the training layer and
the shared helpers; only ``dsvm.distributed`` knows the Client and only it and ``dsvm.data``
import dask; no function takes more than ``MAX_PARAMETERS`` parameters; and sizes are counted in
lines of code, without docstrings, comments or blank lines, so that a limit is never met by
trimming documentation.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dsvm"

RANKS = {
    "_config": 0, "_validation": 0, "exceptions": 0, "_typing": 0, "_lazy": 0,
    "kernels": 1,
    "data": 2, "io": 2,
    "solvers": 3, "features": 3,
    "combine": 4,
    "engine": 5,
    "distributed": 6,
    "training": 7,
    "estimators": 8,
    "cli": 9,
}
TOP = {"dsvm", "dsvm.__main__"}
MAX_MODULE_LINES, MAX_CLASS_LINES, MAX_FUNCTION_LINES = 600, 300, 80


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(path: Path) -> list[str]:
    """Every dsvm module ``path`` imports (function-level imports included)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.append(sub if sub in MODULES else node.module)
    return [m for m in found if m == "dsvm" or m.startswith("dsvm.")]


GRAPH = {name: sorted(set(_imports(path)) - {name}) for name, path in MODULES.items()}


def _rank(module: str) -> int:
    return RANKS[module.split(".")[1]]


def test_every_module_has_a_layer():
    unknown = [m for m in MODULES if m not in TOP and m.split(".")[1] not in RANKS]
    assert not unknown, f"modules outside the layers {sorted(RANKS)}: {unknown}"


def test_no_arrow_climbs_the_layers():
    climbing = [f"{src} -> {dst}" for src, dsts in GRAPH.items() if src not in TOP
                for dst in dsts if dst not in TOP and _rank(dst) > _rank(src)]
    assert not climbing, "imports that climb the layers:\n" + "\n".join(climbing)


def test_no_import_cycle():
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        stack.append(module)
        for dep in GRAPH.get(module, []):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(GRAPH):
        if module not in state and (cycle := visit(module)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


def _decorator_names(node: ast.AST) -> list[str]:
    names = []
    for dec in getattr(node, "decorator_list", []):
        target = dec.func if isinstance(dec, ast.Call) else dec
        names.append(ast.unparse(target))
    return names


def test_only_kernels_compile_numba_code():
    offenders = []
    for name, path in MODULES.items():
        if name.startswith("dsvm.kernels"):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if any("jit" in d or d.endswith("overload") or d.endswith("intrinsic")
                   for d in _decorator_names(node)):
                offenders.append(f"{name}:{node.lineno}")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) \
                    else [node.module or ""]
                if any(m == "numba" or m.startswith("numba.") for m in mods):
                    offenders.append(f"{name}:{node.lineno} imports numba")
    assert not offenders, offenders


def test_only_distributed_knows_the_dask_client():
    offenders = []
    for name, path in MODULES.items():
        if name.startswith("dsvm.distributed"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(m == "distributed" or m.startswith("distributed.") for m in mods):
                offenders.append(f"{name}:{node.lineno}")
    assert not offenders, offenders


def test_the_command_line_does_not_reach_into_distributed():
    reaching = [f"{src} -> {dst}" for src, dsts in GRAPH.items() if src.startswith("dsvm.cli")
                for dst in dsts if dst.startswith("dsvm.distributed")]
    assert not reaching, reaching


def _docstring_lines(tree: ast.AST) -> set[int]:
    """The lines of every module, class and function docstring of ``tree``."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))  # type: ignore[operator]
    return lines


_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
             tokenize.ENCODING, tokenize.ENDMARKER}


def code_lines(text: str) -> set[int]:
    """The lines of ``text`` that hold code: not blank, not only a comment, not a docstring
    (a statement or a string over several lines counts every line it spans)."""
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in _NOT_CODE:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines - _docstring_lines(ast.parse(text))


def _lines_in(node: ast.AST, code: set[int]) -> int:
    first, last = node.lineno, node.end_lineno  # type: ignore[attr-defined]
    return sum(1 for line in code if first <= line <= last)


def test_sizes_count_code_without_docstrings_comments_or_blank_lines():
    sample = (
        '"""Module notes,\n\non three lines."""\n'          # 1-3: docstring
        "import os  # a comment after code: counts\n"       # 4
        "\n"                                                # 5
        "class A:\n"                                        # 6
        '    """A long\n    docstring."""\n'                # 7-8: docstring
        "\n"                                                # 9
        "    # a comment on its own line\n"                 # 10
        "    def f(self, x):\n"                             # 11
        '        """One line."""\n'                         # 12: docstring
        "        s = '''a string, not a docstring,\n"       # 13
        "        on two lines'''\n"                         # 14
        "        return (x +\n"                             # 15
        "                1)\n"                              # 16
    )
    code = code_lines(sample)
    assert code == {4, 6, 11, 13, 14, 15, 16}, sorted(code)
    cls = next(n for n in ast.walk(ast.parse(sample)) if isinstance(n, ast.ClassDef))
    assert _lines_in(cls, code) == 6


def test_modules_classes_and_functions_stay_small():
    """No module over 600 lines of code, no class over 300, no function over 80 (kernels
    excepted), counted without docstrings, comments and blank lines (:func:`code_lines`)."""
    long = []
    for name, path in MODULES.items():
        if name.startswith("dsvm.kernels"):
            continue
        text = path.read_text()
        code = code_lines(text)
        if len(code) > MAX_MODULE_LINES:
            long.append(f"module {name}: {len(code)} lines of code")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and _lines_in(node, code) > MAX_CLASS_LINES:
                long.append(f"class {name}.{node.name}: {_lines_in(node, code)} lines of code")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    _lines_in(node, code) > MAX_FUNCTION_LINES:
                long.append(f"function {name}.{node.name}: {_lines_in(node, code)} lines of code")
    assert not long, long


# -- the estimators reach the layers below through training only ---------------------------------
# dsvm.io.models is the model file (a record of arrays and JSON, read and written; no compute, no
# dask): saving and loading a fitted estimator is the estimator's own business, and a module in
# training that only passed the record through would add a hop and no meaning. The rest of io
# (checkpoints: solver state) belongs to the training layer.
ESTIMATORS_MAY_IMPORT = ("dsvm.estimators", "dsvm.training", "dsvm._validation",
                         "dsvm.exceptions", "dsvm.io.models")


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_the_estimators_import_only_training_and_the_shared_helpers():
    reaching = [f"{src} -> {dst}" for src, dsts in GRAPH.items()
                if src.startswith("dsvm.estimators")
                for dst in dsts if not _within(dst, ESTIMATORS_MAY_IMPORT)]
    assert not reaching, "estimators past the training layer:\n" + "\n".join(reaching)


# -- dask where the layers allow it ---------------------------------------------------------------
# ``distributed`` (the Client, workers, futures): dsvm.distributed only (the test above).
# ``dask`` (collections, delayed, config): dsvm.distributed, and dsvm.data, whose converters and
# dask sources read and build dask arrays and DataFrames. Nowhere else: the estimators, the
# command line, solvers, combiners, kernels, io and features run without dask.
DASK_USERS = ("dsvm.distributed", "dsvm.data")
# Known exceptions, each with why and where it goes (the test fails once one is no longer needed).
DASK_DEBT = {
    "dsvm.training.inputs": "turns dask arrays and DataFrames into sources (chunks aligned, "
                            "label sets, read_parquet): moves to data/ beside the Source "
                            "protocol once its cluster counts take the watched compute as an "
                            "argument (data/ cannot import distributed/), #26 item 3",
}


def _imported_names(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of the module at ``path``, function-level ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def test_dask_is_imported_only_where_the_layers_allow():
    users = {}
    for name, path in MODULES.items():
        lines = [line for line, mod in _imported_names(path) if _within(mod, ("dask",))]
        if lines:
            users[name] = lines
    offenders = [f"{name} (lines {lines})" for name, lines in users.items()
                 if not _within(name, DASK_USERS) and name not in DASK_DEBT]
    assert not offenders, "dask imported outside distributed/ and data/: " + ", ".join(offenders)
    paid = sorted(set(DASK_DEBT) - set(users))
    assert not paid, f"no longer import dask: remove them from DASK_DEBT: {paid}"


# -- a limit on the parameters of a function ------------------------------------------------------
# Counted without self/cls; *args and **kwargs count one each. The kernels (dsvm/kernels, the
# numba code) are left to the kernel rewrite of #26 item 4, which brings their jitted functions to
# at most 10 arguments with typed records of state.
MAX_PARAMETERS = 10
# Where more are allowed, and how many at most (None: no ceiling), with the reason. An entry
# that is no longer needed fails the test, so that the list only shrinks.
_SKLEARN = ("scikit-learn's estimator contract: every hyper-parameter is a keyword-only argument "
            "of __init__ (get_params reads the signature)")
_PUBLIC = "public function whose options are keyword-only"
_DEBT = "to take a typed record of options (#26)"
PARAMETER_EXEMPTIONS: dict[str, tuple[int | None, str]] = {
    "dsvm.estimators.classifier:SVMClassifier.__init__": (None, _SKLEARN),
    "dsvm.estimators.regressor:SVMRegressor.__init__": (None, _SKLEARN),
    "dsvm.data.convert:convert": (24, _PUBLIC + ", one per flag of `dsvm convert`"),
    "dsvm.data.arrays:write_arrays": (12, _PUBLIC + ", convert's for arrays"),
    "dsvm.data.synthetic:write_synthetic": (12, _PUBLIC + ", the generator's"),
    "dsvm.data.table_csv_source:TableCSVSource.__init__": (11, "convert's CSV/TSV options, "
                                                               "keyword-only; " + _DEBT),
    "dsvm.data.writer:DatasetWriter.__init__": (14, "the dataset's layout, keyword-only; "
                                                    + _DEBT),
    "dsvm.data.planning:_write": (15, "keyword-only; " + _DEBT),
    "dsvm.data.arrays:_write_blocks": (15, "keyword-only; " + _DEBT),
    "dsvm.engine.local:Engine.reduce": (11, "the engine protocol's reduce: task, source, "
                                                  "groups, combine and keyword options; " + _DEBT),
    "dsvm.engine.local:LocalEngine.reduce": (11, "implements Engine.reduce"),
    "dsvm.distributed.engine:DaskEngine.reduce": (11, "implements Engine.reduce"),
    "dsvm.training.loop:run_epochs": (14, "keyword-only; the stochastic loop, replaced by the "
                                          "one pipeline of #26 item 1"),
}


def _parameter_counts(path: Path) -> dict[str, int]:
    """``qualname -> parameters`` of every function of the module at ``path``."""
    counts: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = child.args
                named = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
                if named and named[0] in ("self", "cls"):
                    named = named[1:]
                counts[f"{prefix}{child.name}"] = (len(named) + (a.vararg is not None)
                                                   + (a.kwarg is not None))
                visit(child, f"{prefix}{child.name}.<locals>.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text()), "")
    return counts


def test_no_function_takes_too_many_parameters():
    over = {f"{name}:{qual}": n for name, path in MODULES.items()
            if not name.startswith("dsvm.kernels")
            for qual, n in _parameter_counts(path).items() if n > MAX_PARAMETERS}
    offenders = []
    for key, n in sorted(over.items()):
        ceiling = PARAMETER_EXEMPTIONS.get(key, (MAX_PARAMETERS, ""))[0]
        if ceiling is not None and n > ceiling:
            offenders.append(f"{key}: {n} parameters (at most {ceiling})")
    assert not offenders, "functions with too many parameters (pass a record of options):\n" \
        + "\n".join(offenders)
    stale = sorted(set(PARAMETER_EXEMPTIONS) - set(over))
    assert not stale, f"within {MAX_PARAMETERS} parameters now (or gone): remove them from " \
                      f"PARAMETER_EXEMPTIONS: {stale}"


# -- an in-memory fit runs without the cluster's code -----------------------------------------
# NumPy/SciPy input trains in this process (dsvm.engine.local.LocalEngine): neither dask, nor
# distributed, nor any dsvm.distributed module is loaded for it (#26 item 3). Known exceptions,
# each with why; an entry no longer imported fails the test, so that the list only shrinks.
IN_MEMORY_DEBT: dict[str, str] = {}
_IN_MEMORY_FITS = """
import sys, warnings
warnings.simplefilter("ignore")
import numpy as np
from dsvm import SVMClassifier, SVMRegressor
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 4))
y = (X[:, 0] > 0).astype(int)
for solver in ("auto", "sgd", "pegasos", "asset", "nesvm", "cocoa", "bsgd"):
    clf = SVMClassifier(solver=solver, max_epochs=2).fit(X, y, validation=(X[:50], y[:50]))
    assert clf.score(X, y) > 0.6, (solver, clf.score(X, y))
SVMClassifier(solver="sgd", early_stopping=True, max_epochs=3).fit(X, y).predict(X)
SVMRegressor(max_epochs=2).fit(X, X[:, 0]).score(X, X[:, 0])
print(" ".join(sorted(m for m in sys.modules
                      if m.split(".")[0] in ("dask", "distributed")
                      or m.startswith("dsvm.distributed"))))
"""


def test_an_in_memory_fit_loads_no_cluster_code():
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(PACKAGE.parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _IN_MEMORY_FITS], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = set(done.stdout.split())
    assert not loaded - set(IN_MEMORY_DEBT), \
        f"an in-memory fit loaded cluster code: {sorted(loaded - set(IN_MEMORY_DEBT))}"
    paid = sorted(set(IN_MEMORY_DEBT) - loaded)
    assert not paid, f"no longer loaded by an in-memory fit: remove from IN_MEMORY_DEBT: {paid}"


# What a worker imports to run the tasks of a linear fit (unpickling a stream task, a
# CoCoA+ round, a NESVM pass and the solvers they carry).
_WORKER_SIDE = """
import sys
import dsvm.engine.tasks, dsvm.engine.cocoa_tasks, dsvm.distributed.engine
import dsvm.solvers.sgd, dsvm.solvers.pegasos, dsvm.solvers.asset, dsvm.solvers.cocoa
import dsvm.solvers.nesvm, dsvm.solvers.grid, dsvm.combine
print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn')[:5])
"""


def test_a_worker_running_a_linear_fit_does_not_import_scikit_learn():
    """scikit-learn is for the estimators and the kernel maps (sklearn transformers); a worker
    of a linear fit never needs it, and importing it cost every new worker 1.3 s."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(PACKAGE.parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _WORKER_SIDE], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]", done.stdout
