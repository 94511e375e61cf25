"""URDF → :class:`~soagen.model.robot.Robot`, read with the standard library's
``xml.etree.ElementTree`` (only what the dynamics uses: ``<inertial>`` and the joints).

The numbers are those yourdfpy 0.0.60 (soagen's reader before) gives, bit for bit
(``tests/test_urdf_parser.py`` compares the two on every URDF of example-robot-data),
its defaults included: a missing ``<origin>`` is the identity, a missing ``xyz`` or
``rpy`` zero; a missing ``<axis>`` (or its ``xyz``) is (1, 0, 0); ``<inertial>``
without ``<mass>`` leaves the link massless, ``<mass>`` without ``value`` is 0,
``<inertial>`` without ``<inertia>`` has zero inertia, and a missing ``ixx``/``iyy``/``izz``
of ``<inertia>`` is 1 (the other three 0); joint limits need both ``lower`` and
``upper``.  Unlike yourdfpy, ``<visual>``, ``<collision>``, ``<material>`` and the other
elements the dynamics does not use are not read (a broken one is not an error), and a
``xyz``/``rpy``/``axis`` that is not three numbers is refused (yourdfpy broadcast one
number and dropped a fourth).
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from soagen.model.builder import RobotBuilder
from soagen.model.errors import RobotError


@dataclass
class _UrdfLink:
    """A ``<link>``: its ``<inertial>`` as yourdfpy read it (None where absent)."""
    name: str
    origin: np.ndarray | None = None     # (4, 4) homogeneous transform of <inertial><origin>
    mass: float | None = None
    inertia: np.ndarray | None = None    # (3, 3) in the <inertial><origin> frame


@dataclass
class _UrdfJoint:
    """A ``<joint>``; ``damping``/``friction`` are the attribute texts, read only with ``urdf_friction``."""
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray | None            # (4, 4), None: no <origin>
    axis: np.ndarray
    lower: float | None = None
    upper: float | None = None
    has_dynamics: bool = False
    damping: str | None = None
    friction: str | None = None


def _number(text, what):
    try:
        return float(text)
    except (TypeError, ValueError):
        raise RobotError(f"{what} is not a number: {text!r}") from None


def _triple(text, what):
    """Three numbers separated by whitespace (``xyz``, ``rpy``, the axis)."""
    parts = text.split()
    if len(parts) != 3:
        raise RobotError(f"{what} must be 3 numbers, got {text!r}")
    return np.array([_number(p, what) for p in parts])


def _euler_sxyz(ai, aj, ak):
    """URDF rpy → 4x4, R = Rz(yaw) Ry(pitch) Rx(roll): ``trimesh.transformations.euler_matrix(r, p, y,
    'sxyz')``, the products in its order (the same bits)."""
    si, sj, sk = np.sin(ai), np.sin(aj), np.sin(ak)
    ci, cj, ck = np.cos(ai), np.cos(aj), np.cos(ak)
    cc, cs = ci * ck, ci * sk
    sc, ss = si * ck, si * sk
    M = np.eye(4)
    M[0, 0], M[0, 1], M[0, 2] = cj * ck, sj * sc - cs, sj * cc + ss
    M[1, 0], M[1, 1], M[1, 2] = cj * sk, sj * ss + cc, sj * cs - sc
    M[2, 0], M[2, 1], M[2, 2] = -sj, cj * si, cj * ci
    return M


def _origin(elem, what):
    """The 4x4 transform of an ``<origin xyz rpy>`` (None without one), composed as yourdfpy does
    (``trimesh.transformations.compose_matrix``: I·T·R, divided by M[3, 3])."""
    if elem is None:
        return None
    xyz = _triple(elem.get("xyz", "0 0 0"), f"{what} <origin> xyz")
    rpy = _triple(elem.get("rpy", "0 0 0"), f"{what} <origin> rpy")
    T = np.identity(4)
    T[:3, 3] = xyz
    M = np.dot(np.dot(np.identity(4), T), _euler_sxyz(rpy[0], rpy[1], rpy[2]))
    M /= M[3, 3]
    return M


def _link_ref(joint, tag, what):
    elem = joint.find(tag)
    if elem is None:
        raise RobotError(f"{what} has no <{tag}> element")
    link = elem.get("link")
    if link is None:
        raise RobotError(f"{what}: <{tag}> has no link attribute")
    return link


def _read_link(elem, what):
    link = _UrdfLink(elem.get("name"))
    inertial = elem.find("inertial")
    if inertial is None:
        return link
    what = f"{what} <inertial>"
    link.origin = _origin(inertial.find("origin"), what)
    mass = inertial.find("mass")
    if mass is not None:
        link.mass = _number(mass.get("value", 0.0), f"{what} <mass> value")
    inertia = inertial.find("inertia")
    if inertia is not None:
        def get(key, default):
            return _number(inertia.get(key, default), f"{what} <inertia> {key}")
        ixx, ixy, ixz = get("ixx", 1.0), get("ixy", 0.0), get("ixz", 0.0)
        iyy, iyz, izz = get("iyy", 1.0), get("iyz", 0.0), get("izz", 1.0)
        link.inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=np.float64)
    return link


def _read_joint(elem, what):
    name = elem.get("name")
    kind = elem.get("type")
    if kind is None:
        raise RobotError(f"{what} has no type attribute")
    parent, child = _link_ref(elem, "parent", what), _link_ref(elem, "child", what)
    axis = elem.find("axis")
    axis = np.array([1.0, 0, 0]) if axis is None else _triple(axis.get("xyz", "1 0 0"), f"{what} <axis> xyz")
    joint = _UrdfJoint(name, kind, parent, child, _origin(elem.find("origin"), what), axis)
    limit = elem.find("limit")
    if limit is not None:
        for key in ("lower", "upper"):
            text = limit.get(key)
            if text is not None:
                setattr(joint, key, _number(text, f"{what} <limit> {key}"))
    dynamics = elem.find("dynamics")
    if dynamics is not None:
        joint.has_dynamics = True
        joint.damping, joint.friction = dynamics.get("damping"), dynamics.get("friction")
    return joint


def read_urdf(path):
    """``(robot name, links, joints)`` of a URDF file, in document order (duplicates kept: the
    builder refuses them); :class:`RobotError` naming the file and the element for what cannot be read."""
    src = os.fspath(path)
    if not os.path.isfile(src):
        raise RobotError(f"{src}: no such file")
    try:
        root = ET.parse(src).getroot()
    except (ET.ParseError, OSError, UnicodeDecodeError) as exc:
        raise RobotError(f"{src}: invalid XML: {exc}") from None
    if root.tag != "robot":
        raise RobotError(f"{src}: root element is <{root.tag}>, not <robot>: not a URDF file"
                         + ("; it is an MJCF, which soagen.load_mjcf reads" if root.tag == "mujoco" else ""))
    if not root.get("name"):
        raise RobotError(f"{src}: <robot> has no name attribute (URDF requires one)")
    links, joints = [], []
    for tag, read, out in (("link", _read_link, links), ("joint", _read_joint, joints)):
        for k, elem in enumerate(root.findall(tag), 1):
            name = elem.get("name")
            if name is None:
                raise RobotError(f"{src}: <{tag}> number {k} has no name attribute")
            out.append(read(elem, f"{src}: {tag} '{name}'"))
    return root.get("name"), links, joints


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
    model_name, links, joints = read_urdf(path)
    src = os.fspath(path)
    builder = RobotBuilder(name or model_name, gravity=gravity, source=src)
    for link in links:
        if link.mass is None:  # no <inertial>, or one without <mass>: massless
            builder.add_link(link.name)
            continue
        origin = np.eye(4) if link.origin is None else link.origin
        inertia = np.zeros((3, 3)) if link.inertia is None else link.inertia
        rot = origin[:3, :3]
        builder.add_link(link.name, mass=link.mass, com=origin[:3, 3], inertia=rot @ inertia @ rot.T)
    for joint in joints:
        origin = np.eye(4) if joint.origin is None else joint.origin
        limits = None
        if joint.type in ("revolute", "prismatic"):
            lo, hi = joint.lower, joint.upper
            if lo is not None and hi is not None and hi > lo:
                limits = (lo, hi)
        builder.add_joint(joint.name, joint.type, joint.parent, joint.child,
                          xyz=origin[:3, 3], rotation=origin[:3, :3], axis=joint.axis, limits=limits)
    friction = dict(friction or {})
    if urdf_friction:
        friction = {**_urdf_friction(joints, lock or {}, src), **friction}
    return builder.build(tips=tips, lock=lock, floating_base=floating_base, armature=armature, friction=friction,
                         coulomb_velocity=coulomb_velocity, strict=strict)


def _urdf_friction(joints, lock, src):
    """``{joint: (damping, friction)}`` of the moving joints' ``<dynamics>`` elements (a missing attribute is 0)."""
    out = {}
    for joint in joints:
        if not joint.has_dynamics or joint.type in ("fixed", "floating", "planar") or joint.name in lock:
            continue
        try:
            values = tuple(float(x) if x is not None else 0.0 for x in (joint.damping, joint.friction))
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
                  (f'      <inertia ixx="{float(I[0, 0])!r}" ixy="{float(I[0, 1])!r}" ixz="{float(I[0, 2])!r}" '
                   f'iyy="{float(I[1, 1])!r}" iyz="{float(I[1, 2])!r}" izz="{float(I[2, 2])!r}"/>'),
                  "    </inertial>", "  </link>"]
    for b in robot.bodies:
        parent = "base" if b.parent < 0 else robot.bodies[b.parent].name
        lo, hi = (float(x) for x in (b.limits if b.limits else (-1e4, 1e4)))
        lines += [f'  <joint name="{b.joint}" type="{b.joint_type}">', f'    <parent link="{parent}"/>',
                  f'    <child link="{b.name}"/>', f'    <origin xyz="{f(b.translation)}" rpy="{f(_rpy(b.rotation))}"/>',
                  f'    <axis xyz="{f(b.axis)}"/>',
                  f'    <limit lower="{lo!r}" upper="{hi!r}" effort="1000" velocity="100"/>', "  </joint>"]
    lines.append("</robot>")
    return "\n".join(lines) + "\n"
