"""One build per (robot key, options) per test session, shared by every test."""
from __future__ import annotations

import soagen

_modules = {}


def built(key, make_target, **options):
    """``(target, module)`` of the target made by ``make_target()`` under
    :class:`soagen.Options` ``options``; built once per key and options, so
    tests asking for different functions or precisions never share a module."""
    opts = soagen.Options(**options)
    if (key, opts) not in _modules:
        target = make_target()
        _modules[key, opts] = (target, soagen.build(target, opts))
    return _modules[key, opts]
