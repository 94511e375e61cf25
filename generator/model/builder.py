"""Build a :class:`~soagen.model.robot.Robot` link by link, and check it.

The URDF loader, the DH tables and Python code all describe a robot to
:class:`RobotBuilder`; :meth:`RobotBuilder.build` merges fixed joints, orders
the bodies as Pinocchio does and checks what the dynamics uses.

What happens to a description (docs/guide/real-robots.md says the same for users):

* **Refused** (:class:`~soagen.model.robot.RobotError`): what leaves the dynamics
  undefined or the tree ill-formed: numbers that are not finite, a negative
  mass, a non-symmetric inertia matrix, a zero joint axis, unknown joint
  types, loops, several roots, unknown links or tips, no moving joint.
* **Warned** (:class:`~soagen.model.robot.ModelWarning`; refused with
  ``strict=True``): each moving rigid body, after the links on fixed joints
  are lumped into it, whose rotational inertia is not positive semi-definite
  (beyond round-off, :data:`INERTIA_ROUNDOFF` of its largest principal moment)
  or whose principal moments violate the triangle inequality; and joints whose
  articulated inertia D(k) is zero (a massless leaf, or bodies with no inertia
  about the joint axis), recorded in ``Robot.singular_joints``: the mass
  matrix is singular, and the functions needing M⁻¹ or Λ are not generated.
  Links welded to a fixed base are not checked: their inertia never enters
  the dynamics.  A body with zero mass and a rotational inertia (a flywheel
  about its centre) is a rigid body like any other.
* **Noted** (``Robot.notes``): links lumped on fixed joints, links welded to
  the fixed base, locked joints, axes scaled to unit length (when not unit to
  :data:`AXIS_UNIT`), and numbers made exact integers.  Only round-off is
  rounded: an entry within :data:`SNAP_ULPS` units in the last place of its
  array's largest entry of an integer becomes that integer
  (``cos(π/2) = 6.1e-17`` → 0, which keeps the generated code short); a number
  the file states to more digits than that, like ``cos(1.57079632679) = 4.9e-12``,
  is kept, so the model is the file's.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from soagen.model.errors import ModelWarning, RobotError

from soagen.model.robot import (DEFAULT_GRAVITY, FLOATING, PRISMATIC, REVOLUTE, SPHERICAL, Body, PointTip, Robot, Tip,
                                 _vector)
from soagen.model.spatial import axis_angle, rpy_matrix, skew

#: numbers within this many units in the last place (ulps) of their array's largest
#: entry of an integer are that integer: round-off of cos(π/2) and of lumping
SNAP_ULPS = 4
#: principal moments are tested to this fraction of the body's largest moment
#: (round-off of lumping and of the eigenvalue solver, far below any physical meaning)
INERTIA_ROUNDOFF = 1e-12
#: D(k) is zero when its smallest eigenvalue is at most this fraction of the
#: largest entry of the articulated inertia P(k) it comes from
D_ZERO = 1e-12
#: a joint axis whose length differs from 1 by more than this is noted when scaled to
#: unit length (below it, the file's axis is unit to its printed digits: (0, -1, 4.4e-8))
AXIS_UNIT = 1e-9
_EPS = float(np.finfo(float).eps)


def _inertia_matrix(value, what):
    v = np.asarray(value, dtype=float)
    if v.shape == (6,):  # ixx iyy izz ixy iyz ixz  (RBDL/Corke order)
        ixx, iyy, izz, ixy, iyz, ixz = v
        v = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if v.shape != (3, 3) or not np.all(np.isfinite(v)):
        raise RobotError(f"{what}: inertia must be a finite 3x3 matrix or 6 numbers")
    return v


def check_defined(mass, inertia, what):
    """Refuse what makes the dynamics undefined: a mass that is not finite or
    negative, an inertia matrix (3, 3) that is not symmetric."""
    if not np.isfinite(mass) or mass < 0.0:
        raise RobotError(f"{what}: mass must be finite and >= 0, got {mass!r}")
    if not np.allclose(inertia, inertia.T, rtol=0, atol=1e-12 + 1e-9 * np.abs(inertia).max()):
        raise RobotError(f"{what}: inertia matrix is not symmetric")


def inertia_finding(mass, com, inertia):
    """Why a rigid body's rotational inertia (3, 3) about its centre of mass
    ``com`` (3,) is not physical, as a phrase, or None: principal moments not
    positive semi-definite, or violating the triangle inequality
    ``I1 + I2 >= I3``, by more than :data:`INERTIA_ROUNDOFF` of the body's
    inertia scale: the largest principal moment about its frame origin (where
    the dynamics uses it, ``m |c|²`` included; files write 1e-20 noise into
    the inertia of point masses).  Zero mass with a rotational inertia is
    physical: a flywheel about its centre."""
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    scale = float(max(np.abs(moments).max(), np.linalg.eigvalsh(inertia + mass * _parallel(com)).max()))
    tol = INERTIA_ROUNDOFF * scale
    shown = np.array2string(moments, precision=3)
    if moments[0] < -tol:
        return (f"inertia is not positive semi-definite: principal moments {shown}, the smallest "
                f"{moments[0]:.2e} ({-moments[0] / scale:.1e} of the inertia scale {scale:.2e})")
    excess = float(moments[2] - moments[1] - moments[0])
    if excess > tol:
        return (f"principal moments {shown} violate the triangle inequality I1 + I2 >= I3 by {excess:.2e} "
                f"({excess / scale:.1e} of the inertia scale {scale:.2e})")
    return None


@dataclass
class _Link:
    name: str
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))

    @property
    def has_inertia(self):
        return self.mass != 0.0 or bool(np.any(self.inertia))


@dataclass
class _Joint:
    name: str
    kind: str
    parent: str
    child: str
    rotation: np.ndarray
    translation: np.ndarray
    axis: np.ndarray
    limits: tuple | None


class _Snapper:
    """Rounds round-off to integers (:data:`SNAP_ULPS`) and counts what it changed."""

    def __init__(self):
        self.count, self.largest = 0, 0.0

    def __call__(self, a):
        a = np.array(a, dtype=float)
        scale = float(np.abs(a).max(initial=0.0))
        r = np.round(a)
        change = np.abs(a - r)
        snap = (change <= SNAP_ULPS * _EPS * scale) & (change > 0.0)
        if snap.any():
            self.count += int(snap.sum())
            self.largest = max(self.largest, float(change[snap].max()) / scale)
        a[snap] = r[snap]
        a[a == 0.0] = 0.0  # no negative zeros
        return a

    def note(self):
        if not self.count:
            return None
        return (f"{self.count} numbers within {SNAP_ULPS} ulps of an integer made exact (round-off such as "
                f"cos(pi/2) = 6.1e-17; the largest change {self.largest:.1e} of its array's largest entry)")


class RobotBuilder:
    """Build a :class:`Robot` link by link (also the back end of the URDF loader).

    Examples
    --------
    >>> b = RobotBuilder("arm")
    >>> b.add_link("base")
    >>> b.add_link("l1", mass=1.0, com=(0.5, 0, 0), inertia=(0.01, 0.1, 0.1, 0, 0, 0))
    >>> b.add_joint("j1", "revolute", "base", "l1", axis=(0, 0, 1))
    >>> robot = b.build(tips=["l1"])
    """

    def __init__(self, name, gravity=DEFAULT_GRAVITY, source=None):
        self.name = name
        self.gravity = _vector(gravity, "gravity")
        self.source = source or name
        self._links: dict[str, _Link] = {}
        self._joints: list[_Joint] = []
        self._notes: list[str] = []   # what add_joint changed (axes scaled to unit length)

    def add_link(self, name, mass=0.0, com=(0.0, 0.0, 0.0), inertia=None):
        """Add a link; ``inertia`` about the centre of mass (3x3 or
        ``(ixx, iyy, izz, ixy, iyz, ixz)``), ``com`` in the link frame.  Only
        what leaves the dynamics undefined is refused here (:func:`check_defined`);
        :meth:`build` checks the rigid bodies the dynamics uses."""
        what = f"{self.source}: link '{name}'"
        if name in self._links:
            raise RobotError(f"{self.source}: duplicate link name '{name}'")
        inertia = np.zeros((3, 3)) if inertia is None else _inertia_matrix(inertia, what)
        mass = float(mass)
        check_defined(mass, inertia, what)
        self._links[name] = _Link(name, mass, _vector(com, f"{what} com"), inertia)

    def add_joint(self, name, kind, parent, child, xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0),
                  axis=(1.0, 0.0, 0.0), limits=None, rotation=None):
        """Add a joint (``revolute``, ``continuous``, ``prismatic``, ``spherical``,
        ``floating`` or ``fixed``); its frame is at ``xyz`` with orientation
        ``rpy`` (or ``rotation``) in the parent link.  A floating joint must
        connect the root link (it makes a floating base); ``axis`` is ignored
        by spherical, floating and fixed joints."""
        what = f"{self.source}: joint '{name}'"
        if any(j.name == name for j in self._joints):
            raise RobotError(f"{self.source}: duplicate joint name '{name}'")
        if kind == "continuous":
            kind, limits = REVOLUTE, None
        if kind not in (REVOLUTE, PRISMATIC, SPHERICAL, FLOATING, "fixed"):
            raise RobotError(f"{what}: unsupported joint type '{kind}' (revolute, continuous, prismatic, "
                             "spherical, floating and fixed are supported)")
        a = _vector(axis, f"{what} axis")
        if kind in (REVOLUTE, PRISMATIC):
            norm = float(np.linalg.norm(a))
            if norm < 1e-9:
                raise RobotError(f"{what}: joint axis has zero length")
            if abs(norm - 1.0) > AXIS_UNIT:
                self._notes.append(f"joint '{name}': axis {np.array2string(a, precision=6)} scaled to unit length")
            a = a / norm
        else:
            a, limits = np.array([1.0, 0.0, 0.0]), None
        rot = rpy_matrix(_vector(rpy, f"{what} rpy")) if rotation is None else np.asarray(rotation, float)
        if rot.shape != (3, 3) or not np.all(np.isfinite(rot)) or not np.allclose(rot.T @ rot, np.eye(3), atol=1e-9):
            raise RobotError(f"{what}: origin (xyz, rpy) is not finite or not a rotation")
        if limits is not None and not all(np.isfinite(limits)):
            limits = None
        self._joints.append(_Joint(name, kind, parent, child, rot, _vector(xyz, f"{what} xyz"),
                                   a, tuple(map(float, limits)) if limits else None))

    def outline(self):
        """What was added, before :meth:`build` merges anything.

        Returns
        -------
        links : dict
            ``{link name: mass}``, in the order added.
        joints : list of tuple
            ``(name, type, parent link, child link)``, in the order added (continuous joints as revolute).
        """
        return ({n: link.mass for n, link in self._links.items()},
                [(j.name, j.kind, j.parent, j.child) for j in self._joints])

    # ------------------------------------------------------------------ build
    def build(self, tips=(), lock=None, floating_base=False, strict=False, armature=None, friction=None,
              coulomb_velocity=None):
        """Merge fixed joints, order the bodies depth-first and check the result.

        Parameters
        ----------
        tips : list
            Link names, or ``(link, offset (3,))`` pairs for a point offset in
            the link frame (6-row tips), or :func:`point_tip` (3-row point tips).
        lock : dict, optional
            ``{joint name: value}``: 1-dof joints held fixed at that value.
        floating_base : bool
            Put a floating joint ``root_joint`` above the root link (Pinocchio's
            free-flyer): the root link becomes body 0 with its inertia.
        strict : bool
            Refuse (:class:`RobotError`) what is otherwise a
            :class:`ModelWarning`: non-physical inertia, singular joints.
        armature, friction, coulomb_velocity
            Actuator terms of 1-dof joints (:meth:`Robot.with_actuators`):
            ``{joint: rotor inertia}``, ``{joint: (viscous, coulomb)}``.

        Returns
        -------
        Robot
            With ``singular_joints``/``singular_reason`` and ``notes`` filled in.
        """
        lock = dict(lock or {})
        for name in lock:
            joint = next((j for j in self._joints if j.name == name), None)
            if joint is None:
                raise RobotError(f"{self.source}: cannot lock unknown joint '{name}'")
            if joint.kind in (SPHERICAL, FLOATING):
                raise RobotError(f"{self.source}: cannot lock the {joint.kind} joint '{name}'")
        if floating_base:
            roots = [n for n in self._links if not any(j.child == n for j in self._joints)]
            if len(roots) == 1 and not any(j.kind == FLOATING for j in self._joints):
                world = "__world__"
                self._links[world] = _Link(world)
                self._joints.append(_Joint("root_joint", FLOATING, world, roots[0], np.eye(3), np.zeros(3),
                                           np.array([1.0, 0.0, 0.0]), None))
                try:
                    return self.build(tips, lock, strict=strict, armature=armature, friction=friction,
                                      coulomb_velocity=coulomb_velocity)
                finally:
                    del self._links[world]
                    self._joints.pop()
        root = self._root()
        children = {n: [] for n in self._links}
        for j in self._joints:
            children[j.parent].append(j)

        bodies: list[dict] = []
        # link name -> (body index or -1, rotation (3,3), offset (3,)) of the link frame in that body
        where: dict[str, tuple] = {root: (-1, np.eye(3), np.zeros(3))}
        lumped: dict[int, list[str]] = {-1: [root] if self._links[root].has_inertia else []}
        notes = list(self._notes)
        visited = {root}

        def lump(body, link, rot, off):
            """Add link's inertia, placed by (rot, off), to ``body``'s (Pinocchio's
            ``Inertia +=``, a zero total mass included)."""
            if not link.has_inertia:
                return
            lumped[body].append(link.name)
            if body < 0:
                return
            b = bodies[body]
            m1, m2 = b["mass"], link.mass
            c2 = off + rot @ link.com
            m = m1 + m2
            c = (m1 * b["com"] + m2 * c2) / m if m > 0.0 else b["com"]
            i1 = b["inertia"] + m1 * _parallel(b["com"] - c)
            i2 = rot @ link.inertia @ rot.T + m2 * _parallel(c2 - c)
            b.update(mass=m, com=c, inertia=i1 + i2)

        def visit(link_name):
            # Pinocchio's order: depth-first, child joints in byte order of their names
            body, rot, off = where[link_name]
            for j in sorted(children[link_name], key=lambda j: j.name.encode()):
                if j.child in visited:
                    raise RobotError(f"{self.source}: joint '{j.name}' closes a loop")
                visited.add(j.child)
                jr, jt = rot @ j.rotation, off + rot @ j.translation
                child = self._links[j.child]
                if j.kind == FLOATING and body >= 0:
                    raise RobotError(f"{self.source}: floating joint '{j.name}' must connect the root link "
                                     "(a floating base); inside the tree it is not supported")
                if j.kind == "fixed" or j.name in lock:
                    if j.name in lock:
                        value = float(lock[j.name])
                        notes.append(f"joint '{j.name}' locked at {value:g}")
                        jt = jt + (jr @ j.axis * value if j.kind == PRISMATIC else 0.0)
                        jr = jr @ axis_angle(j.axis, value) if j.kind == REVOLUTE else jr
                    where[j.child] = (body, jr, jt)
                    lump(body, child, jr, jt)
                else:
                    bodies.append(dict(name=j.child, joint=j.name, joint_type=j.kind, parent=body,
                                       rotation=jr, translation=jt, axis=j.axis, mass=child.mass,
                                       com=child.com.copy(), inertia=child.inertia.copy(),
                                       limits=j.limits))
                    where[j.child] = (len(bodies) - 1, np.eye(3), np.zeros(3))
                    lumped[len(bodies) - 1] = []
                visit(j.child)

        visit(root)
        if not bodies:
            raise RobotError(f"{self.source}: no movable joint")
        snap = _Snapper()
        body_tuple = tuple(Body(**{k: snap(v) if isinstance(v, np.ndarray) else v for k, v in b.items()})
                           for b in bodies)
        tip_list = []
        for spec in tips:
            point = isinstance(spec, PointTip)
            name, offset = (spec.link, spec.offset) if point else (spec, (0.0, 0.0, 0.0)) if isinstance(spec, str) \
                else spec
            if name not in where:
                raise RobotError(f"{self.source}: unknown tip link '{name}' "
                                 f"(links: {', '.join(sorted(self._links))})")
            body, rot, off = where[name]
            if body < 0:
                raise RobotError(f"{self.source}: tip link '{name}' does not move (it is fixed to the base)")
            off = off + rot @ _vector(offset, f"tip '{name}' offset")
            tip_list.append(Tip(name, body, snap(rot), snap(off), point))

        findings = []
        for k, b in enumerate(body_tuple):
            finding = inertia_finding(b.mass, b.com, b.inertia)
            if finding:
                findings.append(f"{self.source}: link '{b.name}'{_lumped_into(lumped[k])}: {finding}")
        robot = Robot(self.name, body_tuple, tuple(tip_list), self.gravity.copy())
        singular = singular_bodies(robot)
        reason = ""
        if singular:
            reason = _singular_reason(robot, singular)
            findings.append(f"{self.source}: {reason} (functions that need M^-1 or Lambda are not generated)")
        if findings and strict:
            more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
            raise RobotError(f"{findings[0]}{more} (refused: strict)")
        for text in findings:
            warnings.warn(text, ModelWarning, stacklevel=2)

        if lumped[-1] and body_tuple[0].joint_type != FLOATING:
            notes.append(f"{_quoted(lumped[-1])} welded to the fixed base: "
                         f"{'its' if len(lumped[-1]) == 1 else 'their'} inertia does not enter the dynamics")
        for k, names in lumped.items():
            if k >= 0 and names:
                notes.append(f"{_quoted(names)} lumped into the body of link '{body_tuple[k].name}' (fixed joints)")
        if snap.note():
            notes.append(snap.note())
        robot = Robot(self.name, body_tuple, tuple(tip_list), self.gravity.copy(),
                      singular_joints=tuple(body_tuple[k].joint for k in singular), singular_reason=reason,
                      notes=tuple(notes))
        if armature or friction or coulomb_velocity is not None:
            robot = robot.with_actuators(armature, friction, coulomb_velocity)
        return robot

    def _root(self):
        """The one root link; refuses unknown links, loops and forests."""
        for j in self._joints:
            for link in (j.parent, j.child):
                if link not in self._links:
                    raise RobotError(f"{self.source}: joint '{j.name}' names unknown link '{link}'")
        parent_joint = {}
        for j in self._joints:
            if j.child in parent_joint:
                raise RobotError(f"{self.source}: link '{j.child}' has two parent joints "
                                 f"('{parent_joint[j.child].name}', '{j.name}'): the joint graph has a loop")
            parent_joint[j.child] = j
        roots = [n for n in self._links if n not in parent_joint]
        if not roots:
            raise RobotError(f"{self.source}: no root link: the joint graph has a loop")
        if len(roots) > 1:
            raise RobotError(f"{self.source}: several root links {roots}: the links do not form one tree")
        return roots[0]


def singular_bodies(robot, poses=2):
    """Bodies whose articulated inertia D(k) = H*(k) P(k) H(k) is not positive
    definite at ``poses`` random configurations (seeded): the mass matrix is
    then singular (or, with non-physical inertia, indefinite).  The tip-to-base
    Riccati sweep of [RJK] with a pseudo-inverse of D(k), so that one zero D(k)
    does not spoil its ancestors'.

    Returns
    -------
    dict
        ``{body index: smallest eigenvalue of D(k) / max |P(k)|}`` for the bodies
        where it is at most :data:`D_ZERO` (0 when P(k) = 0), in body order.
    """
    from soagen.model.frames import kinematics

    rng = np.random.default_rng(0)
    found = {}
    for _ in range(poses):
        kin = kinematics(robot, robot.random_configuration(rng))
        P = [m.copy() for m in kin.M]
        for k in reversed(range(robot.nb)):
            h = kin.H[k]
            w, V = np.linalg.eigh(h.T @ P[k] @ h)
            scale = float(np.abs(P[k]).max())
            tol = D_ZERO * scale
            if not w.min() > tol:
                found[k] = min(found.get(k, np.inf), float(w.min()) / scale if scale > 0.0 else 0.0)
            keep = np.abs(w) > tol
            Dpinv = (V[:, keep] / w[keep]) @ V[:, keep].T
            p = robot.bodies[k].parent
            if p >= 0:
                Pplus = P[k] - P[k] @ h @ Dpinv @ h.T @ P[k]
                P[p] += kin.phi[k] @ Pplus @ kin.phi[k].T
    return dict(sorted(found.items()))


def _singular_reason(robot, singular):
    """One sentence: which joints, why M is singular, how to fix it."""
    leaves, zero, negative = [], [], []
    for k, smallest in singular.items():
        b = robot.bodies[k]
        if smallest < -D_ZERO:
            negative.append(f"joint '{b.joint}' (link '{b.name}')")
        elif not robot.children(k) and b.mass == 0.0:
            leaves.append(f"'{b.name}' (joint '{b.joint}')")
        else:
            zero.append(f"joint '{b.joint}' (link '{b.name}')")
    parts = []
    if leaves:
        parts.append(f"massless leaf {leaves[0]}: its articulated inertia D(k) = 0" if len(leaves) == 1
                     else f"massless leaves {', '.join(leaves)}: their articulated inertia D(k) = 0")
    if zero:
        parts.append(f"{', '.join(zero)} {'moves' if len(zero) == 1 else 'move'} bodies with no inertia "
                     "about the joint axis: D(k) = 0")
    if negative:
        parts.append(f"{', '.join(negative)}: D(k) < 0 (non-physical inertia)")
    what = "not positive definite" if negative else "singular"
    return (f"{'; '.join(parts)}, so the mass matrix is {what}; to fix it, lock the joint "
            "(--lock JOINT=VALUE, or lock={JOINT: VALUE}) or give the link a mass and inertia")


def _lumped_into(names):
    return f" (with {_quoted(names)} lumped in on fixed joints)" if names else ""


def _quoted(names):
    return ("link " if len(names) == 1 else "links ") + ", ".join(f"'{n}'" for n in names)


def _parallel(d):
    """Parallel-axis term ``-d̃ d̃`` (3, 3) for offset ``d`` (3,)."""
    s = skew(d)
    return -s @ s
