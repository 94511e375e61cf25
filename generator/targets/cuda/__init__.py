"""CUDA batches: the functions __host__ __device__, a kernel per function, DLPack arrays
(``target="cuda"``: nvcc; ``target="cuda-host"``: the same kernels as loops on the CPU)."""
from __future__ import annotations

from soagen.targets.cuda.compile import build
from soagen.targets.cuda.emit import emit_cuda
from soagen.targets.cuda.module import CudaModule


def files(target, programs, name, options):
    """``<name>.cu`` and ``<name>_cuda.h``."""
    cu = emit_cuda(target, programs, name, options.precision)
    return [(f"{name}.cu", cu.source), (f"{name}_cuda.h", cu.header)]


__all__ = ["CudaModule", "build", "emit_cuda", "files"]
