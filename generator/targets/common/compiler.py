"""The host C compiler: translation units compiled in parallel into objects, as they come, and the
extension modules built from them loaded."""
from __future__ import annotations

import functools
import heapq
import importlib.machinery
import importlib.util
import os
import subprocess
import threading
import time
from pathlib import Path

from soagen.options import jobs
from soagen.program.printer import statement_count

#: flags gcc gets for a translation unit of more than :data:`LONG_UNIT_STATEMENTS` statements.  On one
#: long straight-line function its register allocator's hard-register assignment takes most of the
#: time: fewer reload candidates considered and no load CSE after reload shorten that compile
#: (docs/parts.md gives gcc's seconds and memory on long functions with these flags) and leave the run
#: time about as it was; on short functions they can cost run time, hence only for long units
GCC_LONG_UNIT_ARGS = ["--param=lra-max-considered-reload-pseudos=10", "-fno-gcse-after-reload"]
LONG_UNIT_STATEMENTS = 5000


def is_long(statements):
    """Whether a unit of ``statements`` statements is long: it gets :data:`GCC_LONG_UNIT_ARGS`, and its
    sines and cosines are computed where each statement needs them
    (:func:`soagen.targets.common.c_text.trig_lines`)."""
    return statements > LONG_UNIT_STATEMENTS


@functools.lru_cache(maxsize=None)
def is_gcc(cc):
    """Whether the compiler ``cc`` is GCC (``cc --version`` names the Free Software Foundation)."""
    try:
        res = subprocess.run([cc, "--version"], capture_output=True, text=True)
    except OSError:
        return False
    return "Free Software Foundation" in res.stdout and "clang" not in res.stdout


def unit_args(args, text):
    """``args`` for a translation unit of C ``text``, with :data:`GCC_LONG_UNIT_ARGS` for a long one."""
    if is_long(statement_count(text)) and is_gcc(os.environ.get("CC", "cc")):
        return [*args, *GCC_LONG_UNIT_ARGS]
    return list(args)


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


class Slots:
    """The CPUs of one build, shared by its recording workers and its compiler runs; a compile
    that waits for a slot gets the next one freed before a recording does."""

    def __init__(self, count=None):
        self._free, self._compiles_waiting = count or jobs(), 0
        self._cond = threading.Condition()

    def __enter__(self):              # a compile: wait for a slot
        with self._cond:
            self._compiles_waiting += 1
            while not self._free:
                self._cond.wait()
            self._compiles_waiting -= 1
            self._free -= 1
        return self

    def __exit__(self, *exc):
        self.release()

    def acquire(self):
        """A recording: take a slot if one is free and no compile waits for it; -> taken."""
        with self._cond:
            if self._free and not self._compiles_waiting:
                self._free -= 1
                return True
            return False

    def release(self):
        with self._cond:
            self._free += 1
            self._cond.notify_all()


class CompileQueue:
    """Translation units compiled by ``$SOAGEN_JOBS`` threads as they are added, the biggest
    waiting unit first (so that the last job is a small one).

    A build hands the units of each function over as soon as the function is printed, while
    other functions are still being recorded (:func:`soagen.targets.c99.compile.pipelined`);
    ``slots`` (:class:`Slots`, shared with the recording workers) keeps the running jobs of both
    within the machine's CPUs.

    Parameters
    ----------
    folder : path        where the ``.c`` files are written and compiled (``-I folder``)
    args : list of str   compiler flags (a unit may bring its own)
    slots : Slots, optional   CPU slots shared with the recording (default: ``$SOAGEN_JOBS`` of its own)
    seconds : dict, optional   gets each unit's compile time under its file stem
    progress : callable, optional   ``progress(done, added so far, "<what> <unit>")`` as units finish
    """

    def __init__(self, folder, args, slots=None, seconds=None, progress=None, what="compile"):
        self.folder, self.args, self.seconds = Path(folder), list(args), seconds
        self.progress, self.what = progress, what
        self.slots = slots or Slots()
        self._heap, self._objects, self._errors, self._added = [], {}, [], 0
        self._closed = False
        self._cond = threading.Condition()
        self._threads = []

    def add(self, units):
        """Queue ``[(name, C text)]`` or ``(name, C text, own args)``; ``name`` may hold a subfolder."""
        work = []
        for name, text, *own in units:
            path = self.folder / f"{name}.c"
            path.write_text(text)
            work.append((-len(text), self._added + len(work), name, path,
                         list(own[0]) if own else unit_args(self.args, text)))
        with self._cond:
            self._added += len(work)
            for item in work:
                heapq.heappush(self._heap, item)
            self._cond.notify_all()
        while len(self._threads) < min(jobs(), self._added):
            thread = threading.Thread(target=self._work, daemon=True)
            thread.start()
            self._threads.append(thread)

    def _work(self):
        while True:
            with self._cond:
                while not self._heap and not self._closed:
                    self._cond.wait()
                if not self._heap:
                    return
                _, _, name, path, args = heapq.heappop(self._heap)
            try:
                with self.slots:
                    obj = compile_object(path, path.with_suffix(".o"), self.folder, args, self.seconds)
                path.unlink()
            except Exception as exc:          # noqa: BLE001 -- raised again by wait()
                self._errors.append(exc)
                obj = None
            with self._cond:
                self._objects[name] = obj
                done = len(self._objects)
            if self.progress:
                self.progress(done, self._added, f"{self.what} {Path(name).name.split('__')[-1]}")

    def wait(self):
        """Compile what is left; -> ``{unit name: object path}``.  Raises the first failure."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for thread in self._threads:
            thread.join()
        if self._errors:
            raise self._errors[0]
        return dict(self._objects)


def compile_units(units, folder, args, seconds=None, progress=None, what="compile"):
    """Compile ``[(name, C text)]`` (or ``(name, C text, its own args)``) with ``args`` in parallel
    (:class:`CompileQueue`); -> the object paths, in the units' order."""
    queue = CompileQueue(folder, args, seconds=seconds, progress=progress, what=what)
    queue.add(units)
    objects = queue.wait()
    return [objects[name] for name, *_ in units]


def load_extension(path, modname):
    """Import the compiled extension (cffi, Boost.Python) at ``path`` as ``modname``."""
    loader = importlib.machinery.ExtensionFileLoader(modname, str(path))
    spec = importlib.util.spec_from_file_location(modname, str(path), loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod
