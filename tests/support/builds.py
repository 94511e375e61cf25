"""One build per (robot key, options) per test session, shared by every test.

Modules are compiled ``-O0`` unless a test asks otherwise (``optimize=...``): the suite
checks what the functions compute, not how fast, and gcc -O3 on long straight-line
functions is most of a build's time.  The disk cache (``$SOAGEN_CACHE``, one folder for
the whole run, shared by the xdist workers: tests/conftest.py) lets a worker load what
another built.
"""
from __future__ import annotations

import soagen

_modules = {}


def built(key, make_target, **options):
    """``(target, module)`` of the target made by ``make_target()`` under
    :class:`soagen.Options` ``options`` (``optimize`` "O0" unless given); built once per key
    and options, so tests asking for different functions or precisions never share a module."""
    opts = soagen.Options(**{"optimize": "O0", **options})
    if (key, opts) not in _modules:
        target = make_target()
        _modules[key, opts] = (target, soagen.build(target, opts))
    return _modules[key, opts]
