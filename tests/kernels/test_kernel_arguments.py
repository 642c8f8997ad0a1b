"""No jitted function of dsvm.kernels takes more than 10 arguments (issue #26, STYLE.md §2).

State travels in a few typed records instead (PassRows / PassModel, DcdModel / DcdParams,
NesvmLoss / NesvmShares, ProbeLoss, the step rules): umap's 27-argument kernels are what to
avoid. The count is read from the Python function under each dispatcher, and from every other
function of the package (the overload stubs and their implementations' factories), so a new
wide kernel fails here whatever decorator it uses.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import numba
import pytest

import dsvm.kernels
from dsvm.kernels._jit import njit_serial

MAX_ARGUMENTS = 10


def _python_function(obj):
    """The plain function behind a numba dispatcher (or the function itself), else None."""
    if isinstance(obj, numba.core.dispatcher.Dispatcher):
        return obj.py_func
    if isinstance(obj, types.FunctionType):
        return obj
    return None


def functions_of(module):
    """(qualified name, function) of every function defined in ``module``, jitted or not."""
    for name, obj in vars(module).items():
        fn = _python_function(obj)
        if fn is not None and fn.__module__ == module.__name__:
            yield f"{module.__name__}.{name}", fn


def too_wide(modules):
    """'name: n arguments' for each function of ``modules`` taking more than MAX_ARGUMENTS
    positional arguments (keyword-only ones, as in the Python-side ``hparams.make_hp``, are
    named at every call; a jitted kernel has none)."""
    out = []
    for module in modules:
        for name, fn in functions_of(module):
            n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                    for p in inspect.signature(fn).parameters.values())
            if n > MAX_ARGUMENTS:
                out.append(f"{name}: {n} arguments")
    return out


def kernel_modules():
    return [importlib.import_module(f"dsvm.kernels.{m.name}")
            for m in pkgutil.iter_modules(dsvm.kernels.__path__)]


def test_no_kernel_takes_more_than_ten_arguments():
    modules = kernel_modules()
    names = {name for module in modules for name, _ in functions_of(module)}
    # the enumeration sees the kernels whose width this limit is about
    for kernel in ("passes.pegasos_pass", "passes.sgd_pass", "passes.asset_pass",
                   "passes.sgd_prox_pass", "stochastic.stochastic_steps", "dcd.dcd_pass",
                   "nesvm.nesvm_pass", "bsgd.bsgd_pass", "probe.probe_loss_sums"):
        assert f"dsvm.kernels.{kernel}" in names
    assert too_wide(modules) == []


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="no dispatchers with NUMBA_DISABLE_JIT=1")
def test_a_wide_jitted_function_is_reported():
    module = types.ModuleType("dsvm.kernels.fake_wide")

    def wide(a, b, c, d, e, f, g, h, i, j, k):  # pragma: no cover - never called
        return a

    def narrow(a, b, c, d, e, f, g, h, i, j):  # pragma: no cover - never called
        return a

    for fn in (wide, narrow):
        fn.__module__ = module.__name__
        setattr(module, fn.__name__, njit_serial(cache=False)(fn))
    assert too_wide([module]) == ["dsvm.kernels.fake_wide.wide: 11 arguments"]
