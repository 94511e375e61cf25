"""The host C compiler: translation units compiled in parallel into objects."""
from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from soagen.options import jobs


def compile_object(source, obj, folder, args, seconds=None):
    """``$CC`` (default ``cc``) ``args -fPIC -c source -o obj -I folder``; -> ``obj``.  ``seconds``:
    a dict that gets the compile's wall time under the source's stem."""
    cmd = [os.environ.get("CC", "cc"), *args, "-fPIC", "-c", str(source), "-o", str(obj), "-I", str(folder)]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True)
    if seconds is not None:
        seconds[Path(source).stem] = time.perf_counter() - t0
    if res.returncode:
        raise RuntimeError(f"compiling {source} failed:\n{res.stderr}")
    return obj


def compile_units(units, folder, args, seconds=None, progress=None, what="compile"):
    """Compile ``[(name, C text)]`` (or ``(name, C text, its own args)``) with ``args`` in parallel (``$SOAGEN_JOBS`` workers, the biggest
    first, so that the pool's last job is a small one); -> the object paths, in the units' order.
    ``seconds``: a dict that gets each unit's compile time under its file stem; ``progress``:
    called as ``progress(done, total, "<what> <unit>")`` as units finish."""
    work = []
    for name, text, *own in units:
        path = Path(folder) / f"{name}.c"
        path.write_text(text)
        work.append((path, path.with_suffix(".o"), Path(folder), list(own[0] if own else args), seconds))
    order = sorted(range(len(work)), key=lambda k: -len(units[k][1]))
    finished = []

    def one(k):
        obj = compile_object(*work[k])
        finished.append(k)
        if progress:
            progress(len(finished), len(work), f"{what} {Path(units[k][0]).name.split('__')[-1]}")
        return obj

    with ThreadPoolExecutor(jobs()) as pool:
        done = dict(zip(order, pool.map(one, order)))
    for path, *_ in work:
        path.unlink()
    return [done[k] for k in range(len(work))]
