"""Robots bundled with soagen, usable offline: ``soagen.robots.example(name)``.

``panda.urdf`` and ``ur5.urdf`` are copies of the files in example-robot-data
(BSD-3-Clause; Franka Emika's Panda description is Apache-2.0, Universal
Robots' UR5 description BSD).  The PUMA 560 is built from the modified-DH
kinematics and the inertial parameters of Armstrong, Khatib & Burdick,
"The Explicit Dynamic Model and Inertial Parameters of the PUMA 560 Arm",
ICRA 1986, as tabulated in Corke's Robotics Toolbox (``mdl_puma560akb``).
"""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import numpy as np

from soagen.model.dh import DHLink, dh_builder, dh_robot
from soagen.model.errors import RobotError
from soagen.model.urdf import load_urdf

EXAMPLES = ("puma560", "panda", "ur5")
#: one line per bundled robot (``soagen examples``)
DESCRIPTIONS = {"puma560": "PUMA 560, 6 joints, Armstrong-Khatib-Burdick 1986 parameters (modified DH)",
                "panda": "Franka Emika Panda, 7 joints (fingers locked), tip panda_hand",
                "ur5": "Universal Robots UR5, 6 joints, tip tool0"}


def urdf_path(name):
    """Path of a bundled URDF (``panda`` or ``ur5``)."""
    return str(resources.files(__name__).joinpath(f"{name}.urdf"))


def erd_root():
    """The ``robots`` folder of the installed example-robot-data wheel (data under
    ``<site-packages>/cmeel.prefix/share/example-robot-data/robots``, found through the
    distribution's file list; ``$EXAMPLE_ROBOT_DATA_MODEL_DIR`` overrides), or None."""
    env = os.environ.get("EXAMPLE_ROBOT_DATA_MODEL_DIR")
    if env and Path(env).is_dir():
        return Path(env)
    import importlib.metadata            # here, not at import: 60 ms of `import soagen`

    marker = "share/example-robot-data/robots/"
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        s = str(f).replace("\\", "/")
        if marker in s:
            return Path(dist.locate_file(s[: s.index(marker) + len(marker)])).resolve()
    return None


def erd_files():
    """The URDF files of example-robot-data, ``{name: path}`` by the names :func:`path` takes: a file's
    stem where no other file nor a bundled robot has it, else its path inside the robots folder;
    ``{}`` without example-robot-data."""
    root = erd_root()
    if root is None:
        return {}
    files = sorted(root.rglob("*.urdf"))
    stems = [f.stem for f in files]
    out = {}
    for f in files:
        unique = stems.count(f.stem) == 1 and f.stem not in _URDF_EXAMPLES
        out[f.stem if unique else f.relative_to(root).as_posix()] = str(f)
    return out


def path(name):
    """The URDF of a robot by name.

    Parameters
    ----------
    name : str
        A bundled robot with a file (``panda``, ``ur5``), or a file of example-robot-data by its
        stem (``talos_reduced``, ``solo12``) or by its path inside the robots folder
        (``anymal_c_simple_description/urdf/anymal.urdf``, where two files share a stem).

    Returns
    -------
    str
        The file's path.

    Raises
    ------
    RobotError
        A stem two files share (naming both paths), or an unknown name (naming the near ones).
    """
    if name in _URDF_EXAMPLES:
        return urdf_path(name)
    if name in EXAMPLES:
        raise RobotError(f"the bundled {name} is built from DH rows and has no file: soagen.robots.example({name!r})")
    if os.path.isabs(name):
        raise RobotError(f"{name}: no such file")
    root = erd_root()
    if root is None:
        raise RobotError(f"{name!r} is not bundled with soagen (bundled: {', '.join(EXAMPLES)}); example-robot-data "
                         "(pip install example-robot-data) has many more robots")
    if (root / name).is_file():
        return str(root / name)
    found = sorted(root.rglob(f"{name}.urdf"))
    if len(found) > 1:
        raise RobotError(f"{name!r} is ambiguous: example-robot-data has {len(found)} files of that name, "
                         f"{', '.join(f.relative_to(root).as_posix() for f in found)}: give one of these paths")
    if not found:
        raise RobotError(f"no robot named {name!r}{_near(name, [*_URDF_EXAMPLES, *erd_files()])} "
                         "(soagen examples lists them)")
    return str(found[0])


def _near(name, names):
    """``"; did you mean a, b?"`` with the names containing ``name`` or close to it (difflib), or ``""``."""
    import difflib

    key = name.lower()
    near = [n for n in names if key in n.lower()] + difflib.get_close_matches(name, names, n=5, cutoff=0.6)
    near = list(dict.fromkeys(near))[:6]
    return f"; did you mean {', '.join(near)}?" if near else ""


def puma560_links():
    """The six DH rows of :func:`puma560` (list of :class:`~soagen.model.dh.DHLink`)."""
    h = np.pi / 2
    return [
        DHLink(a=0.0, alpha=0.0, d=0.0, mass=1e-9, com=(0, 0, 0), inertia=(0.175, 0.175, 0.35, 0, 0, 0)),
        DHLink(a=0.0, alpha=-h, d=0.2435, mass=17.4, com=(0.068, 0.006, -0.016),
               inertia=(0.130, 0.524, 0.539, 0, 0, 0)),
        DHLink(a=0.4318, alpha=0.0, d=-0.0934, mass=4.8, com=(0.0, -0.070, 0.014),
               inertia=(0.066, 0.0125, 0.066, 0, 0, 0)),
        DHLink(a=-0.0203, alpha=h, d=0.4331, mass=0.82, com=(0.0, 0.0, -0.019),
               inertia=(1.8e-3, 1.8e-3, 1.3e-3, 0, 0, 0)),
        DHLink(a=0.0, alpha=-h, d=0.0, mass=0.34, com=(0.0, 0.0, 0.0),
               inertia=(0.30e-3, 0.30e-3, 0.40e-3, 0, 0, 0)),
        DHLink(a=0.0, alpha=h, d=0.0, mass=0.09, com=(0.0, 0.0, 0.032),
               inertia=(0.15e-3, 0.15e-3, 0.04e-3, 0, 0, 0)),
    ]


def puma560(gravity=(0.0, 0.0, -9.81)):
    """PUMA 560, Armstrong–Khatib–Burdick 1986 parameters (modified DH, SI units).

    Link 1's mass is not given by AKB and cannot affect joint torques of a
    fixed base (its centre of mass is on the fixed joint-1 axis): a negligible
    1e-9 kg placeholder keeps the body physical, and the published
    Izz = 0.35 kg m² is completed to a consistent disc inertia
    (Ixx = Iyy = Izz/2), components that joint torques never see.
    """
    return dh_robot("puma560", puma560_links(), modified=True, gravity=gravity)


#: the bundled URDF robots: name -> (their tips, their locked joints)
_URDF_EXAMPLES = {"panda": (["panda_hand"], {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
                  "ur5": (["tool0"], {})}


def example(name, gravity=(0.0, 0.0, -9.81), tips=None, lock=None, floating_base=False, strict=False, **actuators):
    """A bundled robot by name.

    Parameters
    ----------
    name : str
        ``puma560`` (tip ``tool``), ``panda`` (fingers locked at 0, tip ``panda_hand``) or ``ur5`` (tip ``tool0``).
    gravity : (3,) array_like
        Gravity in the base frame.
    tips : list, optional
        Tips in place of the robot's own, as :func:`soagen.load_urdf` takes them (link names,
        ``(link, offset)`` pairs, :func:`soagen.point_tip`); ``[]`` for none.
    lock : dict, optional
        ``{joint: value}`` joints held fixed besides the Panda's fingers (a finger named here
        is held at the value given).
    floating_base : bool
        A 6-dof floating joint above the root link.
    strict : bool
        Refuse what is otherwise a :class:`~soagen.model.errors.ModelWarning`.
    **actuators
        ``armature``, ``friction``, ``urdf_friction``, ``coulomb_velocity`` of :func:`soagen.load_urdf`.

    Returns
    -------
    Robot

    Raises
    ------
    RobotError
        A tip or a joint the robot does not have, naming the robot's links or the joint.
    ValueError
        An unknown name.
    """
    build = dict(lock=lock, floating_base=floating_base, strict=strict)
    if name == "puma560":
        if actuators.pop("urdf_friction", False):
            raise RobotError("the PUMA 560 is built from DH rows: it has no URDF <dynamics>")
        builder = dh_builder("puma560", puma560_links(), modified=True, gravity=gravity)
        robot = builder.build(tips=["tool"] if tips is None else tips, **build)
        return robot.with_actuators(**actuators) if any(v is not None for v in actuators.values()) else robot
    if name in _URDF_EXAMPLES:
        own_tips, own_lock = _URDF_EXAMPLES[name]
        build["lock"] = {**own_lock, **(lock or {})}
        return load_urdf(urdf_path(name), tips=own_tips if tips is None else tips, gravity=gravity, **build,
                         **actuators)
    raise ValueError(f"unknown example robot {name!r}; choose from {', '.join(EXAMPLES)}")


def rx90(gravity=(0.0, 0.0, -9.81), d3=0.45, rl4=0.42):
    """The Stäubli RX-90's kinematics as OpenSYMORO describes it (modified DH:
    α = (0, π/2, 0, −π/2, π/2, −π/2), d3 = D3, r4 = RL4; ``symoro`` sample robot
    ``rx90``), for operation counts and base-parameter counts only: D3 and RL4 are
    placeholders (any non-zero values, distinct so no product of them coincides),
    and every link has the same generic, non-zero inertial parameters, which
    neither count depends on."""
    return dh_robot("rx90", rx90_links(d3, rl4), modified=True, gravity=gravity)


def rx90_links(d3=0.45, rl4=0.42):
    """The six DH rows of :func:`rx90` (list of :class:`~soagen.model.dh.DHLink`)."""
    h = np.pi / 2
    generic = dict(mass=2.0, com=(0.03, 0.02, 0.05), inertia=(0.05, 0.04, 0.03, 0.002, 0.001, 0.003))
    rows = [(0.0, 0.0, 0.0), (0.0, h, 0.0), (d3, 0.0, 0.0), (0.0, -h, rl4), (0.0, h, 0.0), (0.0, -h, 0.0)]
    return [DHLink(a=a, alpha=alpha, d=d, **generic) for a, alpha, d in rows]
