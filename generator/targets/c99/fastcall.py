"""The module methods' C entry: ``fastcall.c`` (a CPython extension written against the
vectorcall protocol and numpy's C API) compiled once per Python, numpy and compiler into the
build cache, and the :class:`Caller` objects made from it.

A method called with arrays that already are what the C reads (aligned, C-contiguous, of the
module's dtype and shape) costs the C function, three checks a value and an allocation per
output; everything else goes to the Python method, as before (fastcall.c says what is taken
where).  Measured with ``python benchmarks/python_calls.py``.
"""
from __future__ import annotations

import functools
import importlib.machinery
import os
import subprocess
import sys
import sysconfig
import warnings
from importlib import resources

from soagen.targets.cache import cache_key, cache_root, cached
from soagen.targets.common.compiler import compile_object, load_extension

MODULE = "_soagen_fastcall"
#: gcc flags of the extension: it is small, so -O2 costs a second once per Python and numpy
ARGS = ["-O2", "-DNDEBUG"]


def _source():
    return (resources.files("soagen.targets.c99") / "fastcall.c").read_text()


def _make(work, source):
    import numpy as np

    (work / "fastcall.c").write_text(source)
    obj = compile_object(work / "fastcall.c", work / "fastcall.o", work,
                         [*ARGS, "-I", sysconfig.get_paths()["include"], "-I", np.get_include()])
    library = f"{MODULE}{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    link = ["-bundle", "-undefined", "dynamic_lookup"] if sys.platform == "darwin" else ["-shared"]
    res = subprocess.run([os.environ.get("CC", "cc"), *link, "-o", str(work / library), str(obj)],
                         capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"linking {library} failed:\n{res.stderr}")
    os.remove(obj)
    return dict(library=library)


@functools.lru_cache(maxsize=None)
def caller_type():
    """The ``Caller`` type of the compiled extension (built at the first call in a cache), or
    None when it cannot be built here: the methods then are the Python ones (a warning says so)."""
    import numpy as np

    source = _source()
    key = cache_key("fastcall", source, sys.version, np.__version__, os.environ.get("CC", "cc"))
    try:
        final, meta = cached(cache_root(), f"fastcall-{key}", lambda work: _make(work, source))
        return load_extension(final / meta["library"], MODULE).Caller
    except (OSError, RuntimeError, ImportError) as exc:
        lines = [line for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
        why = next((line for line in lines if "error" in line), lines[0])
        warnings.warn(f"soagen: the C entry of the module methods could not be built ({why.strip()}); "
                      "methods are called through Python, several microseconds slower", RuntimeWarning, stacklevel=3)
        return None
