"""The stages end to end: robot → programs (:mod:`soagen.codegen`) → a target's module
(:mod:`soagen.targets`), cached by content hash."""
from __future__ import annotations

from soagen import codegen
from soagen.functions import select
from soagen.options import Options
from soagen.targets import plugin
from soagen.targets.common.c_text import c_name


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
    progress : callable, optional   ``progress(done, total, label)`` while recording

    Returns
    -------
    Module
        Wrappers taking and returning numpy arrays; ``.ops`` holds the op counts
        and ``.timings`` the seconds spent per stage of this call (a
        :class:`soagen.targets.cuda.CudaModule` for the CUDA targets).
    """
    options = Options(**fields) if options is None else options.but(**fields)
    target = plugin(options.target, need="build")
    name = c_name(name or robot.name)
    functions = [s.name for s in select(robot, options)]

    def record():
        # the functions selected above, by name (select's warnings were given once, above)
        return codegen.programs(robot, options.but(functions=tuple(functions)), progress)

    return target.build(robot, options, name, functions, record, cache_dir)
