"""soagen's conventions against Pinocchio's, in one place (numpy only).

The two agree on joint order (depth-first, children by name), on spherical
joints (q = quaternion (x, y, z, w), v = body-frame angular velocity) and on
1-dof joints.  They differ in two places:

* **quaternion length**: soagen uses the rotation of q/|q| for any non-zero
  quaternion; Pinocchio uses the raw entries (a non-unit quaternion gives a
  non-orthogonal matrix there).  :func:`q_to_pinocchio` normalizes.
* **floating base**: soagen's spatial vectors are ``[angular; linear]``, so a
  floating joint's velocity is ``[ω; v]`` (body frame) and its torque the
  wrench ``[n; f]``; Pinocchio's free-flyer uses ``[v; ω]`` and ``[f; n]``.
  With P the permutation swapping the first two 3-blocks of every floating
  joint (P = Pᵀ = P⁻¹): ``v_pin = P v``, ``a_pin = P a``, ``tau_pin = P tau``,
  ``M_pin = P M P``, and a Jacobian in LOCAL_WORLD_ALIGNED (rows ``[v; ω]``)
  is ``J_pin = S J P`` with S swapping the row blocks of every tip.

Accelerations agree: both take the derivative of the body-frame velocity
(the classical acceleration of the base origin is R(a_lin + ω × v)).
"""
from __future__ import annotations

import numpy as np

from soagen.model.robot import FLOATING


def _velocity_permutation(robot):
    """Index array p with ``v_pin = v[p]`` (and ``v = v_pin[p]``: p is an involution)."""
    p = np.arange(robot.nv)
    for k, b in enumerate(robot.bodies):
        if b.joint_type == FLOATING:
            s = robot.vslice(k).start
            p[s:s + 3], p[s + 3:s + 6] = np.arange(s + 3, s + 6), np.arange(s, s + 3)
    return p


def q_to_pinocchio(robot, q):
    """Pinocchio's q (nq,): every quaternion normalized."""
    out = np.array(q, float)
    for k, b in enumerate(robot.bodies):
        if b.nq > 1:
            s = robot.qslice(k)
            quat = out[s][-4:]
            out[s.stop - 4:s.stop] = quat / np.linalg.norm(quat)
    return out


def v_to_pinocchio(robot, v):
    """Velocity, acceleration or torque (nv,) in Pinocchio's order."""
    return np.asarray(v, float)[_velocity_permutation(robot)]


def v_from_pinocchio(robot, v):
    """Inverse of :func:`v_to_pinocchio` (the same permutation)."""
    return np.asarray(v, float)[_velocity_permutation(robot)]


def matrix_from_pinocchio(robot, M):
    """M, M⁻¹ (nv, nv) from Pinocchio's order: ``P M_pin P``."""
    p = _velocity_permutation(robot)
    return np.asarray(M, float)[np.ix_(p, p)]


def jacobian_from_pinocchio(robot, J_tips):
    """soagen's J (r, nv) from Pinocchio's LOCAL_WORLD_ALIGNED frame Jacobians,
    one (6, nv) per tip with rows ``[v; ω]`` (a point tip keeps the rows ``v``)."""
    p = _velocity_permutation(robot)
    return np.vstack([np.vstack([J[3:], J[:3]])[list(t.rows)][:, p] for J, t in zip(J_tips, robot.tips)])


def centroidal_from_pinocchio(robot, Ag):
    """soagen's centroidal momentum matrix (6, nv), rows [angular about the centre of mass; linear],
    from Pinocchio's ``ccrba`` (rows [linear; angular], its velocity order); also for ``dccrba``'s Ȧ_G."""
    return np.vstack([Ag[3:], Ag[:3]])[:, _velocity_permutation(robot)]
