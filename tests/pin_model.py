"""A Pinocchio model built directly from a soagen Robot (no URDF), the oracle
for robots URDF cannot describe (spherical joints).  Conventions are converted
by :mod:`soagen.pinocchio_convention`.

Not a test module; test files import it after putting ``tests/`` on ``sys.path``.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from soagen import pinocchio_convention as pc
from soagen.model import FLOATING, PRISMATIC, REVOLUTE, SPHERICAL


def pinocchio_model(robot):
    """(model, data, tip frame ids) of ``robot``: one Pinocchio joint per body,
    the body's inertia appended to it, an OP_FRAME per tip."""
    model = pin.Model()
    model.gravity = pin.Motion(np.asarray(robot.gravity, float), np.zeros(3))
    ids = []
    for k, b in enumerate(robot.bodies):
        parent = 0 if b.parent < 0 else ids[b.parent]
        joint = {REVOLUTE: lambda: pin.JointModelRevoluteUnaligned(*b.axis),
                 PRISMATIC: lambda: pin.JointModelPrismaticUnaligned(*b.axis),
                 SPHERICAL: pin.JointModelSpherical, FLOATING: pin.JointModelFreeFlyer}[b.joint_type]()
        jid = model.addJoint(parent, joint, pin.SE3(b.rotation, b.translation), b.joint)
        model.appendBodyToJoint(jid, pin.Inertia(b.mass, b.com, b.inertia), pin.SE3.Identity())
        ids.append(jid)
    frames = []
    for t in robot.tips:
        frames.append(model.addFrame(pin.Frame(t.name, ids[t.body], pin.SE3(t.rotation, t.offset),
                                               pin.FrameType.OP_FRAME)))
    return model, model.createData(), frames


def urdf_model(robot, path):
    """(model, data, tip frame ids) from Pinocchio's own URDF parser, with a
    free-flyer root when ``robot`` has a floating base; the tips must be links
    (``load_urdf(tips=[link, ...])``), found as Pinocchio BODY frames."""
    floating = robot.bodies[0].joint_type == FLOATING
    model = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating
             else pin.buildModelFromUrdf(str(path)))
    model.gravity = pin.Motion(np.asarray(robot.gravity, float), np.zeros(3))
    names = [n for n in model.names][1:]
    if names != [b.joint for b in robot.bodies]:
        raise ValueError(f"joint order differs: Pinocchio {names}, soagen {[b.joint for b in robot.bodies]}")
    frames = [model.getFrameId(t.name, pin.FrameType.BODY) for t in robot.tips]
    return model, model.createData(), frames


class Oracle:
    """Pinocchio's answers in soagen's conventions: the model is built from the
    Robot itself, or parsed by Pinocchio from ``urdf`` (independent of soagen's
    URDF reading and fixed-joint merging)."""

    def __init__(self, robot, urdf=None):
        self.robot = robot
        self.model, self.data, self.frames = (pinocchio_model(robot) if urdf is None
                                              else urdf_model(robot, urdf))

    def _q(self, q):
        qp = pc.q_to_pinocchio(self.robot, q)
        if self.model.nq == len(qp):
            return qp
        # URDF continuous joints: Pinocchio's q is (cos, sin) (nq 2, nv 1)
        out, i = [], 0
        for joint in list(self.model.joints)[1:]:
            if joint.nq == 2 and joint.nv == 1:
                out += [np.cos(qp[i]), np.sin(qp[i])]
                i += 1
            else:
                out += list(qp[i:i + joint.nq])
                i += joint.nq
        return np.array(out)

    def _v(self, v):
        return pc.v_to_pinocchio(self.robot, v)

    def rnea(self, q, qd, qdd):
        tau = pin.rnea(self.model, self.data, self._q(q), self._v(qd), self._v(qdd))
        return pc.v_from_pinocchio(self.robot, tau)

    def mass_matrix(self, q):
        M = pin.crba(self.model, self.data, self._q(q))
        M = np.triu(M) + np.triu(M, 1).T
        return pc.matrix_from_pinocchio(self.robot, M)

    def mass_matrix_inverse(self, q):
        Mi = pin.computeMinverse(self.model, self.data, self._q(q))
        Mi = np.triu(Mi) + np.triu(Mi, 1).T
        return pc.matrix_from_pinocchio(self.robot, Mi)

    def aba(self, q, qd, tau):
        a = pin.aba(self.model, self.data, self._q(q), self._v(qd), self._v(tau))
        return pc.v_from_pinocchio(self.robot, a)

    def jacobian(self, q):
        qp = self._q(q)
        pin.computeJointJacobians(self.model, self.data, qp)
        pin.updateFramePlacements(self.model, self.data)
        Js = [pin.getFrameJacobian(self.model, self.data, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
              for f in self.frames]
        return pc.jacobian_from_pinocchio(self.robot, Js)

    def jdot_qdot(self, q, qd):
        """J̇q̇ (6m,): classical tip accelerations ``[angular; linear]`` at qdd = 0, no
        gravity, world-aligned axes at each tip."""
        pin.forwardKinematics(self.model, self.data, self._q(q), self._v(qd), np.zeros(self.model.nv))
        out = []
        for f in self.frames:
            a = pin.getFrameClassicalAcceleration(self.model, self.data, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
            out += [a.angular, a.linear]
        return np.concatenate(out)

    def os_inertia(self, q):
        """Λ = (J M⁻¹ Jᵀ)⁻¹ from Pinocchio's J and M⁻¹."""
        J = self.jacobian(q)
        return np.linalg.inv(J @ self.mass_matrix_inverse(q) @ J.T)

    def integrate(self, q, v, dt):
        return pin.integrate(self.model, self._q(q), self._v(v) * dt)
