"""Robot model: the one data type every later stage reads.

A :class:`Robot` is a tree of rigid bodies, each moved by one joint:
revolute or prismatic (1 coordinate), spherical (a quaternion, nq = 4, and the
body-frame angular velocity, nv = 3) or floating (position and quaternion,
nq = 7, and the body-frame spatial velocity ``[ω; v]``, nv = 6; a root only,
which makes a floating-base robot).  Bodies are numbered ``0 … nb-1`` in
depth-first tree order, the child joints of a link taken in byte order of
their names (exactly Pinocchio's order, which urdfdom inherits from a
name-sorted map); body ``k``'s coordinates are ``q[robot.qslice(k)]`` and its
velocities ``v[robot.vslice(k)]``.  Quaternions are ``(x, y, z, w)``, scalar
last (JPL, Pinocchio) and need not be unit: every consumer uses the rotation of
``q/|q|``.  Fixed joints never appear: the builder merges them, lumping their
inertia into the moving parent body (see :mod:`soagen.model.builder`, which makes
robots and checks them).

Frames: body ``k``'s frame is its URDF child-link frame.  The joint frame sits
at ``translation`` with orientation ``rotation`` in the parent body's frame;
the body frame is the joint frame moved by ``q[k]`` along/about ``axis``
(a unit 3-vector, the same in joint and body frame).
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from soagen.model.actuators import COULOMB_VELOCITY, Actuators
from soagen.model.errors import RobotError
from soagen.model.parameters import standard_parameters, with_parameters
from soagen.model.spatial import axis_angle, quat_exp, quat_matrix, quat_multiply, se3_exp

REVOLUTE = "revolute"
PRISMATIC = "prismatic"
SPHERICAL = "spherical"
FLOATING = "floating"
#: (nq, nv) per joint type
JOINT_SIZES = {REVOLUTE: (1, 1), PRISMATIC: (1, 1), SPHERICAL: (4, 3), FLOATING: (7, 6)}
#: random positions of a floating base are drawn in this box (m)
FLOATING_BOX = 1.0
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


@dataclass(frozen=True)
class Body:
    """One moving rigid body and the joint that moves it.

    Attributes
    ----------
    name, joint : str
        Link name and joint name (URDF).
    joint_type : str
        ``"revolute"`` (continuous joints included) or ``"prismatic"``.
    parent : int
        Index of the parent body, ``-1`` for the fixed base.
    rotation : (3, 3) ndarray
        Joint-frame orientation in the parent body frame.
    translation : (3,) ndarray
        Joint-frame origin in the parent body frame.
    axis : (3,) ndarray
        Unit joint axis in the joint (= body) frame.
    mass : float
    com : (3,) ndarray
        Centre of mass in the body frame.
    inertia : (3, 3) ndarray
        Rotational inertia about the centre of mass, body axes.
    limits : tuple of float or None
        ``(lower, upper)`` joint limits when finite.
    """

    name: str
    joint: str
    joint_type: str
    parent: int
    rotation: np.ndarray
    translation: np.ndarray
    axis: np.ndarray
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    limits: tuple | None = None

    @property
    def nq(self):
        """Configuration coordinates of the joint."""
        return JOINT_SIZES[self.joint_type][0]

    @property
    def nv(self):
        """Velocity coordinates (degrees of freedom) of the joint."""
        return JOINT_SIZES[self.joint_type][1]

    def motion_subspace(self):
        """H*(k): joint velocities to the body's relative spatial velocity
        ``[ω; v]`` in body axes; (6, nv)."""
        if self.joint_type == REVOLUTE:
            return np.concatenate([self.axis, np.zeros(3)])[:, None]
        if self.joint_type == PRISMATIC:
            return np.concatenate([np.zeros(3), self.axis])[:, None]
        if self.joint_type == SPHERICAL:
            return np.vstack([np.eye(3), np.zeros((3, 3))])
        return np.eye(6)

    def joint_transform(self, q):
        """Body frame in the parent frame at joint coordinates ``q`` (a number
        for 1-dof joints, else (nq,)): ``(R (3,3), p (3,))``."""
        if self.joint_type == REVOLUTE:
            return self.rotation @ axis_angle(self.axis, q), self.translation.copy()
        if self.joint_type == PRISMATIC:
            return self.rotation.copy(), self.translation + self.rotation @ self.axis * q
        if self.joint_type == SPHERICAL:
            return self.rotation @ quat_matrix(q), self.translation.copy()
        q = np.asarray(q, float)
        return self.rotation @ quat_matrix(q[3:]), self.translation + self.rotation @ q[:3]


@dataclass(frozen=True)
class Tip:
    """An operational point: a frame rigidly attached to a body.

    ``rotation`` (3, 3) and ``offset`` (3,) place the tip frame in the body
    frame.  Tip quantities (Jacobian rows, forces, Λ) are expressed in
    world-aligned axes at the tip origin; the rotation only matters for the
    tip pose returned by forward kinematics.  A full tip has 6 rows
    [angular; linear]; a ``point`` tip (a foot, a fingertip) has the 3 linear
    rows only: its force is a pure force at the point, its Jacobian the
    point's velocity (the linear part of Pinocchio's LOCAL_WORLD_ALIGNED).
    """

    name: str
    body: int
    rotation: np.ndarray
    offset: np.ndarray
    point: bool = False

    @property
    def rows(self):
        """Which of the 6 rows [angular; linear] this tip has: (3, 4, 5) or (0, …, 5)."""
        return (3, 4, 5) if self.point else (0, 1, 2, 3, 4, 5)


@dataclass(frozen=True)
class PointTip:
    """A point tip asked of a reader (``tips=[soagen.point_tip("foot")]``): a link and an offset (3,) in its frame."""

    link: str
    offset: tuple = (0.0, 0.0, 0.0)


def point_tip(link, offset=(0.0, 0.0, 0.0)):
    """An operational point with 3 rows (the linear ones, world-aligned) at ``offset`` (3,) in ``link``'s frame,
    for ``tips=[...]`` of :func:`soagen.load_urdf` beside link names and ``(link, offset)`` pairs."""
    return PointTip(link, tuple(float(x) for x in offset))


def _actuators(robot, armature, friction, coulomb_velocity):
    """The :class:`Actuators` of ``robot`` from ``{joint: value}`` and ``{joint: (viscous, coulomb)}``."""
    nv = robot.nv
    arrays = {name: np.zeros(nv) for name in ("armature", "viscous", "coulomb")}
    index = {b.joint: k for k, b in enumerate(robot.bodies)}
    for what, table in (("armature", armature), ("friction", friction)):
        for joint, value in table.items():
            if joint not in index:
                raise RobotError(f"{robot.name}: {what} for unknown joint '{joint}' (moving joints: "
                                 f"{', '.join(index)})")
            k = index[joint]
            if robot.bodies[k].nv != 1:
                raise RobotError(f"{robot.name}: {what} of the {robot.bodies[k].joint_type} joint '{joint}': "
                                 "only 1-dof joints have actuator parameters")
            values = [value] if what == "armature" else list(np.ravel(value))
            if len(values) != (1 if what == "armature" else 2) or not np.all(np.isfinite(values)) \
                    or min(values) < 0.0:
                raise RobotError(f"{robot.name}: {what} of joint '{joint}' must be "
                                 + ("a number >= 0" if what == "armature" else "(viscous, coulomb) >= 0")
                                 + f", got {value!r}")
            i = robot.vslice(k).start
            if what == "armature":
                arrays["armature"][i] = float(values[0])
            else:
                arrays["viscous"][i], arrays["coulomb"][i] = map(float, values)
    eps = COULOMB_VELOCITY if coulomb_velocity is None else float(coulomb_velocity)
    if not (np.isfinite(eps) and eps > 0.0):
        raise RobotError(f"{robot.name}: coulomb_velocity must be > 0, got {coulomb_velocity!r}")
    return Actuators(arrays["armature"], arrays["viscous"], arrays["coulomb"], eps)


def number_pattern():
    """A function of an array (or number) to the structure of its entries, numbering the
    magnitudes in the order first seen across every call: "0", "+1", "-1", "+k" or "-k"."""
    seen = {}

    def pattern(a):
        out = []
        for x in np.asarray(a, dtype=float).ravel().tolist():
            if x == 0.0:
                out.append("0")
            elif abs(x) == 1.0:
                out.append("+1" if x > 0 else "-1")
            else:
                out.append(("+" if x > 0 else "-") + str(seen.setdefault(abs(x), len(seen) + 2)))
        return tuple(out)

    return pattern


@dataclass(frozen=True)
class Robot:
    """A fixed-base tree robot with operational points (tips).

    Attributes
    ----------
    name : str
    bodies : tuple of Body
        Depth-first order, ``bodies[k].parent < k``.
    tips : tuple of Tip
    gravity : (3,) ndarray
        Gravitational acceleration in the world (= base) frame.
    singular_joints : tuple of str
        Joints whose articulated inertia D(k) is zero (a massless leaf, or
        bodies with no inertia about the joint axis), found by the builder:
        the mass matrix is singular in every configuration, so M⁻¹, forward
        dynamics and Λ do not exist (those functions are not generated).
        Empty for robots not made by :class:`~soagen.model.builder.RobotBuilder`.
    singular_reason : str
        Why those joints make M singular and how to fix it (one sentence).
    notes : tuple of str
        What the builder did to the description (links lumped on fixed
        joints, locked joints, numbers rounded to exact integers), one line each.
    actuators : Actuators or None
        Rotor inertia and friction of the 1-dof joints (:meth:`with_actuators`).
    """

    name: str
    bodies: tuple
    tips: tuple
    gravity: np.ndarray = field(default_factory=lambda: np.array(DEFAULT_GRAVITY))
    actuators: Actuators | None = None
    singular_joints: tuple = ()
    singular_reason: str = ""
    notes: tuple = ()

    def __repr__(self):
        floating = sum(b.joint_type == FLOATING for b in self.bodies)
        tips = [t.name + (" (point)" if t.point else "") for t in self.tips]
        shown = ", ".join(tips[:6]) + (f" and {len(tips) - 6} more" if len(tips) > 6 else "")
        return (f"<Robot {self.name}: {self.nb - floating} joints, {'floating' if floating else 'fixed'} base, "
                f"n={self.n}, nq={self.nq}, nv={self.nv}, tips: {shown or 'none'}>")

    def joint_summary(self):
        """The joints in words, a floating base apart and nv where it is not the count.

        Returns
        -------
        str
            ``"7 joints"``, ``"12 joints and a floating base (nv 18)"``, ``"3 joints (nv 5)"`` (a ball joint).
        """
        floating = sum(b.joint_type == FLOATING for b in self.bodies)
        joints = self.nb - floating
        text = f"{joints} joint" + ("" if joints == 1 else "s")
        if floating:
            text += " and a floating base" if floating == 1 else f" and {floating} floating bodies"
        return text + (f" (nv {self.nv})" if self.nv != joints else "")

    @property
    def nb(self):
        """Number of moving bodies (= joints)."""
        return len(self.bodies)

    @property
    def nv(self):
        """Velocity coordinates: the length of qd, qdd, tau; M is nv × nv."""
        return sum(b.nv for b in self.bodies)

    @property
    def n(self):
        """Degrees of freedom, ``nv`` (= the number of joints when all have one)."""
        return self.nv

    @property
    def nq(self):
        """Configuration coordinates: the length of q."""
        return sum(b.nq for b in self.bodies)

    @property
    def tip_rows(self):
        """Rows of the stacked tip quantities (J, f, Ω(0), Λ(0)): 6 per full tip, 3 per point tip."""
        return sum(len(t.rows) for t in self.tips)

    @property
    def multi_dof(self):
        """True when some joint is spherical or floating."""
        return any(b.nv > 1 for b in self.bodies)

    @cached_property
    def _slices(self):
        """(q slices, v slices) of every body, computed once."""
        qs, vs, iq, iv = [], [], 0, 0
        for b in self.bodies:
            qs.append(slice(iq, iq + b.nq))
            vs.append(slice(iv, iv + b.nv))
            iq, iv = iq + b.nq, iv + b.nv
        return tuple(qs), tuple(vs)

    def qslice(self, k):
        """Slice of body ``k``'s coordinates in q."""
        return self._slices[0][k]

    def vslice(self, k):
        """Slice of body ``k``'s velocities in qd, qdd, tau (rows/columns of M)."""
        return self._slices[1][k]

    def joint_q(self, q, k):
        """Body ``k``'s coordinates: a number for 1-dof joints, else (nq_k,)."""
        s = self.qslice(k)
        return q[s.start] if self.bodies[k].nq == 1 else np.asarray(q[s], float)

    @property
    def parents(self):
        return [b.parent for b in self.bodies]

    def children(self, k):
        """Indices of the bodies whose parent is ``k`` (``-1``: the base)."""
        return [i for i, b in enumerate(self.bodies) if b.parent == k]

    def base_to_tip(self):
        """Body indices, every parent before its children (the anticausal order)."""
        return range(self.nb)

    def tip_to_base(self):
        """Body indices, every child before its parent (the causal order)."""
        return reversed(range(self.nb))

    def roots(self):
        """Indices of the bodies attached to the base."""
        return self.children(-1)

    # ---------------------------------------------- what the generator reads
    @property
    def parts(self):
        """``[(label, Robot)]``: the robots whose joints a generated file has (here one, unlabelled)."""
        return [("", self)]

    def ancestors(self, k):
        """Path from body ``k`` to the root, ``k`` first."""
        path = []
        while k >= 0:
            path.append(k)
            k = self.bodies[k].parent
        return path

    def with_gravity(self, gravity):
        """Copy of this robot with another gravity vector (3,)."""
        return dataclasses.replace(self, gravity=_vector(gravity, "gravity"))

    def with_tips(self, tips):
        """Copy of this robot with other tips (list of :class:`Tip`)."""
        return dataclasses.replace(self, tips=tuple(tips))

    def fingerprint(self, structure=False):
        """Hex digest of every number and name that shapes the generated code.

        ``structure=True``: of the robot's structure only, what its programs' operation counts
        follow -- the tree, the joint types, the tips, and of each number only whether it is 0,
        +1 or -1, its sign and which other numbers have the same magnitude; names are left out.
        Robots with one structure digest differ only in the values of their other numbers
        (a mass, a length changed to a value no other number has)."""
        h = hashlib.sha256()
        num = number_pattern() if structure else (lambda a: a.tolist() if isinstance(a, np.ndarray) else a)
        name = (lambda text: "") if structure else (lambda text: text)
        h.update(repr((name(self.name), tuple(num(self.gravity)))).encode())
        for b in self.bodies:
            h.update(repr((name(b.name), name(b.joint), b.joint_type, b.parent, num(b.rotation),
                           num(b.translation), num(b.axis), num(b.mass), num(b.com),
                           num(b.inertia))).encode())
        for t in self.tips:
            h.update(repr((name(t.name), t.body, num(t.rotation), num(t.offset)) + (("point",) if t.point else ()))
                     .encode())
        if self.actuators is not None:
            a = self.actuators
            h.update(repr(("actuators", num(a.armature), num(a.viscous), num(a.coulomb),
                           num(a.coulomb_velocity))).encode())
        return h.hexdigest()

    def random_configuration(self, rng):
        """Random q (nq,): 1-dof joints uniform within finite limits (else ±π,
        prismatic ±0.5 m), unit quaternions uniform on SO(3), a floating base's
        position in a ±1 m box."""
        q = []
        for b in self.bodies:
            if b.nq == 1:
                lo, hi = b.limits if b.limits is not None else ((-0.5, 0.5) if b.joint_type == PRISMATIC
                                                                 else (-np.pi, np.pi))
                q.append([rng.uniform(lo, hi)])
                continue
            if b.joint_type == FLOATING:
                q.append(rng.uniform(-FLOATING_BOX, FLOATING_BOX, 3))
            quat = rng.normal(size=4)
            q.append(quat / np.linalg.norm(quat))
        return np.concatenate(q)

    def neutral_configuration(self):
        """q (nq,) with zero joint values and identity quaternions ``(0, 0, 0, 1)``."""
        return np.concatenate([np.zeros(1) if b.nq == 1 else
                               np.array([*([0.0] * (b.nq - 1)), 1.0]) for b in self.bodies])

    def integrate(self, q, v, dt):
        """Configuration after moving with velocity ``v`` (nv,) for ``dt``; -> (nq,).

        1-dof joints: q + v dt. Spherical: R ← R exp(ω dt) (body-frame ω).
        Floating: (R, p) ← (R, p) · exp_SE3([ω; v] dt) (body-frame twist, as
        Pinocchio's ``integrate``). Quaternions come out unit length.
        """
        q, v = np.asarray(q, float), np.asarray(v, float)
        out = q.copy()
        for k, b in enumerate(self.bodies):
            qs, vs = self.qslice(k), self.vslice(k)
            if b.nq == 1:
                out[qs] = q[qs] + v[vs] * dt
                continue
            quat = q[qs][-4:] / np.linalg.norm(q[qs][-4:])
            if b.joint_type == SPHERICAL:
                new = quat_multiply(quat, quat_exp(v[vs] * dt))
                out[qs] = new / np.linalg.norm(new)
                continue
            dR, dp = se3_exp(v[vs] * dt)
            R = quat_matrix(quat)
            new = quat_multiply(quat, _quat_from_matrix(dR))
            out[qs] = np.concatenate([q[qs][:3] + R @ dp, new / np.linalg.norm(new)])
        return out

    def random_state(self, rng):
        """Random ``q`` (nq,) from :meth:`random_configuration` and ``qd, qdd, tau`` (nv,)."""
        q = self.random_configuration(rng)
        n = self.nv
        return q, rng.normal(size=n), rng.normal(size=n), rng.normal(size=n) * 10.0


    # ------------------------------------------ inertial parameters (soagen.model.parameters)
    @property
    def actuated(self):
        """Velocity indices of the joints with actuator parameters: every 1-dof joint
        when the robot has :attr:`actuators`, else none."""
        if self.actuators is None:
            return []
        return [self.vslice(k).start for k, b in enumerate(self.bodies) if b.nv == 1]

    @property
    def n_parameters(self):
        """Length of π: 10 per body, 3 per actuated joint (:meth:`parameters`)."""
        return 10 * self.nb + 3 * len(self.actuated)

    def parameters(self):
        """π (p,): the standard parameters (m, m·c, I_o in Pinocchio's order) of
        every body, then (armature, viscous, Coulomb) per actuated joint
        (:func:`soagen.model.parameters.standard_parameters`)."""
        return standard_parameters(self)

    def with_parameters(self, pi):
        """A copy whose bodies (and actuators) have the parameters ``pi`` (p,)."""
        return with_parameters(self, pi)

    def with_actuators(self, armature=None, friction=None, coulomb_velocity=None):
        """A copy with rotor inertias ``armature={joint: value}`` (the rotor inertia
        reflected through the gear, k_r² I_m, added to M's diagonal) and
        ``friction={joint: (viscous, coulomb)}``; joints not named get zeros.  Only
        1-dof joints take them.  ``coulomb_velocity`` ε (default
        :data:`COULOMB_VELOCITY`) sets the smooth sign q̇/√(q̇² + ε²) of Coulomb friction."""
        return dataclasses.replace(self, actuators=_actuators(self, armature or {}, friction or {}, coulomb_velocity))


def _quat_from_matrix(R):
    """Unit quaternion ``(x, y, z, w)`` of a rotation matrix (3, 3)."""
    t = np.trace(R)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        return np.array([(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, s / 4])
    i = int(np.argmax(np.diag(R)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
    out = np.zeros(4)
    out[i] = s / 4
    out[j] = (R[j, i] + R[i, j]) / s
    out[k] = (R[k, i] + R[i, k]) / s
    out[3] = (R[k, j] - R[j, k]) / s
    return out


def _vector(value, what, size=3):
    v = np.asarray(value, dtype=float).reshape(-1)
    if v.shape != (size,) or not np.all(np.isfinite(v)):
        raise RobotError(f"{what} must be {size} finite numbers, got {value!r}")
    return v
