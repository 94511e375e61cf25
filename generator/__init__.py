"""soagen: Spatial Operator Algebra recursions → straight-line C for one robot.

Stages (one module each, one data type handed on; docs/architecture.md):
``builder`` (checks) → ``model`` (Robot) → ``reference`` (numpy) → ``sweeps`` + makers in ``dynamics``,
``kinematics``, ``operational_space`` (symbolic passes, listed in
``functions``) → ``program`` (SSA statements, CSE, op counts) → ``emit`` (C
text via Jinja) → ``cffi_build`` (cffi module) → ``cli``.
"""
from . import reference
from .builder import RobotBuilder
from .closed_chain import ClosedChain, closed_chain
from .model import Body, ModelWarning, Robot, RobotError, Tip
from .options import Options, OptionsError
from .reference import SingularError
from .urdf import load_urdf

__version__ = "0.1.0"


def build(robot, options=None, /, **kwargs):
    """Generate, compile and load the C module for ``robot`` (a Robot or a
    ClosedChain); ``options`` an :class:`Options` or its fields as keywords
    (``precision="float"``, ``functions=[...]``, ``variants=None``,
    ``target="cuda"``, ...); see :func:`soagen.cffi_build.build`."""
    from .cffi_build import build as _build
    return _build(robot, options, **kwargs)


__all__ = ["ClosedChain", "closed_chain", "Body", "ModelWarning", "Options", "OptionsError", "Robot", "RobotBuilder",
           "RobotError", "SingularError", "Tip", "build", "load_urdf", "reference"]
