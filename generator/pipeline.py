"""The stages end to end: robot → programs (:mod:`soagen.codegen`) → a target's module
(:mod:`soagen.targets`), cached by content hash."""
from __future__ import annotations

import sys
import time

from soagen import codegen
from soagen.functions import select
from soagen.options import Options
from soagen.targets import plugin
from soagen.targets.common.inert import c_name


def build(robot, options=None, /, name=None, cache_dir=None, progress=None, **fields):
    """Generate, compile (once per content hash) and load the module for ``robot``.

    Parameters
    ----------
    robot : Robot or ClosedChain   (positional: ``target`` is the Options field)
    options : Options, optional   or its fields as keywords: ``precision``
        ("double", "float"), ``functions`` (only these C functions), ``variants``
        (also the algorithm variants of these families, None: all), ``trig_inputs``
        (C functions take cos/sin of q as inputs; the wrappers compute them),
        ``simd`` (also compile the SIMD batches; default False), ``optimize``
        ("O3" default, "O0" builds fastest), ``target`` ("c"; "cuda" or "cuda-host":
        :mod:`soagen.targets.cuda`)
    name : str, optional        C prefix (default: the target's name)
    cache_dir : path, optional  default ``$SOAGEN_CACHE`` or ``~/.cache/soagen``
    progress : callable or True, optional   ``progress(done, total, label)`` as the stages advance
        (label: "record <function>", "emit C", "compile <function>", ...); True: a progress line on
        stderr (:func:`terminal_progress`); None (default): quiet

    Returns
    -------
    Module
        Wrappers taking and returning numpy arrays; ``.ops`` holds the op counts
        and ``.timings`` the seconds spent per stage of this call (a
        :class:`soagen.targets.cuda.CudaModule` for the CUDA targets).
    """
    options = Options(**fields) if options is None else options.but(**fields)
    if progress is True:
        progress = terminal_progress()
    target = plugin(options.target, need="build")
    recipe = (load, (robot, options, name))       # what the module pickles as
    name = c_name(name or robot.name)
    specs = select(robot, options)
    functions = [s.name for s in specs]

    def record(ready=None, slots=None):
        return codegen.programs(robot, options.but(functions=tuple(functions)), progress, specs=specs,
                                ready=ready, slots=slots)

    module = target.build(robot, options, name, functions, record, cache_dir, progress)
    if hasattr(module, "_recipe"):
        module._recipe = recipe
    return module


#: (robot kind and fingerprint, options, name, cache folder) -> the module :func:`load` made in this process
_loaded = {}


def load(robot, options, name=None):
    """``build(robot, options, name=name)`` once per process: what a pickled module unpickles to
    (:mod:`soagen.targets.common.travel`).

    The module is loaded from this process's cache (``$SOAGEN_CACHE`` or ``~/.cache/soagen``) when it
    holds the build, else built into it; the process keeps it, so a worker that unpickles a method
    for every task loads the module once.

    Parameters
    ----------
    robot : Robot or ClosedChain
    options : Options
    name : str or None   the ``name`` given to :func:`build`

    Returns
    -------
    Module
    """
    from soagen.targets.cache import cache_root

    memo = (type(robot).__name__, robot.fingerprint(), options, name, str(cache_root()))
    if memo not in _loaded:
        _loaded[memo] = build(robot, options, name=name)
    return _loaded[memo]


def terminal_progress(stream=None):
    """A ``progress(done, total, label)`` for ``stream`` (default stderr): on a terminal, one line
    rewritten in place (a bar, the stage and function, the seconds since it was made); elsewhere
    (logs, pipes, CI) one line per stage, when it first reports (the stages overlap: the pipelined
    build compiles while it records, and a compile queue's total grows as units are added)."""
    stream = stream or sys.stderr
    start = time.perf_counter()
    seen = set()      # the stages that have had their line (off a terminal)

    def show(done, total, label):
        now = time.perf_counter()
        if not stream.isatty():
            name = label.split(" ", 1)[0]
            if name not in seen:
                seen.add(name)
                count = f", {total} {'step' if total == 1 else 'steps'}" if label == name else ""
                stream.write(f"  {name}: started at {now - start:.1f} s{count}\n")
                stream.flush()
            return
        width = 24
        fill = int(width * done / max(total, 1))
        stream.write(f"\r  [{'#' * fill}{'.' * (width - fill)}] {done}/{total} {label[:44]:<44} "
                     f"{now - start:6.1f} s")
        if done == total:                 # a stage ends: its line stays
            stream.write("\n")
        stream.flush()

    return show
