"""Denavit–Hartenberg robots, built through :class:`~soagen.model.robot.RobotBuilder`.

Modified DH (Craig): frame i = frame i-1 · Rx(α_{i-1}) Tx(a_{i-1}) Rz(θ_i) Tz(d_i).
Standard DH: frame i = frame i-1 · Rz(θ_i) Tz(d_i) Tx(a_i) Rx(α_i).
Inertial parameters of link i are given in DH frame i.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from soagen.model.builder import RobotBuilder
from soagen.model.robot import DEFAULT_GRAVITY
from soagen.model.spatial import axis_angle

X, Z = np.array([1.0, 0, 0]), np.array([0, 0, 1.0])


@dataclass
class DHLink:
    """One DH row and its link's inertia.

    a, alpha, d, theta : float   DH parameters (θ or d is the offset of the joint variable)
    prismatic : bool
    mass : float
    com : (3,)      centre of mass in DH frame i
    inertia : (3, 3) or (6,)   about the centre of mass, DH frame i axes
                     (6 numbers: ixx iyy izz ixy iyz ixz)
    """

    a: float
    alpha: float
    d: float
    theta: float = 0.0
    prismatic: bool = False
    mass: float = 0.0
    com: tuple = (0.0, 0.0, 0.0)
    inertia: tuple = field(default_factory=lambda: np.zeros((3, 3)))


def _inertia3(value):
    v = np.asarray(value, float)
    if v.shape == (6,):
        ixx, iyy, izz, ixy, iyz, ixz = v
        v = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return v


def dh_robot(name, links, modified=True, gravity=DEFAULT_GRAVITY, tool=(0.0, 0.0, 0.0)):
    """A serial chain from DH rows; the tip ``tool`` sits at ``tool`` (3,) in the last DH frame.

    Joints are named ``joint1 … jointN``, links ``link1 … linkN``, the tip ``tool``.
    """
    return dh_builder(name, links, modified, gravity, tool).build(tips=["tool"])


def dh_builder(name, links, modified=True, gravity=DEFAULT_GRAVITY, tool=(0.0, 0.0, 0.0)):
    """The :class:`RobotBuilder` of :func:`dh_robot`, not yet built.

    Parameters
    ----------
    name : str
        Robot name.
    links : list of DHLink
        The rows, base first.
    modified : bool
        Modified (Craig) or standard DH.
    gravity : (3,) array_like
        Gravity in the base frame.
    tool : (3,) array_like
        Where the link ``tool`` sits in the last DH frame.

    Returns
    -------
    RobotBuilder
        Links ``base``, ``link1 … linkN``, ``tool``; joints ``joint1 … jointN``, ``tool_joint``
        (fixed): its ``build`` takes the tips, locks and floating base.
    """
    b = RobotBuilder(name, gravity=gravity, source=f"DH robot '{name}'")
    b.add_link("base")
    # (R, p): where the next joint frame sits in the current link frame
    R_next, p_next = np.eye(3), np.zeros(3)
    for i, L in enumerate(links, start=1):
        kind = "prismatic" if L.prismatic else "revolute"
        if modified:   # joint frame = Tx(a) Rx(α) Tz(d) Rz(θ): Tz and Rz commute
            R_joint = R_next @ axis_angle(X, L.alpha)
            p_joint = p_next + R_next @ (L.a * X) + R_joint @ (L.d * Z)
            R_joint = R_joint @ axis_angle(Z, L.theta)
            to_dh = (np.eye(3), np.zeros(3))        # body frame = DH frame i
        else:          # joint frame = Tz(d) Rz(θ); Tx(a) Rx(α) leads on to DH frame i
            p_joint = p_next + R_next @ (L.d * Z)
            R_joint = R_next @ axis_angle(Z, L.theta)
            to_dh = (axis_angle(X, L.alpha), L.a * X)   # DH frame i in the body frame
        Rc, pc = to_dh
        I = _inertia3(L.inertia)
        b.add_link(f"link{i}", mass=L.mass, com=pc + Rc @ np.asarray(L.com, float), inertia=Rc @ I @ Rc.T)
        b.add_joint(f"joint{i}", kind, "base" if i == 1 else f"link{i - 1}", f"link{i}",
                    xyz=p_joint, rotation=R_joint, axis=Z)
        R_next, p_next = Rc, pc
    b.add_link("tool")
    b.add_joint("tool_joint", "fixed", f"link{len(links)}", "tool",
                xyz=p_next + R_next @ np.asarray(tool, float), rotation=R_next)
    return b
