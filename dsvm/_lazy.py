"""Public names of a package imported on first use (PEP 562): ``import dsvm`` and the ``dsvm``
command start in a fraction of a second, and a submodule imports without its whole package."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, exports: dict[str, str],
                 namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``exports`` maps a public name to the module
    that defines it; a name loaded once is stored in ``namespace`` (the package's globals), so
    later lookups do not come here."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
