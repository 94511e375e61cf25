"""The CUDA target's build: ``<name>.cu`` compiled by nvcc (``target="cuda"``) or by the host C++
compiler with the CUDA qualifiers defined away (``target="cuda-host"``), cached by content hash."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from soagen.targets.cache import cache_key, cache_root, cached, made_from
from soagen.targets.cuda.emit import emit_cuda
from soagen.targets.cuda.module import CudaModule

#: nvcc flags; ``$SOAGEN_NVCC_ARCH`` replaces ``native`` (needed where the GPU is not on the
#: building machine, e.g. ``sm_90`` for an H100/H200). Contraction into FMA is nvcc's default.
NVCC_ARGS = ["-O3", "--shared", "-Xcompiler", "-fPIC"]
#: host C++ flags of the "cuda-host" target: those of the cffi module (soagen.targets.c99.compile.COMPILE_ARGS)
HOST_ARGS = ["-O3", "-march=native", "-ffp-contract=fast", "-x", "c++", "-std=c++14",
             "-shared", "-fPIC"]


def compile_command(source, library, host, optimize="O3"):
    """The command compiling ``source`` (a .cu) into the shared ``library`` at ``-{optimize}``
    (the flags' -O3 replaced, as the C99 target does)."""
    level = lambda args: [f"-{optimize}" if a == "-O3" else a for a in args]  # noqa: E731
    if host:
        return [os.environ.get("CXX", "c++"), *level(HOST_ARGS), str(source), "-o", str(library), "-lm"]
    arch = os.environ.get("SOAGEN_NVCC_ARCH", "native")
    return [os.environ.get("NVCC", "nvcc"), *level(NVCC_ARGS), f"-arch={arch}", str(source), "-o", str(library)]


def build(target, options, name, functions, record, cache_dir=None, progress=None):
    """The CUDA target's plug-in entry (:mod:`soagen.targets`): generate, compile (once per content
    hash) and load the CUDA module of ``target`` (``options.target`` "cuda" or "cuda-host");
    ``record()`` gives ``(programs, timings)``; -> CudaModule."""
    if options.trig_inputs:
        raise ValueError("trig_inputs is for the C target (the kernels compute their own sin/cos)")
    host = options.target == "cuda-host"
    command = compile_command(Path(f"{name}.cu"), Path("lib.so"), host, options.optimize)
    if not host and shutil.which(command[0]) is None:
        raise RuntimeError(f"target='cuda' needs nvcc ({command[0]!r} is not on PATH; $NVCC names another); "
                           "target='cuda-host' runs the same kernels on the CPU")
    key = cache_key(target.fingerprint(), repr(options), name, ",".join(functions + [shlex.join(command)]))
    timings = {}

    def make(work):
        programs, record_timings = record()
        timings.update(record_timings)
        cu = emit_cuda(target, programs, name, options.precision)
        (work / f"{name}.cu").write_text(cu.source)
        (work / f"{name}_cuda.h").write_text(cu.header)
        t0 = time.perf_counter()
        res = subprocess.run(compile_command(work / f"{name}.cu", work / f"lib{name}_cuda.so", host, options.optimize),
                             capture_output=True, text=True)
        if res.returncode:
            raise RuntimeError(f"compiling {name}.cu failed:\n{res.stderr[-4000:]}")
        timings["compile"] = time.perf_counter() - t0
        return dict(name=name, library=f"lib{name}_cuda.so", precision=options.precision, host=host,
                    ops={p.name: p.ops for p in programs},
                    inputs={p.name: len(p.inputs) for p in programs},
                    status={p.name: p.returns_status for p in programs},
                    signatures={p.name: [[a.name, a.size] for a in p.inputs + p.outputs] for p in programs},
                    upper=cu.upper)

    final, meta = cached(Path(cache_dir) if cache_dir else cache_root(), key, make,
                         made_from(options.target, target, options, name))
    return CudaModule(target, final / meta["library"], meta, timings, final)
