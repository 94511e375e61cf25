"""Modules that travel: a built module, and each of its methods, pickles by reference -- the robot
(every number and name of it) and the build options, never the compiled library -- so that
``multiprocessing``, joblib, Dask and Ray can ship it to worker processes and other machines.

:func:`soagen.build` gives each module it makes its recipe, ``(soagen.pipeline.load, (robot,
options, name))``; unpickling calls it, which builds the module in that process as
:func:`soagen.build` would: loaded from that process's cache (``$SOAGEN_CACHE`` or
``~/.cache/soagen``) when the cache holds the build, else compiled into it.  The robot travels
whole, so the unpickled module is that robot's own whatever another robot of the same name left
in a cache (an entry's key is the robot's fingerprint, :mod:`soagen.targets.cache`).
"""
from __future__ import annotations

import copyreg


def reduce(module):
    """``module.__reduce__()``: the recipe :func:`soagen.build` gave it.

    Parameters
    ----------
    module : Module or CudaModule

    Returns
    -------
    tuple   ``(load, (robot, options, name))``: :func:`soagen.pipeline.load` and the robot (or
            closed chain), the :class:`soagen.Options` and the ``name`` of the build

    Raises
    ------
    TypeError   for a module not made by :func:`soagen.build` (it has no recipe)
    """
    recipe = getattr(module, "_recipe", None)
    if recipe is None:
        raise TypeError(f"cannot pickle {module!r}: it was not made by soagen.build, so it has no recipe")
    return recipe


def method_reduce(method):
    """How a module's fast method (a :mod:`~soagen.targets.c99.fastcall` ``Caller``, which wraps the
    Python method) pickles: as ``getattr(module, name)``."""
    fallback = method.__wrapped__
    return getattr, (fallback.__self__, fallback.__name__)


def register(kind):
    """Make the objects of ``kind`` (the fast methods' type; None: there is none) pickle by
    :func:`method_reduce`."""
    if kind is not None and copyreg.dispatch_table.get(kind) is not method_reduce:
        copyreg.pickle(kind, method_reduce)
