"""soagen: Spatial Operator Algebra recursions → straight-line C for one robot.

Stages (one module each, one data type handed on):
``builder`` (checks) → ``model`` (Robot) → ``reference`` (numpy) → ``recursion`` (symbolic sweeps)
→ ``program`` (SSA statements, CSE, op counts) → ``emit`` (C text via Jinja)
→ ``cffi_build`` (cffi module) → ``cli``.
"""
from . import reference
from .closed_chain import ClosedChain, closed_chain
from .builder import RobotBuilder
from .model import Body, ModelWarning, Robot, RobotError, Tip
from .reference import SingularError
from .urdf import load_urdf

__version__ = "0.1.0"


def build(robot, precision="double", **kwargs):
    """Generate, compile and load the C module for ``robot`` (see :mod:`soagen.cffi_build`)."""
    from .cffi_build import build as _build
    return _build(robot, precision=precision, **kwargs)


__all__ = ["ClosedChain", "closed_chain", "Body", "ModelWarning", "Robot", "RobotBuilder", "RobotError", "SingularError",
           "Tip", "build", "load_urdf", "reference"]
