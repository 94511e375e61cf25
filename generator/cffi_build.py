"""cffi build: compile the emitted C into a per-robot Python module, cached.

The cache key hashes the robot (every number and name), the precision and
the generator itself (all soagen sources and templates), so a change to any
of them rebuilds.  Builds happen in a private temporary folder and are moved
into place atomically under a file lock: two processes building the same
robot at once both end with a working module.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path


from .codegen import c_name, generate
from .options import Options
from .simd import emit_simd

# -O3 -march=native, as the benchmarks: the module is compiled on the machine that loads it (the CPU is
# part of the cache key); FMA (contraction is off by default under -std=c99) and wider
# registers cut 20-30% per call. No SLP vectorization: packing a few scalar statements into short
# vectors made the Panda's M 1.36x and its Lambda 1.18x slower (gcc 12, docs/simd.md), and it fused
# other multiply-adds than the SIMD batches, whose rows then differed from single calls in the last bits
COMPILE_ARGS = ["-O3", "-std=c99", "-march=native", "-ffp-contract=fast", "-fno-tree-slp-vectorize"]


def cpu_identity():
    """Machine and CPU model (Linux), so a shared cache never loads -march=native
    code built for another CPU."""
    import platform

    model = ""
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith(("model name", "flags"))),
                         "")
    except OSError:
        pass
    return f"{platform.machine()} {model}"


def cache_root():
    """``$SOAGEN_CACHE`` or ``~/.cache/soagen``."""
    return Path(os.environ.get("SOAGEN_CACHE") or Path.home() / ".cache" / "soagen")


def generator_digest():
    """Hash of soagen's own source and templates."""
    h = hashlib.sha256()
    for pkg in ("soagen", "soagen.templates"):
        folder = resources.files(pkg)
        for entry in sorted(folder.iterdir(), key=lambda p: p.name):
            if entry.name.endswith((".py", ".j2")):
                h.update(entry.name.encode())
                h.update(entry.read_bytes())
    return h.hexdigest()


def cache_key(target, options, name, functions):
    """Hash of everything a built module depends on: the target's numbers and
    names, the options, the selected functions, soagen itself, the compiler
    flags and the CPU."""
    h = hashlib.sha256()
    for part in (target.fingerprint(), repr(options), name, ",".join(functions), generator_digest(),
                 " ".join(COMPILE_ARGS), cpu_identity()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _compile_object(args):
    source, obj, folder, flags = args
    cc = os.environ.get("CC", "cc")
    cmd = [cc, *COMPILE_ARGS, *flags, "-fPIC", "-c", str(source), "-o", str(obj), "-I", str(folder)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"compiling {source} failed:\n{res.stderr}")
    return obj


def _compile_units(units, folder, flags=()):
    """Compile ``[(name, C text)]`` in parallel (``$SOAGEN_JOBS`` workers, the biggest first, so that
    the pool's last job is a small one); -> the object paths, in the units' order."""
    from .codegen import jobs

    jobs_ = []
    for name, text in units:
        path = Path(folder) / f"{name}.c"
        path.write_text(text)
        jobs_.append((path, path.with_suffix(".o"), Path(folder), list(flags)))
    order = sorted(range(len(jobs_)), key=lambda k: -len(units[k][1]))
    with ThreadPoolExecutor(jobs()) as pool:
        done = dict(zip(order, pool.map(_compile_object, [jobs_[k] for k in order])))
    for path, _, _, _ in jobs_:
        path.unlink()
    return [done[k] for k in range(len(jobs_))]


def compile_module(csource, folder, modname):
    """Compile ``csource`` with cffi into ``folder``; returns the library path.

    Every generated function is its own translation unit, compiled in
    parallel; cffi then links the objects with its wrapper.  The objects stay
    in ``folder/objects`` (the SIMD batches, compiled later, link them for
    their scalar tails).
    """
    import cffi

    folder = Path(folder)
    (folder / f"{csource.name}.h").write_text(csource.header)
    (folder / f"{csource.name}.c").write_text(csource.source)
    (folder / "objects").mkdir()
    objects = _compile_units([(f"objects/{csource.name}__{fname}", text) for fname, text in csource.units], folder)
    ffi = cffi.FFI()
    ffi.cdef(csource.cdef)
    ffi.set_source(modname, f'#include "{csource.name}.h"', include_dirs=[str(folder)],
                   extra_objects=[str(o) for o in objects], extra_compile_args=COMPILE_ARGS, libraries=["m"])
    return Path(ffi.compile(tmpdir=str(folder / "build"), verbose=False))


def write_simd(simd, folder):
    """The SIMD batches' sources into ``folder`` (``<name>_simd.h/.c``, one unit per function under
    ``simd/``), compiled on first use by :func:`simd_library`; -> the meta entry describing them."""
    folder = Path(folder)
    (folder / f"{simd.name}_simd.h").write_text(simd.header)
    (folder / f"{simd.name}_simd.c").write_text(simd.source)
    (folder / "simd").mkdir()
    for fname, text in simd.units:
        (folder / "simd" / f"{fname}.c.txt").write_text(text)
    return dict(library=f"lib{simd.name}_simd.so", cdef=simd.cdef, units=[f for f, _ in simd.units])


def simd_library(folder, meta):
    """The SIMD batches of the built module in ``folder``: compiled and linked with the module's
    scalar objects once (under a file lock, like the module), then opened; -> (ffi, lib)."""
    import cffi

    folder = Path(folder)
    info = meta["simd"]
    library = folder / info["library"]
    with open(folder / "simd.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not library.exists():
            from .simd import SIMD_FLAGS

            work = Path(tempfile.mkdtemp(prefix="simd.", dir=folder))
            try:
                units = [(f"{work.name}/{fname}", (folder / "simd" / f"{fname}.c.txt").read_text())
                         for fname in info["units"]]
                objects = _compile_units(units, folder, SIMD_FLAGS)
                cc = os.environ.get("CC", "cc")
                res = subprocess.run([cc, "-shared", *map(str, objects), *map(str, sorted((folder / "objects").glob(
                    "*.o"))), "-lm", "-o", str(work / library.name)], capture_output=True, text=True)
                if res.returncode:
                    raise RuntimeError(f"linking the SIMD batches failed:\n{res.stderr}")
                os.replace(work / library.name, library)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    ffi = cffi.FFI()
    ffi.cdef(info["cdef"])
    return ffi, ffi.dlopen(str(library))


def _load(path, modname):
    loader = importlib.machinery.ExtensionFileLoader(modname, str(path))
    spec = importlib.util.spec_from_file_location(modname, str(path), loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def cached(root, key, make):
    """The folder ``root/key`` and its meta.json, made once: ``make(folder)`` fills a private
    temporary folder and returns the meta dict; the folder is moved into place atomically under
    a file lock (two processes building the same key at once both end with a complete folder)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (final / "meta.json").exists():
            work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=root))
            meta = make(work)
            (work / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
            if final.exists():
                shutil.rmtree(final)
            os.replace(work, final)
    return final, json.loads((final / "meta.json").read_text())


def build(robot, options=None, /, name=None, cache_dir=None, progress=None, **fields):
    """Generate, compile (once per content hash) and load the module for ``robot``.

    Parameters
    ----------
    robot : Robot or ClosedChain   (positional: ``target`` is the Options field)
    options : Options, optional   or its fields as keywords: ``precision``
        ("double", "float"), ``functions`` (only these C functions), ``variants``
        (also the algorithm variants of these families, None: all), ``trig_inputs``
        (C functions take cos/sin of q as inputs; the wrappers compute them),
        ``simd`` (SIMD batches, compiled at the first batch call; default True), ``target`` ("c"; "cuda" or "cuda-host":
        :func:`soagen.cuda.build_cuda`)
    name : str, optional        C prefix (default: the target's name)
    cache_dir : path, optional  default ``$SOAGEN_CACHE`` or ``~/.cache/soagen``
    progress : callable, optional

    Returns
    -------
    Module
        Wrappers taking and returning numpy arrays; ``.ops`` holds the op counts
        and ``.timings`` the seconds spent per stage of this call (a
        :class:`soagen.cuda.CudaModule` for the CUDA targets).
    """
    from .functions import select
    from .module import Module

    options = Options(**fields) if options is None else options.but(**fields)
    if options.target != "c":
        from .cuda import build_cuda
        return build_cuda(robot, options, name, cache_dir, progress)
    name = c_name(name or robot.name)
    functions = [s.name for s in select(robot, options)]
    key = cache_key(robot, options, name, functions)
    modname = f"_soagen_{name}_{key}"
    timings = {}

    def make(work):
        # the functions selected above, by name (select's warnings are given once, above)
        gen = generate(robot, options.but(functions=tuple(functions)), name, progress)
        timings.update(gen.timings)
        t0 = time.perf_counter()
        lib = compile_module(gen.csource, work, modname)
        timings["compile"] = time.perf_counter() - t0
        shutil.move(str(lib), str(work / lib.name))
        shutil.rmtree(work / "build", ignore_errors=True)
        simd = emit_simd(robot, gen.programs, name, options.precision) if options.simd else None
        return dict(name=name, library=lib.name, precision=options.precision, parameters=options.parameters,
                    ops={p.name: p.ops for p in gen.programs},
                    choices={p.name: p.algorithm for p in gen.programs if p.algorithm},
                    signatures={p.name: [[a.name, a.size] for a in p.inputs + p.outputs] for p in gen.programs},
                    simd=write_simd(simd, work) if simd else None, upper=simd.upper if simd else {})

    final, meta = cached(Path(cache_dir) if cache_dir else cache_root(), key, make)
    t0 = time.perf_counter()
    lib = _load(final / meta["library"], modname)
    timings["load"] = time.perf_counter() - t0
    return Module(robot, lib, meta, timings, final)
