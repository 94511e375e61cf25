"""URDF → :class:`~soagen.model.robot.Robot`, parsed by yourdfpy (no meshes loaded)."""
from __future__ import annotations

import os

import numpy as np

from soagen.model.builder import RobotBuilder
from soagen.model.errors import RobotError


def load_urdf(path, tips=(), lock=None, gravity=(0.0, 0.0, -9.81), name=None, floating_base=False,
              armature=None, friction=None, urdf_friction=False, coulomb_velocity=None, strict=False):
    """Read a URDF file into a :class:`Robot`.

    Parameters
    ----------
    path : str or path-like
        URDF file.
    tips : list
        Operational points: link names, or ``(link, offset)`` with a (3,)
        offset in the link frame.
    lock : dict, optional
        ``{joint: value}`` joints to hold fixed (e.g. gripper fingers).
        A ``<mimic>`` joint is an independent joint, as in Pinocchio's default
        model; lock it to remove it.
    gravity : (3,) array_like
        World-frame gravitational acceleration, default 9.81 m/s² along −z.
    name : str, optional
        Robot name (default: the URDF's ``<robot name>``).
    floating_base : bool
        Put a floating joint ``root_joint`` (6 dof, Pinocchio's free-flyer)
        above the root link, as a humanoid or a mobile base needs.  A URDF
        ``floating`` joint on the root link does the same; ``planar`` joints
        are not supported.
    armature : dict, optional
        ``{joint: rotor inertia}`` (reflected through the gear, k_r² I_m) added to M's diagonal.
    friction : dict, optional
        ``{joint: (viscous, coulomb)}`` joint friction (:class:`soagen.model.robot.Actuators`).
    urdf_friction : bool
        Read ``<dynamics damping="viscous" friction="coulomb"/>`` of the joints
        (``friction`` entries take precedence).
    coulomb_velocity : float, optional
        ε of the smooth Coulomb sign q̇/√(q̇² + ε²).
    strict : bool
        Refuse what is otherwise a :class:`~soagen.model.robot.ModelWarning`
        (non-physical inertia, joints with D(k) = 0); see :mod:`soagen.model.builder`.

    Returns
    -------
    Robot
        Its ``notes`` say what was lumped, locked or rounded, its
        ``singular_joints`` which joints make M singular.

    Raises
    ------
    RobotError
        With a one-line reason naming the file and the element at fault.

    Warns
    -----
    ModelWarning
        One per finding that leaves the dynamics defined (see :mod:`soagen.model.builder`).
    """
    import xml.etree.ElementTree as ET

    import yourdfpy  # imported here: it pulls trimesh, slow to import

    src = os.fspath(path)
    if not os.path.isfile(src):
        raise RobotError(f"{src}: no such file")
    try:  # yourdfpy's own messages for broken XML do not say where: parse once first
        root = ET.parse(src).getroot()
    except (ET.ParseError, OSError, UnicodeDecodeError) as exc:
        raise RobotError(f"{src}: invalid XML: {exc}") from None
    if root.tag != "robot":
        raise RobotError(f"{src}: root element is <{root.tag}>, not <robot>")
    if not root.get("name"):
        raise RobotError(f"{src}: <robot> has no name attribute (URDF requires one)")
    try:
        urdf = yourdfpy.URDF.load(src, build_scene_graph=False, load_meshes=False,
                                  build_collision_scene_graph=False, load_collision_meshes=False)
    except Exception as exc:  # lxml / yourdfpy raise many types for bad XML
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RobotError(f"{src}: cannot parse URDF: {reason}") from None
    model = urdf.robot
    builder = RobotBuilder(name or model.name or os.path.splitext(os.path.basename(src))[0],
                           gravity=gravity, source=src)
    for link in model.links:
        inertial = link.inertial
        if inertial is None or inertial.mass is None:
            builder.add_link(link.name)
            continue
        origin = np.eye(4) if inertial.origin is None else np.asarray(inertial.origin, float)
        inertia = np.zeros((3, 3)) if inertial.inertia is None else np.asarray(inertial.inertia, float)
        rot = origin[:3, :3]
        builder.add_link(link.name, mass=float(inertial.mass), com=origin[:3, 3],
                         inertia=rot @ inertia @ rot.T)
    for joint in model.joints:
        origin = np.eye(4) if joint.origin is None else np.asarray(joint.origin, float)
        limits = None
        if joint.type in ("revolute", "prismatic") and joint.limit is not None:
            lo, hi = joint.limit.lower, joint.limit.upper
            if lo is not None and hi is not None and hi > lo:
                limits = (lo, hi)
        builder.add_joint(joint.name, joint.type, joint.parent, joint.child,
                          xyz=origin[:3, 3], rotation=origin[:3, :3],
                          axis=(1.0, 0.0, 0.0) if joint.axis is None else joint.axis, limits=limits)
    friction = dict(friction or {})
    if urdf_friction:
        friction = {**_urdf_friction(model, lock or {}, src), **friction}
    return builder.build(tips=tips, lock=lock, floating_base=floating_base, armature=armature, friction=friction,
                         coulomb_velocity=coulomb_velocity, strict=strict)


def _urdf_friction(model, lock, src):
    """``{joint: (damping, friction)}`` of the moving joints' ``<dynamics>`` elements."""
    out = {}
    for joint in model.joints:
        dyn = joint.dynamics
        if dyn is None or joint.type in ("fixed", "floating", "planar") or joint.name in lock:
            continue
        try:
            values = tuple(float(x) if x is not None else 0.0 for x in (dyn.damping, dyn.friction))
        except ValueError:
            raise RobotError(f"{src}: joint '{joint.name}': <dynamics> damping/friction are not numbers") from None
        out[joint.name] = values
    return out


def _rpy(R):
    """URDF roll-pitch-yaw of a rotation matrix (R = Rz(yaw) Ry(pitch) Rx(roll))."""
    R = np.asarray(R, float)
    pitch = float(np.arcsin(np.clip(-R[2, 0], -1.0, 1.0)))
    if abs(R[2, 0]) < 1.0 - 1e-12:
        return float(np.arctan2(R[2, 1], R[2, 2])), pitch, float(np.arctan2(R[1, 0], R[0, 0]))
    return 0.0, pitch, float(np.arctan2(-R[0, 1], R[1, 1]))


def to_urdf(robot):
    """URDF text of a :class:`Robot` (fixed base ``base``; tips are not part of URDF),
    for handing a robot made in Python (a DH table, the builder) to other tools."""
    def f(values):
        return " ".join(repr(float(v)) for v in values)

    lines = [f'<robot name="{robot.name}">', '  <link name="base"/>']
    for b in robot.bodies:
        I = b.inertia
        lines += [f'  <link name="{b.name}">', "    <inertial>",
                  f'      <origin xyz="{f(b.com)}" rpy="0 0 0"/>', f'      <mass value="{float(b.mass)!r}"/>',
                  f'      <inertia ixx="{float(I[0, 0])!r}" ixy="{float(I[0, 1])!r}" ixz="{float(I[0, 2])!r}" iyy="{float(I[1, 1])!r}" '
                  f'iyz="{float(I[1, 2])!r}" izz="{float(I[2, 2])!r}"/>', "    </inertial>", "  </link>"]
    for b in robot.bodies:
        parent = "base" if b.parent < 0 else robot.bodies[b.parent].name
        lo, hi = (float(x) for x in (b.limits if b.limits else (-1e4, 1e4)))
        lines += [f'  <joint name="{b.joint}" type="{b.joint_type}">', f'    <parent link="{parent}"/>',
                  f'    <child link="{b.name}"/>', f'    <origin xyz="{f(b.translation)}" rpy="{f(_rpy(b.rotation))}"/>',
                  f'    <axis xyz="{f(b.axis)}"/>',
                  f'    <limit lower="{lo!r}" upper="{hi!r}" effort="1000" velocity="100"/>', "  </joint>"]
    lines.append("</robot>")
    return "\n".join(lines) + "\n"
