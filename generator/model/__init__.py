"""The robot model and its readers: :class:`Robot` (bodies, tips, gravity, actuators), the
builder and its checks, URDF, DH rows, the bundled robots, inertial parameters, closed chains."""
from soagen.model.actuators import Actuators
from soagen.model.errors import ModelWarning, RobotError, SingularError
from soagen.model.robot import FLOATING, PRISMATIC, REVOLUTE, SPHERICAL, Body, Robot, Tip

__all__ = ["Actuators", "Body", "FLOATING", "ModelWarning", "PRISMATIC", "REVOLUTE", "Robot", "RobotError",
           "SPHERICAL", "SingularError", "Tip"]


from soagen._lazy import submodules as _submodules  # noqa: E402

__getattr__ = _submodules(__name__)   # soagen.model.<submodule> without importing it first
