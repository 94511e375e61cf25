"""The SIMD batches of a built C99 module: their sources written beside it, compiled and
linked into a library of their own (they call no scalar function)."""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from soagen.targets.common.compiler import compile_units
from soagen.targets.simd.emit import SIMD_FLAGS


def write_simd(simd, folder):
    """The SIMD batches' sources into ``folder`` (``<name>_simd.h/.c``, one unit per function under
    ``simd/``); -> the meta entry describing them."""
    folder = Path(folder)
    (folder / f"{simd.name}_simd.h").write_text(simd.header)
    (folder / f"{simd.name}_simd.c").write_text(simd.source)
    (folder / "simd").mkdir()
    for fname, text in simd.units:
        (folder / "simd" / f"{fname}.c.txt").write_text(text)
    return dict(library=f"lib{simd.name}_simd.so", cdef=simd.cdef, units=[f for f, _ in simd.units])


def compile_simd(folder, meta, args, progress=None):
    """Compile and link the SIMD batches of the module in ``folder`` once (under a file lock, like
    the module) with the compiler arguments ``args``; -> the shared library's path.  ``progress``:
    called as ``progress(done, total, "compile SIMD <function>")`` as units finish."""
    folder = Path(folder)
    info = meta["simd"]
    library = folder / info["library"]
    with open(folder / "simd.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not library.exists():
            work = Path(tempfile.mkdtemp(prefix="simd.", dir=folder))
            try:
                units = [(f"{work.name}/{fname}", (folder / "simd" / f"{fname}.c.txt").read_text())
                         for fname in info["units"]]
                objects = compile_units(units, folder, [*args, *SIMD_FLAGS], progress=progress, what="compile SIMD")
                cc = os.environ.get("CC", "cc")
                res = subprocess.run([cc, "-shared", *map(str, objects), "-lm", "-o", str(work / library.name)],
                                     capture_output=True, text=True)
                if res.returncode:
                    raise RuntimeError(f"linking the SIMD batches failed:\n{res.stderr}")
                os.replace(work / library.name, library)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    return library


def simd_library(folder, meta, args):
    """The SIMD batches of the built module in ``folder``, compiled if needed, opened; -> (ffi, lib)."""
    import cffi

    library = compile_simd(folder, meta, args)
    ffi = cffi.FFI()
    ffi.cdef(meta["simd"]["cdef"])
    return ffi, ffi.dlopen(str(library))
