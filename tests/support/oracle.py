"""Pinocchio, the independent route, in soagen's conventions.

:class:`Oracle` wraps one Pinocchio model of a soagen Robot, built either by
Pinocchio's own URDF reader (``urdf=path``: independent of soagen's parsing,
fixed-joint lumping and snapping; a free-flyer root when the robot has a
floating base; ``lock`` joints removed with ``buildReducedModel``) or joint by
joint from the Robot (for what URDF cannot describe: spherical joints).

Conventions converted here: Pinocchio's continuous joints have q = (cos, sin)
(nq = 2); its free-flyer velocity is [v; ω] (:mod:`soagen.model.pinocchio_convention`);
its spatial vectors are [linear; angular].  Tip quantities are in world-aligned
axes at the tip (``LOCAL_WORLD_ALIGNED``), tips stacked as in soagen.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin

from soagen.model import pinocchio_convention as pc
from soagen.model import robots
from soagen.model.robot import FLOATING, PRISMATIC, REVOLUTE, SPHERICAL

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


def erd_robots_dir() -> Path:
    """The ``robots`` folder of the installed example-robot-data (:func:`soagen.robots.erd_root`)."""
    root = robots.erd_root()
    if root is None:
        raise FileNotFoundError("example-robot-data robots folder not found")
    return root


def erd_urdf(relpath: str) -> str:
    """Absolute path of a URDF of example-robot-data, e.g. ``"panda_description/urdf/panda.urdf"``."""
    path = erd_robots_dir() / relpath
    if not path.is_file():
        raise FileNotFoundError(path)
    return str(path)


def _model_from_robot(robot):
    """One Pinocchio joint per body, the body's inertia appended, an OP_FRAME per tip."""
    model = pin.Model()
    ids = []
    for b in robot.bodies:
        parent = 0 if b.parent < 0 else ids[b.parent]
        joint = {REVOLUTE: lambda: pin.JointModelRevoluteUnaligned(*b.axis),
                 PRISMATIC: lambda: pin.JointModelPrismaticUnaligned(*b.axis),
                 SPHERICAL: pin.JointModelSpherical, FLOATING: pin.JointModelFreeFlyer}[b.joint_type]()
        jid = model.addJoint(parent, joint, pin.SE3(b.rotation, b.translation), b.joint)
        model.appendBodyToJoint(jid, pin.Inertia(b.mass, b.com, b.inertia), pin.SE3.Identity())
        ids.append(jid)
    frames = [model.addFrame(pin.Frame(t.name, ids[t.body], pin.SE3(t.rotation, t.offset), pin.FrameType.OP_FRAME))
              for t in robot.tips]
    return model, frames


def _model_from_urdf(robot, path, lock):
    floating = robot.bodies[0].joint_type == FLOATING
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating else \
        pin.buildModelFromUrdf(str(path))
    if lock:
        q_ref = pin.neutral(model)
        ids = []
        for name, value in lock.items():
            jid = model.getJointId(name)
            ids.append(jid)
            j = model.joints[jid]
            if j.nq == 2:       # a continuous joint: (cos, sin)
                q_ref[j.idx_q:j.idx_q + 2] = np.cos(value), np.sin(value)
            else:
                q_ref[j.idx_q] = value
        model = pin.buildReducedModel(model, ids, q_ref)
    names = list(model.names)[1:]
    if names != [b.joint for b in robot.bodies]:
        raise ValueError(f"joint order differs: Pinocchio {names}, soagen {[b.joint for b in robot.bodies]}")
    frames = []
    for t in robot.tips:   # tips must be link frames: Pinocchio knows them as BODY frames
        if not model.existFrame(t.name, pin.FrameType.BODY):
            raise KeyError(f"no link named {t.name!r}")
        frames.append(model.getFrameId(t.name, pin.FrameType.BODY))
    return model, frames


class Oracle:
    """Pinocchio's answers for ``robot`` in soagen's conventions.

    Parameters
    ----------
    robot : soagen.Robot
    urdf : path, optional   parse this file with Pinocchio (tips must be links)
    lock : dict, optional   ``{joint: value}`` held fixed, as ``load_urdf(lock=...)``
    """

    def __init__(self, robot, urdf=None, lock=None):
        self.robot = robot
        self.model, self.frames = _model_from_robot(robot) if urdf is None else _model_from_urdf(robot, urdf, lock)
        self.model.gravity = pin.Motion(np.asarray(robot.gravity, float), np.zeros(3))
        if robot.actuators is not None:          # rotor inertias: crba, aba and rnea honour model.armature
            self.model.armature = pc.v_to_pinocchio(robot, robot.actuators.armature)
        self.data = self.model.createData()
        self.joint_names = list(self.model.names)[1:]
        joints = list(self.model.joints)[1:]
        # (soagen q slice, Pinocchio q start, Pinocchio nq) per joint
        self._qmap = [(robot.qslice(k), j.idx_q, j.nq) for k, j in enumerate(joints)]

    # ------------------------------------------------------------ conventions
    def q(self, q):
        """Pinocchio's configuration: quaternions normalized, continuous joints as (cos, sin)."""
        q = pc.q_to_pinocchio(self.robot, q)
        out = np.empty(self.model.nq)
        for s, iq, nq in self._qmap:
            if nq == 2 and s.stop - s.start == 1:
                out[iq:iq + 2] = np.cos(q[s.start]), np.sin(q[s.start])
            else:
                out[iq:iq + nq] = q[s]
        return out

    def v(self, v):
        return pc.v_to_pinocchio(self.robot, v)

    def _from(self, v):
        return pc.v_from_pinocchio(self.robot, v)

    def random_state(self, rng):
        """(q, qd, qdd, tau): q uniform within Pinocchio's finite joint limits
        (else ±π; quaternions uniform), the rest uniform in [-1, 1]."""
        q = self.robot.random_configuration(rng)
        lower, upper = self.model.lowerPositionLimit, self.model.upperPositionLimit
        for s, iq, nq in self._qmap:
            if s.stop - s.start == 1 and nq == 1:
                lo, hi = lower[iq], upper[iq]
                q[s.start] = rng.uniform(lo, hi) if -1e10 < lo < hi < 1e10 else rng.uniform(-np.pi, np.pi)
            elif s.stop - s.start == 1:
                q[s.start] = rng.uniform(-np.pi, np.pi)
        n = self.robot.nv
        return (q,) + tuple(rng.uniform(-1.0, 1.0, n) for _ in range(3))

    # ------------------------------------------------------------ dynamics
    def rnea(self, q, qd, qdd, f_tip=None):
        """M q̈ + C + G (+ Jᵀ f_tip: the wrenches (6m,) the tips exert, through ``fext``)."""
        args = (self.model, self.data, self.q(q), self.v(qd), self.v(qdd))
        if f_tip is not None:
            args += (self._fext(q, f_tip),)
        return self._from(pin.rnea(*args))

    def _rows(self):
        """Rows (r,) each tip keeps of its 6 [angular; linear] (the linear 3 of a point tip)."""
        return [6 * i + r for i, t in enumerate(self.robot.tips) for r in t.rows]

    def _fext(self, q, f_tip):
        """Pinocchio's external forces (on the robot, joint-local) of tip forces (r,) on the environment."""
        full = np.zeros(6 * len(self.robot.tips))
        full[self._rows()] = f_tip
        f_tip = full.reshape(-1, 6)
        pin.forwardKinematics(self.model, self.data, self.q(q))
        fext = pin.StdVec_Force()
        fext.extend([pin.Force.Zero() for _ in range(self.model.njoints)])
        for fid, f in zip(self.frames, f_tip):
            frame = self.model.frames[fid]
            o_m_i = self.data.oMi[frame.parentJoint]
            o_m_f = o_m_i * frame.placement
            f_lwa = pin.Force(-f[3:], -f[:3])                   # on the robot, at the tip, world axes
            f_world = pin.SE3(np.eye(3), o_m_f.translation).act(f_lwa)
            fext[frame.parentJoint] = fext[frame.parentJoint] + o_m_i.actInv(f_world)
        return fext

    def gravity(self, q):
        return self._from(pin.computeGeneralizedGravity(self.model, self.data, self.q(q)))

    def bias(self, q, qd):
        """C + G (``nonLinearEffects``)."""
        return self._from(pin.nonLinearEffects(self.model, self.data, self.q(q), self.v(qd)))

    def coriolis(self, q, qd):
        """C(q, q̇) q̇ from Pinocchio's Coriolis matrix (another algorithm than rnea)."""
        C = pin.computeCoriolisMatrix(self.model, self.data, self.q(q), self.v(qd))
        return self._from(C @ self.v(qd))

    def mass_matrix(self, q):
        M = pin.crba(self.model, self.data, self.q(q))
        return pc.matrix_from_pinocchio(self.robot, np.triu(M) + np.triu(M, 1).T)

    def mass_matrix_inverse(self, q):
        Mi = pin.computeMinverse(self.model, self.data, self.q(q))
        return pc.matrix_from_pinocchio(self.robot, np.triu(Mi) + np.triu(Mi, 1).T)

    def aba(self, q, qd, tau, f_tip=None):
        args = (self.model, self.data, self.q(q), self.v(qd), self.v(tau))
        if f_tip is not None:
            args += (self._fext(q, f_tip),)
        return self._from(pin.aba(*args))

    # ------------------------------------------------------------ tips
    def jacobian(self, q):
        """Tip Jacobians stacked, (r, nv), rows [angular; linear] (linear only for a point tip)."""
        pin.computeJointJacobians(self.model, self.data, self.q(q))
        pin.updateFramePlacements(self.model, self.data)
        return pc.jacobian_from_pinocchio(self.robot, [pin.getFrameJacobian(self.model, self.data, f, LWA)
                                                       for f in self.frames])

    def jdot_qdot(self, q, qd):
        """J̇q̇ stacked (r,): classical tip accelerations at q̈ = 0, no gravity."""
        pin.forwardKinematics(self.model, self.data, self.q(q), self.v(qd), np.zeros(self.model.nv))
        out = []
        for f in self.frames:
            a = pin.getFrameClassicalAcceleration(self.model, self.data, f, LWA)
            out += [a.angular, a.linear]
        return np.concatenate(out)[self._rows()]

    def tip_poses(self, q):
        """World poses of the tip frames, (m, 4, 4)."""
        pin.forwardKinematics(self.model, self.data, self.q(q))
        return np.array([pin.updateFramePlacement(self.model, self.data, f).homogeneous for f in self.frames])

    def os_inertia(self, q):
        """Λ = (J M⁻¹ Jᵀ)⁻¹ from Pinocchio's J and M⁻¹."""
        J = self.jacobian(q)
        return np.linalg.inv(J @ self.mass_matrix_inverse(q) @ J.T)

    def integrate(self, q, v, dt):
        return pin.integrate(self.model, self.q(q), self.v(v) * dt)

    # ------------------------------------------------------------ identification
    def parameters(self):
        """π from Pinocchio's inertias (``Inertia.toDynamicParameters()`` per joint)."""
        return np.concatenate([self.model.inertias[j].toDynamicParameters() for j in range(1, self.model.njoints)])

    def regressor(self, q, qd, qdd):
        """``computeJointTorqueRegressor`` (nv, 10 nb), rows in soagen's order."""
        Y = pin.computeJointTorqueRegressor(self.model, self.data, self.q(q), self.v(qd), self.v(qdd))
        return pc.v_from_pinocchio(self.robot, Y)          # rows permuted (the free-flyer)

    def coriolis_matrix(self, q, qd):
        """C(q, q̇) of ``computeCoriolisMatrix`` (Christoffel-consistent), soagen's order."""
        return pc.matrix_from_pinocchio(self.robot, pin.computeCoriolisMatrix(self.model, self.data, self.q(q),
                                                                             self.v(qd)))

    def slotine_li(self, q, qd, qdr, qddr):
        """M q̈_r + C(q, q̇) q̇_r + G from crba, computeCoriolisMatrix and the gravity torques."""
        return self.mass_matrix(q) @ qddr + self.coriolis_matrix(q, qd) @ qdr + self.gravity(q)


def central_differences(robot, oracle, solve, q, vectors, h=1e-6):
    """Central differences of ``solve(qp, *vectors_pin)`` (Pinocchio's configuration and the
    ``vectors`` in Pinocchio's velocity order) along q (tangent space: ``pin.integrate``) and each
    of the ``vectors``, soagen's direction j in Pinocchio's order; -> [(len(out), nv)] per one."""
    qp, vp = oracle.q(q), [oracle.v(x) for x in vectors]
    out = []
    for which in range(len(vectors) + 1):
        cols = []
        for j in range(robot.nv):
            step = h * oracle.v(np.eye(robot.nv)[j])
            if which == 0:
                plus, minus = solve(pin.integrate(oracle.model, qp, step), *vp), \
                    solve(pin.integrate(oracle.model, qp, -step), *vp)
            else:
                moved = lambda sign: [x + sign * step if i == which - 1 else x for i, x in enumerate(vp)]
                plus, minus = solve(qp, *moved(1)), solve(qp, *moved(-1))
            cols.append((plus - minus) / (2 * h))
        out.append(np.array(cols).T)
    return out
