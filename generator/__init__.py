"""soagen: Spatial Operator Algebra recursions → straight-line C for one robot.

Stages, each a subpackage handing one data type to the next (docs/architecture.md):
``model`` (Robot: URDF, builder, DH, bundled robots, parameters) → ``reference``
(numpy) → ``passes`` (the recursions on symbols; the catalogue ``functions``
names a maker per function) → ``program`` (SSA statements, CSE, op counts) →
``targets`` (C99 + SIMD, CUDA, microcontrollers: emit, compile, wrap) → at the
top ``codegen`` (robot → programs), ``pipeline`` (:func:`build`), ``check``, ``cli``.
"""
import os as _os
import sys as _sys

# sympy memoises its constructors in LRU caches of SYMPY_CACHE_SIZE entries (default 1000), read
# once, when sympy is first imported (soagen imports it only when a build records).  A recording
# builds the same products and sums many times over, and takes less time with 100 000 entries
# (docs/sympy_cache.md: python benchmarks/sympy_cache.py).  A size the user set is kept, and a sympy
# imported before soagen keeps the size it has.
_os.environ.setdefault("SYMPY_CACHE_SIZE", "100000")

from soagen import reference  # noqa: E402
from soagen._version import __version__  # noqa: F401
from soagen.model import dh, mjcf, mujoco_convention, parameters, pinocchio_convention, robots, urdf
from soagen.model.builder import RobotBuilder
from soagen.model.closed_chain import ClosedChain, closed_chain
from soagen.model.errors import ModelWarning, RobotError, SingularError
from soagen.model.mjcf import load_mjcf
from soagen.model.robot import Body, Robot, Tip, point_tip
from soagen.model.urdf import load_urdf
from soagen.options import Options, OptionsError
from soagen.reference.identifiable import base_parameters_of as base_parameters
from soagen._lazy import submodules as _submodules

_submodule = _submodules(__name__)

# the model's user-facing modules under the short names the guide uses (``import soagen.robots``)
for _short, _module in (("dh", dh), ("mjcf", mjcf), ("mujoco_convention", mujoco_convention),
                        ("parameters", parameters), ("pinocchio_convention", pinocchio_convention),
                        ("robots", robots), ("urdf", urdf)):
    _sys.modules[f"{__name__}.{_short}"] = _module


def build(robot, options=None, /, **kwargs):
    """Generate, compile and load the module for ``robot`` (a Robot or a
    ClosedChain); ``options`` an :class:`Options` or its fields as keywords
    (``precision="float"``, ``functions=[...]``, ``variants=None``,
    ``target="cuda"``, ...); see :func:`soagen.pipeline.build`."""
    from soagen.pipeline import build as _build
    return _build(robot, options, **kwargs)


def __getattr__(name):
    # names that import sympy or cffi, loaded when first asked for
    if name == "latency":
        from soagen.program import latency
        return latency
    if name == "unpack_upper":
        from soagen.targets.c99.module import unpack_upper
        return unpack_upper
    return _submodule(name)     # soagen.functions, soagen.cli, soagen.passes, ...: imported on first access


__all__ = ["Body", "ClosedChain", "ModelWarning", "Options", "OptionsError", "Robot", "RobotBuilder", "RobotError",
           "SingularError", "Tip", "base_parameters", "build", "closed_chain", "dh", "load_mjcf", "load_urdf", "mjcf",
           "mujoco_convention", "parameters", "pinocchio_convention", "point_tip", "reference", "robots", "unpack_upper", "urdf"]
