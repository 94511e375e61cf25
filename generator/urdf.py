"""URDF → :class:`~soagen.model.Robot`, parsed by yourdfpy (no meshes loaded)."""
from __future__ import annotations

import os

import numpy as np

from .model import RobotBuilder, RobotError


def load_urdf(path, tips=(), lock=None, gravity=(0.0, 0.0, -9.81), name=None):
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

    Raises
    ------
    RobotError
        With a one-line reason naming the file and the element at fault.
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
    return builder.build(tips=tips, lock=lock)
