"""The package's shape: one-way layers, no import cycles, numba and distributed where they belong,
and modules, classes and functions small enough to read in one sitting (issue #15).

Layers, lowest first (a module may import its own layer and the ones below, never above):
utilities (``_config``, ``_validation``, ``exceptions``) <- kernels <- data, io <- solvers,
features <- combine <- distributed <- training <- estimators <- cli. ``dsvm/__init__.py`` (lazy
public names) and ``dsvm/__main__.py`` stand above them all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dsvm"

RANKS = {
    "_config": 0, "_validation": 0, "exceptions": 0, "_typing": 0,
    "kernels": 1,
    "data": 2, "io": 2,
    "solvers": 3, "features": 3,
    "combine": 4,
    "distributed": 5,
    "training": 6,
    "estimators": 7,
    "cli": 8,
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


def _too_long(node: ast.AST, limit: int) -> bool:
    return node.end_lineno - node.lineno + 1 > limit  # type: ignore[attr-defined]


def test_modules_classes_and_functions_stay_small():
    """No module over 600 lines, no class over 300, no function over 80 (kernels excepted)."""
    long = []
    for name, path in MODULES.items():
        if name.startswith("dsvm.kernels"):
            continue
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            long.append(f"module {name}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and _too_long(node, MAX_CLASS_LINES):
                long.append(f"class {name}.{node.name}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    _too_long(node, MAX_FUNCTION_LINES):
                long.append(f"function {name}.{node.name}")
    assert not long, long
