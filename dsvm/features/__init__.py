"""Kernel feature maps (random Fourier features, Nystroem) and the kernel expansion of BSGD."""

from dsvm.features.maps import RFF, FeatureMap, KernelExpansion, Nystroem, map_from_arrays

__all__ = ["RFF", "FeatureMap", "KernelExpansion", "Nystroem", "map_from_arrays"]
