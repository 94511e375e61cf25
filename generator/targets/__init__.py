"""Targets: each emits, compiles and wraps the programs for one kind of machine.

A target is a plug-in: a subpackage here and one line of :data:`REGISTRY`.  Its
package offers

* ``files(target, programs, name, options) -> [(file name, text)]``: what
  ``soagen generate --target NAME`` writes;
* optionally ``build(target, options, name, functions, record, cache_dir, progress) -> module``:
  what ``soagen.build(robot, target=NAME)`` returns (``record()`` gives
  ``(programs, timings)`` and is called only when the build is not cached; ``progress(done,
  total, label)``, when given, is called as the stages advance).

Targets import the stages below them (model, program, functions, options) and
:mod:`soagen.targets.common`; never :mod:`soagen.codegen` or :mod:`soagen.pipeline`.
"""
from __future__ import annotations

import importlib

from soagen.options import OptionsError

#: target name -> the package implementing it
REGISTRY = {
    "c": "soagen.targets.c99",
    "simd": "soagen.targets.simd",
    "cuda": "soagen.targets.cuda",
    "cuda-host": "soagen.targets.cuda",
    "casadi": "soagen.targets.casadi",
    "cpp": "soagen.targets.cpp",
}


def plugin(name, need="files"):
    """The package of target ``name``, which must offer ``need`` (``"files"`` or ``"build"``)."""
    offering = [t for t, mod in REGISTRY.items() if hasattr(importlib.import_module(mod), need)]
    if name not in offering:
        raise OptionsError(f"target must be one of {', '.join(map(repr, offering))}, got {name!r}")
    return importlib.import_module(REGISTRY[name])


from soagen._lazy import submodules as _submodules  # noqa: E402

__getattr__ = _submodules(__name__)   # soagen.targets.<submodule> without importing it first
