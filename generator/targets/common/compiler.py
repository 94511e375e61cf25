"""The host C compiler: translation units compiled in parallel into objects."""
from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from soagen.options import jobs


def compile_object(source, obj, folder, args):
    """``$CC`` (default ``cc``) ``args -fPIC -c source -o obj -I folder``; -> ``obj``."""
    cmd = [os.environ.get("CC", "cc"), *args, "-fPIC", "-c", str(source), "-o", str(obj), "-I", str(folder)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"compiling {source} failed:\n{res.stderr}")
    return obj


def compile_units(units, folder, args):
    """Compile ``[(name, C text)]`` with ``args`` in parallel (``$SOAGEN_JOBS`` workers, the biggest
    first, so that the pool's last job is a small one); -> the object paths, in the units' order."""
    work = []
    for name, text in units:
        path = Path(folder) / f"{name}.c"
        path.write_text(text)
        work.append((path, path.with_suffix(".o"), Path(folder), list(args)))
    order = sorted(range(len(work)), key=lambda k: -len(units[k][1]))
    with ThreadPoolExecutor(jobs()) as pool:
        done = dict(zip(order, pool.map(lambda job: compile_object(*job), [work[k] for k in order])))
    for path, _, _, _ in work:
        path.unlink()
    return [done[k] for k in range(len(work))]
