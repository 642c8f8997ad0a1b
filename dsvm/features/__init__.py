"""Kernel feature maps (random Fourier features, Nystroem) and the kernel expansion of BSGD.

The maps are scikit-learn transformers, so :mod:`dsvm.features.maps` imports scikit-learn
(1.3 s); they are loaded on first use, so that a worker importing :mod:`dsvm.features.sampling`
for a linear fit does not pay for it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RFF", "FeatureMap", "KernelExpansion", "Nystroem", "map_from_arrays"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from dsvm.features import maps

        return getattr(maps, name)
    raise AttributeError(f"module 'dsvm.features' has no attribute {name!r}")
