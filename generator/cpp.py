"""soagen's functions for C++: the C files, an Eigen header and a CMake package.

    import soagen
    soagen.cpp.write(robot, "out/panda")      # panda.h, panda.c, panda.hpp, CMakeLists.txt, ...

then ``cmake -S out/panda -B build && cmake --build build && cmake --install build --prefix PREFIX``
and, in a C++ project, ``find_package(panda CONFIG REQUIRED)`` and
``target_link_libraries(app PRIVATE panda::eigen)``::

    #include "panda.hpp"
    Eigen::Matrix<double, 6, 7> J = panda::jacobian(q);     // the layout converted by Eigen
    panda::inverse_dynamics(q, qd, qdd, tau);               // into tau, no copy, no heap

The same files as ``soagen generate --target cpp``; :mod:`soagen.targets.cpp.emit` says what
the header declares.
"""
from __future__ import annotations

import os


def write(robot, out, name=None, **options):
    """Write the C++ package of ``robot`` into the folder ``out`` (made if missing; soagen's files in it
    replaced, others kept).

    Parameters
    ----------
    robot : Robot
    out : str or path-like   the folder
    name : str, optional     the C prefix, file stem and C++ namespace (default: the robot's name made a
                             C identifier)
    options : fields of :class:`soagen.Options` (``functions=``, ``precision=``, ...)

    Returns
    -------
    list of str   the paths written
    """
    from soagen.codegen import programs
    from soagen.options import Options
    from soagen.targets import plugin
    from soagen.targets.common.inert import c_name

    opts = Options(**options)
    stem = c_name(name or robot.name)
    progs, _ = programs(robot, opts)
    os.makedirs(out, exist_ok=True)
    paths = []
    writer = plugin("cpp")
    for fname, text in plugin(writer.BESIDE).files(robot, progs, stem, opts) + writer.files(robot, progs, stem, opts):
        path = os.path.join(out, fname)
        with open(path, "w") as fh:
            fh.write(text)
        paths.append(path)
    return paths
