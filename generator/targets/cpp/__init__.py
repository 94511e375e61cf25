"""The C++ target: the C99 functions (``<name>.h``, ``<name>.c``, which also compile as C++) with
an Eigen face, ``<name>.hpp`` (:mod:`soagen.targets.cpp.emit`), and a CMake package and a
pkg-config file that build and install them (``find_package(<name> CONFIG)``, the imported
target ``<name>::<name>``).  From Python: :func:`soagen.cpp.write`."""
from __future__ import annotations

from soagen.options import OptionsError
from soagen.targets.cpp.emit import emit_cpp

#: soagen generate --target cpp writes the C99 files beside its own
BESIDE = "c"


def files(target, programs, name, options):
    """``<name>.hpp``, ``CMakeLists.txt``, ``<name>Config.cmake.in`` and ``<name>.pc``."""
    if len(target.parts) != 1:
        raise OptionsError("the cpp target takes a robot (a tree), not a closed chain")
    return emit_cpp(target, programs, name, options.precision)


__all__ = ["files"]
