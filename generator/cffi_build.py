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

# -O3 -march=native, as the benchmarks: the module is compiled on the machine that loads it (the CPU is
# part of the cache key); FMA (contraction is off by default under -std=c99) and wider
# registers cut 20-30% per call
COMPILE_ARGS = ["-O3", "-std=c99", "-march=native", "-ffp-contract=fast"]


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
    source, obj, folder = args
    cc = os.environ.get("CC", "cc")
    cmd = [cc, *COMPILE_ARGS, "-fPIC", "-c", str(source), "-o", str(obj), "-I", str(folder)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"compiling {source} failed:\n{res.stderr}")
    return obj


def compile_module(csource, folder, modname):
    """Compile ``csource`` with cffi into ``folder``; returns the library path.

    Every generated function is its own translation unit, compiled in
    parallel (``$SOAGEN_JOBS`` workers); cffi then links the objects with
    its wrapper.
    """
    import cffi

    from .codegen import jobs

    folder = Path(folder)
    (folder / f"{csource.name}.h").write_text(csource.header)
    (folder / f"{csource.name}.c").write_text(csource.source)
    units = []
    for fname, text in csource.units:
        path = folder / f"{csource.name}__{fname}.c"
        path.write_text(text)
        units.append((path, path.with_suffix(".o"), folder))
    with ThreadPoolExecutor(jobs()) as pool:
        objects = list(pool.map(_compile_object, units))
    ffi = cffi.FFI()
    ffi.cdef(csource.cdef)
    ffi.set_source(modname, f'#include "{csource.name}.h"', include_dirs=[str(folder)],
                   extra_objects=[str(o) for o in objects], extra_compile_args=COMPILE_ARGS, libraries=["m"])
    lib = Path(ffi.compile(tmpdir=str(folder / "build"), verbose=False))
    for path, obj, _ in units:
        path.unlink()
        obj.unlink()
    return lib


def _load(path, modname):
    loader = importlib.machinery.ExtensionFileLoader(modname, str(path))
    spec = importlib.util.spec_from_file_location(modname, str(path), loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def build(target, options=None, name=None, cache_dir=None, progress=None, **fields):
    """Generate, compile (once per content hash) and load the module for ``target``.

    Parameters
    ----------
    target : Robot or ClosedChain
    options : Options, optional   or its fields as keywords: ``precision``
        ("double", "float"), ``functions`` (only these C functions), ``variants``
        (also the algorithm variants of these families, None: all), ``trig_inputs``
        (C functions take cos/sin of q as inputs; the wrappers compute them)
    name : str, optional        C prefix (default: the target's name)
    cache_dir : path, optional  default ``$SOAGEN_CACHE`` or ``~/.cache/soagen``
    progress : callable, optional

    Returns
    -------
    Module
        Wrappers taking and returning numpy arrays; ``.ops`` holds the op counts
        and ``.timings`` the seconds spent per stage of this call.
    """
    from .functions import select
    from .module import Module

    options = Options(**fields) if options is None else options.but(**fields)
    name = c_name(name or target.name)
    functions = [s.name for s in select(target, options)]
    key = cache_key(target, options, name, functions)
    root = Path(cache_dir) if cache_dir else cache_root()
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    modname = f"_soagen_{name}_{key}"
    timings = {}
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (final / "meta.json").exists():
            gen = generate(target, options, name, progress)
            timings.update(gen.timings)
            work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=root))
            t0 = time.perf_counter()
            lib = compile_module(gen.csource, work, modname)
            timings["compile"] = time.perf_counter() - t0
            shutil.move(str(lib), str(work / lib.name))
            shutil.rmtree(work / "build", ignore_errors=True)
            meta = dict(name=name, library=lib.name, precision=options.precision, parameters=options.parameters,
                        ops={p.name: p.ops for p in gen.programs},
                        choices={p.name: p.algorithm for p in gen.programs if p.algorithm},
                        signatures={p.name: [[a.name, a.size] for a in p.inputs + p.outputs]
                                    for p in gen.programs})
            (work / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
            if final.exists():
                shutil.rmtree(final)
            os.replace(work, final)
    meta = json.loads((final / "meta.json").read_text())
    t0 = time.perf_counter()
    lib = _load(final / meta["library"], modname)
    timings["load"] = time.perf_counter() - t0
    return Module(target, lib, meta, timings, final)
