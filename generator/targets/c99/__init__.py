"""The C99 target: one translation unit per function, compiled by cffi into a cached Python module
(with the SIMD batches of :mod:`soagen.targets.simd` linked beside it)."""
from __future__ import annotations

from soagen.targets.c99.compile import build
from soagen.targets.c99.emit import emit


def files(target, programs, name, options):
    """``<name>.h`` and ``<name>.c``."""
    csource = emit(target, programs, name, options.precision)
    return [(f"{name}.h", csource.header), (f"{name}.c", csource.source)]


__all__ = ["build", "files"]
