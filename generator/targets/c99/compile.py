"""The C99 target's build: the emitted C compiled into a per-robot Python module by cffi,
cached by content hash (:mod:`soagen.targets.cache`)."""
from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from soagen.program import parts
from soagen.targets.c99.emit import Emitter
from soagen.targets.cache import cache_key, cache_root, cached, made_from
from soagen.targets.common.compiler import GCC_LONG_UNIT_ARGS, LONG_UNIT_STATEMENTS, CompileQueue, Slots, load_extension
from soagen.targets.simd.emit import emit_simd
from soagen.targets.simd.library import compile_simd, write_simd

# -O3 -march=native: the module is compiled on the machine that loads it (the CPU is part of the
# cache key); FMA (contraction is off by default under -std=c99) and wider registers cut 20-30% per
# call.  SLP vectorization (packing scalar statements into short vectors) stays on: timed interleaved
# against -fno-tree-slp-vectorize (gcc 12, EPYC), it made the UR5's forward kinematics 1.13x, the
# Panda's M 1.15x, its forward dynamics 1.11x and its dtau 1.05x faster (it was
# turned off when, on earlier code, it had made the Panda's M 1.36x slower).  The benchmarks time the
# generated C compiled with these flags, unit by unit, as a build compiles it.
COMPILE_ARGS = ["-O3", "-std=c99", "-march=native", "-ffp-contract=fast"]


def compile_args(options):
    """:data:`COMPILE_ARGS` with the optimization level of ``options.optimize``."""
    return [f"-{options.optimize}" if a == "-O3" else a for a in COMPILE_ARGS]


def compile_module(csource, folder, modname, args=COMPILE_ARGS, seconds=None, progress=None, queue=None):
    """Compile ``csource`` with its cffi wrapper into ``folder``; returns the library path.

    Every generated function (or part of one, :mod:`soagen.program.parts`) is its own
    translation unit, and cffi's wrapper (the Python entry points, ``ffi.emit_c_code``)
    another, all compiled in parallel and linked into the extension.  The functions'
    objects stay in ``folder/objects`` (nothing links them later: the SIMD batches are a
    library of their own); the wrapper and the library are in ``folder/build``.
    ``seconds``: a dict that gets each function's compile time (its parts' summed);
    ``progress(done, total, label)`` is called as units finish; ``queue``: the
    :func:`unit_queue` that already compiles the functions' units (a pipelined build).
    """
    import cffi

    folder = Path(folder)
    unit_seconds = {}
    if queue is None:
        queue = unit_queue(folder, args, unit_seconds, progress)
        queue.add([(f"objects/{csource.name}__{fname}", text) for fname, text in csource.units])
    else:
        unit_seconds = queue.seconds
    (folder / f"{csource.name}.h").write_text(csource.header)
    (folder / f"{csource.name}.c").write_text(csource.source)
    ffi = cffi.FFI()
    ffi.cdef(csource.cdef)
    ffi.set_source(modname, f'#include "{csource.name}.h"\n{csource.argv}', compiler_verbose=0)   # no "generating ..." line
    wrapper = folder / "build" / f"{modname}.c"
    ffi.emit_c_code(str(wrapper))
    # the wrapper at -O0: the Panda's raw call took the same time with a wrapper at -O0, -O1 and -O3
    # (0.32-0.33 us), and -O3 took 1 s of gcc where -O0 took 0.25 s
    python = ["-I", sysconfig.get_paths()["include"]]
    wrapper_args = [a for a in args if not a.startswith("-O")] + ["-O0", *python]
    queue.add([(f"build/{modname}", wrapper.read_text(), wrapper_args)])
    objects = queue.wait()
    if seconds is not None:
        owner = {part: fname for fname, cut in csource.parts.items() for part in cut}
        for stem, s in unit_seconds.items():
            if "__" in stem:
                fname = stem.split("__", 1)[1]
                seconds[owner.get(fname, fname)] = seconds.get(owner.get(fname, fname), 0.0) + s
    units = [f"objects/{csource.name}__{fname}" for fname, _ in csource.units] + [f"build/{modname}"]
    library = folder / "build" / f"{modname}{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    link = ["-bundle", "-undefined", "dynamic_lookup"] if sys.platform == "darwin" else ["-shared"]
    res = subprocess.run([os.environ.get("CC", "cc"), *link, "-o", str(library), *(str(objects[u]) for u in units),
                          "-lm"], capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"linking {library.name} failed:\n{res.stderr}")
    return library


def unit_queue(folder, args, seconds=None, progress=None, slots=None):
    """A :class:`~soagen.targets.common.compiler.CompileQueue` for a module's units in ``folder``
    (``objects/`` and ``build/`` made here)."""
    folder = Path(folder)
    (folder / "objects").mkdir(exist_ok=True)
    (folder / "build").mkdir(exist_ok=True)
    return CompileQueue(folder, args, slots=slots, seconds={} if seconds is None else seconds, progress=progress)


def pipelined(target, options, name, record, folder, modname, args, progress=None):
    """Record, print and compile at once: each function's units are compiled as soon as its
    program is final, while the next ones record, the jobs of both within ``$SOAGEN_JOBS``
    CPU slots (compiles first).  -> (programs, csource, library path, timings)."""
    slots = Slots()
    queue = unit_queue(folder, args, progress=progress, slots=slots)
    emitter = Emitter(target, name, options.precision)
    finals = {}

    def ready(prog):
        finals[prog.name] = prog
        units = emitter.function(prog, finals.get(prog.calls))
        queue.add([(f"objects/{name}__{unit}", text) for unit, text in units])

    t0 = time.perf_counter()
    programs, timings = record(ready=ready, slots=slots)
    t1 = time.perf_counter()
    csource = emitter.csource(programs)
    timings["emit"] = sum(csource.seconds.values())
    library = compile_module(csource, folder, modname, args, progress=progress, queue=queue)
    timings["compile"] = sum(queue.seconds.values())
    timings["compile (after generate)"] = time.perf_counter() - t1
    timings["total (wall)"] = time.perf_counter() - t0
    return programs, csource, library, timings


def build(target, options, name, functions, record, cache_dir=None, progress=None):
    """The C99 target's plug-in entry (:mod:`soagen.targets`): the cached cffi module of ``target``.

    Parameters
    ----------
    target : Robot or ClosedChain
    options : Options
    name : str               C prefix
    functions : list of str  the C functions, in header order
    record : callable        ``record(ready=None, slots=None) -> (programs, timings)``
                             (:func:`soagen.codegen.programs`), called only when not cached
    cache_dir : path, optional
    progress : callable, optional   ``progress(done, total, label)`` while emitting and compiling

    Returns
    -------
    Module
    """
    from soagen.targets.c99.module import Module

    args = compile_args(options)
    key = cache_key(target.fingerprint(), repr(options), name, ",".join(functions), " ".join(args),
                    f"parts {parts.PART_STATEMENTS} above {parts.SPLIT_ABOVE}",
                    f"long units over {LONG_UNIT_STATEMENTS} statements {' '.join(GCC_LONG_UNIT_ARGS)}")
    modname = f"_soagen_{name}_{key}"
    timings = {}

    def make(work):
        programs, _, lib, stage_timings = pipelined(target, options, name, record, work, modname, args, progress)
        timings.update(stage_timings)
        shutil.move(str(lib), str(work / lib.name))
        shutil.rmtree(work / "build", ignore_errors=True)
        simd, simd_meta = None, None
        if options.simd:             # compiled here, in the build, never inside a later call
            t0 = time.perf_counter()
            simd = emit_simd(target, programs, name, options.precision)
            simd_meta = write_simd(simd, work)
            compile_simd(work, {"simd": simd_meta}, args, progress)
            timings["compile simd"] = time.perf_counter() - t0
        return dict(name=name, library=lib.name, precision=options.precision, parameters=options.parameters,
                    compile_args=args, ops={p.name: p.ops for p in programs},
                    choices={p.name: p.algorithm for p in programs if p.algorithm},
                    signatures={p.name: [[a.name, a.size] for a in p.inputs + p.outputs] for p in programs},
                    simd=simd_meta, upper=simd.upper if simd else {})

    final, meta = cached(Path(cache_dir) if cache_dir else cache_root(), key, make,
                         made_from("c", target, options, name))
    t0 = time.perf_counter()
    lib = load_extension(final / meta["library"], modname)
    timings["load"] = time.perf_counter() - t0
    return Module(target, lib, meta, timings, final)
