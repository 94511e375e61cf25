"""SIMD batches: the same statements on GCC/Clang vectors, one state per lane.  The C99 target
links them into its module; ``soagen generate --target simd`` writes them beside the C99 files."""
from __future__ import annotations

from soagen.targets.simd.emit import emit_simd


#: the target whose files go beside these (the SIMD header includes its header)
BESIDE = "c"


def files(target, programs, name, options):
    """``<name>_simd.h`` and ``<name>_simd.c``."""
    simd = emit_simd(target, programs, name, options.precision)
    return [(f"{name}_simd.h", simd.header), (f"{name}_simd.c", simd.source)]


__all__ = ["BESIDE", "files"]
